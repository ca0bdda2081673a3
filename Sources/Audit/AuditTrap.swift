// The seam every audit trap plugs into, and the list of traps a run sets. Adding a trap is one
// file under Traps/, one case in `AuditTrapID` and one line in `AuditTraps.all`.
import FoundationGaps
import Lab

/// One trap of `ipdirect audit`: names arranged in the lab to catch one integration mistake, and
/// the verdict the lab's ledger gives on what the app did with them.
public protocol AuditTrap: Sendable {
    var id: AuditTrapID { get }
    /// One sentence of what the trap exercises.
    var exercises: String { get }
    /// One sentence of what the app is to do with the trap's URL (its page says it too).
    var asks: String { get }
    /// The names the trap needs the lab to serve (the first is the one the app is given).
    func names(_ run: AuditNames) -> [LabExtraName]
    /// The verdict on the evidence; `not exercised` when the app never touched the trap.
    func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding
}

/// The traps a run sets, in report order.
public enum AuditTraps {
    public static let all: [any AuditTrap] = [
        WrongNameTrap(),
        UntrustedTrap(),
        ExpiredTrap(),
        SNITrap(),
        HostTrap(),
        PostBodyTrap(),
        RedirectTrap(),
        FallbackTrap(),
        FallbackTrap(timesOut: true),
        TTLTrap(),
        CookieTrap(),
        FamilyTrap(),
        ProxyTrap(),
    ]
}

/// The names of one run: `LABEL.TOKEN.audit.lab.test`, unique to the run, and the addresses the
/// traps may answer (several on loopback, so a connection's address tells which answer it used).
public struct AuditNames: Sendable {
    /// The run's token: eight hex digits.
    public var token: String
    /// The lab's listen address.
    public var listen: String

    public init(token: String, listen: String) {
        self.token = token
        self.listen = listen
    }

    /// A fresh token.
    public static func newToken() -> String { String(cFormat: "%08x", UInt32.random(in: 0...UInt32.max)) }

    /// The name of a trap, or of another name a trap uses (`label`).
    public func name(_ label: String) -> String { "\(label).\(token).audit.lab.test" }

    /// The name of a trap.
    public func name(_ trap: AuditTrapID) -> String { name(trap.rawValue) }

    /// Whether the run is on loopback, where 127.0.0.0/8 gives a trap several addresses.
    public var onLoopback: Bool { listen == "127.0.0.1" }

    /// Whether the run listens where others may reach it (not 127.0.0.0/8, not ::1): then the lab
    /// serves the run's names alone.
    public var beyondLoopback: Bool { !(listen.hasPrefix("127.") || listen == "::1") }

    /// A zone record for `name` answering the listen address, with `ttl`.
    func record(_ name: String, ttl: Int = 60, ipv4: [String]? = nil) -> LabZoneRecord {
        let v6 = listen.contains(":")
        return LabZoneRecord(
            name: name, ipv4: ipv4 ?? (v6 ? [] : [listen]), ipv6: v6 ? [listen] : [], ttl: ttl)
    }
}

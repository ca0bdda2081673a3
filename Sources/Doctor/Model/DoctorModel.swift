// What `ipdirect doctor` answers: one finding per check (pass, warn, fail or skipped, with a
// sentence of what was seen and one of what to do) and the report that holds them, as JSON.

import FoundationEssentials

/// The checks the doctor runs, in the order a report lists them. The raw value is the stable
/// `check` field of the JSON report.
public enum DoctorCheckID: String, Sendable, Codable, CaseIterable, Comparable {
    /// The machine's addresses and routes, NAT64/DNS64, what the SDKs' stack detection decides.
    case ipStack = "ip-stack"
    /// Proxy variables and /etc/resolv.conf.
    case proxiesAndResolvers = "proxies-and-resolvers"
    /// Every service address the provider would use, over HTTP and HTTPS.
    case serviceReachability = "service-reachability"
    /// This machine's clock against the service's, and the signed request's window.
    case clock
    /// Unsigned and signed requests, the cipher, a canary name resolved end to end.
    case account
    /// UDP and TCP 53 to the system resolver and the DNS server, DoH where configured.
    case dnsPaths = "dns-paths"
    /// The client address the service reports against the machine's own.
    case clientAddress = "client-address"
    /// A request whose answer is known comes back altered (captive portal, transparent proxy).
    case interception

    /// The check's name as a row shows it.
    public var title: String {
        switch self {
        case .ipStack: return "IP stack"
        case .proxiesAndResolvers: return "Proxies and resolvers"
        case .serviceReachability: return "Service reachability"
        case .clock: return "Clock"
        case .account: return "Account"
        case .dnsPaths: return "DNS paths"
        case .clientAddress: return "Client address"
        case .interception: return "Interception"
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// How a check came out, from best to worst.
public enum DoctorStatus: String, Sendable, Codable, CaseIterable, Comparable {
    case pass, skipped, warn, fail

    /// The exit code of a run whose worst status this is: 0 pass (or skipped), 1 warn, 3 fail;
    /// `ipdirect doctor` and `ipdirect audit` end with it.
    public var exitCode: Int32 {
        switch self {
        case .pass, .skipped: return 0
        case .warn: return 1
        case .fail: return 3
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// One line of what a check sent or saw, in the probe detail's trace style.
public struct DoctorTraceLine: Sendable, Codable, Equatable {
    /// Which way the line went.
    public enum Direction: String, Sendable, Codable {
        /// A request or query the check sent (`>` in a view).
        case sent
        /// What came back (`<`).
        case seen
        /// The check's own reading (`*`).
        case note
    }

    public var direction: Direction
    /// The text as seen; views sanitize it again, since it may quote a server.
    public var text: String

    public init(_ direction: Direction, _ text: String) {
        self.direction = direction
        self.text = text
    }
}

/// One check's answer.
public struct DoctorFinding: Sendable, Codable, Equatable {
    public var check: DoctorCheckID
    public var status: DoctorStatus
    /// One sentence of what was seen.
    public var seen: String
    /// One sentence of what to do; nil when the check passed.
    public var advice: String?
    /// What was sent and seen, line by line.
    public var trace: [DoctorTraceLine]
    /// Shell commands that reproduce what the check did (curl, dig), secrets left out.
    public var reproduce: [String]
    /// How long the check took, in milliseconds.
    public var durationMs: Double

    public init(
        check: DoctorCheckID, status: DoctorStatus, seen: String, advice: String? = nil,
        trace: [DoctorTraceLine] = [], reproduce: [String] = [], durationMs: Double = 0
    ) {
        self.check = check
        self.status = status
        self.seen = seen
        self.advice = advice
        self.trace = trace
        self.reproduce = reproduce
        self.durationMs = durationMs
    }
}

/// A whole run: every check's finding, in check order.
public struct DoctorReport: Sendable, Codable, Equatable {
    /// The report format's version, raised when a field changes meaning.
    public var version = 1
    public var startedAt: Date
    /// How long the whole run took, in milliseconds.
    public var durationMs: Double
    /// The provider and where it points, never a secret.
    public var provider: String
    public var findings: [DoctorFinding]
    /// The `--host` names' probes, in the order given; empty without `--host`.
    public var hosts: [DoctorHostProbe]

    public init(
        startedAt: Date, durationMs: Double, provider: String, findings: [DoctorFinding],
        hosts: [DoctorHostProbe] = []
    ) {
        self.startedAt = startedAt
        self.durationMs = durationMs
        self.provider = provider
        self.findings = findings.sorted { $0.check < $1.check }
        self.hosts = hosts
    }

    /// The worst status of any finding or host probe; pass for an empty report.
    public var worst: DoctorStatus { (findings.map(\.status) + hosts.map(\.status)).max() ?? .pass }

    /// The exit code `ipdirect doctor` ends with: 0 all pass (or skipped), 1 some warn, 3 some fail
    /// (a `--host` with no working technique is a fail). (2 is bad usage, decided before any check runs.)
    public var exitCode: Int32 { worst.exitCode }
}

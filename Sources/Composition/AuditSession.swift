// An audit run: the lab started with every trap's names (loopback unless told), the setup an app
// needs, and the report the traps give on the lab's ledger. `ipdirect audit` and the tests use it.
import Audit
import CurlTransport
import FoundationEssentials
import Lab

/// A running audit. Start one with `start`, read `report()` when the app is done, then `shutdown()`.
public final class AuditSession: Sendable {
    /// What the app under audit needs.
    public let setup: AuditSetup
    /// The lab the traps live in.
    public let lab: Lab
    private let names: AuditNames
    private let traps: [any AuditTrap]
    private let startedAt: Date
    private let started: ContinuousClock.Instant

    private init(setup: AuditSetup, lab: Lab, names: AuditNames, traps: [any AuditTrap]) {
        self.setup = setup
        self.lab = lab
        self.names = names
        self.traps = traps
        startedAt = Date()
        started = .now
    }

    /// Starts the lab in audit mode: its own servers, plus every trap's names and origins.
    ///
    /// - Parameters:
    ///   - listen: the address everything listens on (loopback by default); beyond loopback the lab
    ///     serves the traps' names alone (no bundled name, no fault switch).
    ///   - stateDirectory: where `ca.pem` and `ca.der` go; nil for a temporary directory.
    ///   - token: the run's token; nil for a fresh one.
    ///   - traps: the traps to set; every one by default.
    /// - Throws: `LabError` when the lab cannot start (a port taken, an address not this machine's).
    public static func start(
        listen: String = "127.0.0.1", stateDirectory: String? = nil, token: String? = nil,
        traps: [any AuditTrap] = AuditTraps.all
    ) async throws -> AuditSession {
        let names = AuditNames(token: token ?? AuditNames.newToken(), listen: listen)
        var options = LabOptions(stateDirectory: stateDirectory)
        options.listenAddress = listen
        options.extraNames = traps.flatMap { $0.names(names) }
        // Beyond loopback everyone on the network reaches what listens: the trap names alone.
        options.servesOnlyExtraNames = names.beyondLoopback
        options.recordingProxy = true
        let lab = try await Lab.start(options)
        return AuditSession(
            setup: AuditSetup.make(lab.endpoints, names: names, traps: traps), lab: lab, names: names, traps: traps)
    }

    /// The traps' verdicts on what the lab's ledger holds now.
    public func report() -> AuditReport {
        let evidence = AuditEvidence(
            queries: lab.httpdnsQueries(), dnsQueries: lab.dnsQueries(), handshakes: lab.tlsHandshakes(),
            requests: lab.originRequests(), tunnels: lab.proxyTunnels(), urls: lab.endpoints.hosts, startedAt: startedAt
        )
        return AuditReport(
            token: names.token, startedAt: startedAt, durationMs: (ContinuousClock.now - started).inSeconds * 1000,
            findings: traps.map { $0.judge(evidence, names) })
    }

    /// Stops the lab and frees its ports.
    public func shutdown() async throws { try await lab.shutdown() }
}

// The seam between the console and the engine: what the console asks for and what it hears
// back. Composition's LiveConsoleEngine puts the real probe engine, resolver cache and lab behind it.
import Audit
import Doctor
import FoundationEssentials
import LabFaults
import NameResolution
import Probe

/// The lab's fault switch as the console shows it: the lab's own `HTTPDNSFault`, not a copy.
public typealias LabFault = HTTPDNSFault

extension HTTPDNSFault {
    /// The next setting in the cycle the key walks through.
    public var next: HTTPDNSFault {
        let all = Self.allCases
        return all[((all.firstIndex(of: self) ?? 0) + 1) % all.count]
    }
}

/// Who the console talks to, for the status bar.
public struct EngineDescription: Sendable, Equatable {
    public var provider: String
    public var endpoint: String
    /// Whether the lab runs in-process (the fault switch is then available).
    public var lab: Bool
    /// The resolver's settings at start, which the cache view then toggles.
    public var family: AddressFamily
    public var reuseExpired: Bool
    /// The names the lab suggests trying first (its zone's), shown before the first probe.
    public var labExamples: [LabNameExample]

    public init(
        provider: String, endpoint: String, lab: Bool, family: AddressFamily = .auto, reuseExpired: Bool = false,
        labExamples: [LabNameExample] = []
    ) {
        self.provider = provider
        self.endpoint = endpoint
        self.lab = lab
        self.family = family
        self.reuseExpired = reuseExpired
        self.labExamples = labExamples
    }
}

/// The engine as the console uses it. Every call may take time; none runs on the screen's thread.
public protocol ConsoleEngine: Sendable {
    var description: EngineDescription { get }
    /// Probes a host or URL with every scenario: the engine's own events, in the order they
    /// happen; the stream ends after `.finished` or `.rejected`.
    func probe(_ target: String) -> AsyncStream<ProbeEvent>
    /// A copy of the resolver cache.
    func cacheEntries() async -> [CacheEntrySnapshot]
    /// The resolver's events from now on.
    func resolverEvents() -> AsyncStream<ResolverEvent>
    /// Drops one name (or every name, with nil) from the cache.
    func flush(_ host: String?) async
    /// Asks HTTPDNS again for one name.
    func refresh(_ host: String) async
    func setFamily(_ family: AddressFamily) async
    func setReuseExpired(_ enabled: Bool) async
    /// Switches the lab's fault; returns the setting now in force, nil without a lab.
    func setLabFault(_ fault: LabFault) async -> LabFault?
    /// Writes the reports (each with the attempts listed) as JSON Lines and HAR next to
    /// `basePath`, which has no extension.
    ///
    /// - Returns: the paths written.
    /// - Throws: an error whose description a person reads when a file cannot be written.
    func export(_ reports: [URLReport], basePath: String) async throws -> [String]
    /// Times a TCP connect to every address of a host and ranks them as the SDKs do (`IPRanking`).
    ///
    /// - Parameters:
    ///   - resolution: both answers for the host.
    ///   - port: the URL's port.
    ///   - attempts: the last probe's attempts, to say which scenario used which address.
    /// - Returns: the ranking.
    func rankIPs(_ resolution: HostResolution, port: Int, attempts: [Attempt]) async -> IPRanking
    /// Probes one technique against one address of the target's host, whatever the resolvers say.
    func probe(_ target: String, scenario: Scenario, ip: IPAddress) -> AsyncStream<ProbeEvent>
    /// Writes watch rounds as JSON Lines, one round a line (what `probe --watch` prints).
    ///
    /// - Returns: the path written.
    /// - Throws: an error whose description a person reads when the file cannot be written.
    func exportWatch(_ rounds: [WatchRound], path: String) async throws -> String
    /// Asks every configured provider (`[[providers]]`, the lab's four with `--lab`) and the
    /// system column for `host` at once; no providers gives a comparison with no rows.
    func compareProviders(_ host: String) async -> ProviderComparison
    /// Runs every doctor check (`DoctorRunner`) against the session's provider, and the lab's
    /// facts with `--lab`, within the run's bound.
    ///
    /// - Parameter progress: called with each finding as its check ends, from any thread.
    /// - Returns: the report, every check in it.
    func doctor(progress: @escaping @Sendable (DoctorFinding) -> Void) async -> DoctorReport
    /// Writes the doctor's report as JSON (`DoctorReport.json`, what `doctor --format json` prints).
    ///
    /// - Returns: the path written.
    /// - Throws: an error whose description a person reads when the file cannot be written.
    func exportDoctor(_ report: DoctorReport, path: String) async throws -> String
    /// Starts `ipdirect audit`'s traps in a lab of their own on loopback, beside the session, or
    /// answers the audit already started.
    ///
    /// - Returns: what an app under audit needs (endpoints, CA, token, trap URLs).
    /// - Throws: an error whose description a person reads when the audit's lab cannot start.
    func startAudit() async throws -> AuditSetup
    /// The traps' verdicts on what the audit's lab has seen so far; nil before `startAudit`.
    func auditReport() async -> AuditReport?
}

/// The audit asked of an engine that runs none.
public struct AuditUnavailable: Error, CustomStringConvertible {
    public var description: String { "this console runs no audit" }
}

extension ConsoleEngine {
    /// An engine that runs no audit.
    public func startAudit() async throws -> AuditSetup { throw AuditUnavailable() }
    public func auditReport() async -> AuditReport? { nil }

    /// An engine with no providers to compare.
    public func compareProviders(_ host: String) async -> ProviderComparison {
        ProviderComparison(host: host, system: SystemAnswer(error: "not asked"), providers: [])
    }
}

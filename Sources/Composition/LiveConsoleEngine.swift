// The real engine behind the console's seam: probes through `ProbeEngine`, names through the
// session's resolver cache, faults through its in-process lab, exports to files.
import Audit
import ConfigurationSources
import Console
import Doctor
import FoundationEssentials
import FoundationGaps
import Lab
import LabFaults
import NameResolution
import Probe

/// The real engine behind the console: probes through `ProbeEngine`, names through the
/// `ResolverCache`, faults through the in-process `Lab`.
public final class LiveConsoleEngine: ConsoleEngine {
    public let description: EngineDescription
    let cache: ResolverCache
    let prober: ProbeEngine
    private let lab: Lab?
    let session: ResolverSession
    /// The providers the compare view asks, built once from `[[providers]]` (or the lab's).
    private let compared: [ComparedProvider]
    /// The hosts probed in this session, in order, each once: the doctor view's `--host` names.
    private let probedHosts = Locked([String]())
    /// The audit started from the console's audit view (`A`), at most one a session.
    private let audit = Locked<Task<AuditSession, any Error>?>(nil)

    /// The engine of `session`, probing with `options`.
    public init(session: ResolverSession, probeOptions options: ProbeOptions) {
        self.session = session
        cache = session.cache
        prober = session.probeEngine(options)
        lab = session.lab
        compared = ComparedProvider.build(session.configuration.providers, base: session.configuration.resolver)
        let configuration = session.configuration
        description = EngineDescription(
            provider: session.cache.provider.name, endpoint: configuration.effectiveEndpoint ?? "system DNS",
            lab: session.lab != nil, family: configuration.family, reuseExpired: configuration.reuseExpired,
            labExamples: session.lab == nil ? [] : ((try? Lab.examples()) ?? []))
    }

    public func probe(_ text: String) -> AsyncStream<ProbeEvent> {
        if let host = try? ProbeURL.parse(text).host {
            probedHosts.withLock { if !$0.contains(host) { $0.append(host) } }
        }
        return prober.probe(session.labTarget(text))
    }

    public func cacheEntries() async -> [CacheEntrySnapshot] { cache.entries() }

    public func compareProviders(_ host: String) async -> ProviderComparison {
        let configuration = cache.configuration
        return await ProviderComparison.run(
            host, providers: compared, system: SystemResolver(dnsServer: configuration.dnsServer),
            families: configuration.family.concrete(), timeout: .seconds(configuration.timeout))
    }
    public func resolverEvents() -> AsyncStream<ResolverEvent> { cache.events() }
    public func flush(_ host: String?) async { cache.flush(host) }
    public func refresh(_ host: String) async { await cache.refresh(host) }
    public func setFamily(_ family: AddressFamily) async { cache.setFamily(family) }
    public func setReuseExpired(_ enabled: Bool) async { cache.setReuseExpired(enabled) }

    public func setLabFault(_ fault: LabFault) async -> LabFault? {
        guard let lab else { return nil }
        try? await lab.setFault(fault)  // the console shows the fault in force, whatever happened
        return lab.fault
    }

    public func export(_ reports: [URLReport], basePath: String) async throws -> [String] {
        let files = [(basePath + ".jsonl", ReportWriter.Format.jsonLines), (basePath + ".har", .har)]
        for (path, format) in files {
            let writer: ReportWriter
            do {
                writer = try ReportWriter(format, path: path)
            } catch {
                throw ExportError(path: path, reason: error.reason)
            }
            for report in reports { writer.record(report) }
            await writer.finish(within: .seconds(1))
            if let failure = writer.failure { throw ExportError(path: path, reason: failure) }
        }
        return files.map(\.0)
    }
}

extension LiveConsoleEngine {
    public func rankIPs(_ resolution: HostResolution, port: Int, attempts: [Attempt]) async -> IPRanking {
        await IPRanking.rank(resolution, port: port, attempts: attempts)
    }

    public func probe(_ target: String, scenario: Scenario, ip: IPAddress) -> AsyncStream<ProbeEvent> {
        let text = session.labTarget(target)
        var options = prober.options
        options.scenarios = [scenario]
        options.allIPs = false
        // The target's host answers with the chosen address only; other hosts (a redirect's)
        // resolve as usual.
        guard let host = (try? ProbeURL.parse(text))?.host else { return session.probeEngine(options).probe(text) }
        return session.probeEngine(options, pinning: [host: [ip]], by: "chosen in the IP view").probe(text)
    }

    public func doctor(progress: @escaping @Sendable (DoctorFinding) -> Void) async -> DoctorReport {
        // Bounded as `ipdirect doctor` is by default; the hosts probed so far are its --host names,
        // so a hijack the probe found is held against HTTPDNS here too.
        await session.runDoctor(
            hosts: probedHosts.withLock { $0 }, budget: .seconds(ResolverSession.defaultDoctorWithin),
            voice: .console, progress: progress)
    }

    public func exportDoctor(_ report: DoctorReport, path: String) async throws -> String {
        do {
            try PrivateFile.write(report.json(), to: path)
        } catch {
            throw ExportError(path: path, reason: error.description)
        }
        return path
    }

    public func exportWatch(_ rounds: [WatchRound], path: String) async throws -> String {
        var data = Data()
        for round in rounds { data.append(round.jsonLine()) }
        do {
            try PrivateFile.write(data, to: path)
        } catch {
            throw ExportError(path: path, reason: error.description)
        }
        return path
    }
}

extension LiveConsoleEngine {
    public func startAudit() async throws -> AuditSetup {
        let task = audit.withLock { current in
            if let current { return current }
            let started = Task { try await AuditSession.start() }
            current = started
            return started
        }
        do {
            return try await task.value.setup
        } catch {
            audit.withLock { $0 = nil }  // a later A tries again (a port may be free by then)
            throw error
        }
    }

    public func auditReport() async -> AuditReport? {
        guard let task = audit.withLock({ $0 }), let session = try? await task.value else { return nil }
        return session.report()
    }

    /// Stops what the console started beside the session (the audit's lab), freeing its ports.
    public func close() async {
        guard let task = audit.withLock({ $0 }), let session = try? await task.value else { return }
        try? await session.shutdown()
    }
}

/// An export file that could not be written.
public struct ExportError: Error, CustomStringConvertible {
    /// The file.
    public var path: String
    /// Why, as the system or the writer said it.
    public var reason: String
    public var description: String { "cannot write \(path): \(reason)" }
}

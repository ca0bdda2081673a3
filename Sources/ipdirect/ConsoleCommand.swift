// `ipdirect [console]`: the interactive console (the default subcommand), and the adapter that
// puts the real engine (probe engine, resolver cache, lab) behind the console's seam.
import ArgumentParser
import ConfigurationSources
import Console
import Doctor
import Foundation
import Lab
import NameResolution
import Probe

struct ConsoleCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "console", abstract: "The interactive console (the default).",
        discussion: """
            Press p, type a host or URL and press Enter to probe it every IP-direct way. Views: 1 probe, \
            2 cache, 3 traces, 4 events, 5 or ? help (every key). q quits. e exports the traces to \
            export_dir (the configuration; the working directory by default). D opens the doctor: every \
            check of 'ipdirect doctor', filled in as each ends. Needs a terminal; for scripts use \
            'ipdirect probe URL...'.
            """)

    static let examples: [(command: String, shows: String)] = [
        ("ipdirect --lab", "The console against the lab: type hijacked.lab.test and press Enter."),
        (
            "ipdirect console --provider alicloud --account 100000",
            "Against Alibaba Cloud HTTPDNS (the secret from IPDIRECT_HTTPDNS_SECRET)."
        ),
        ("NO_COLOR=1 ipdirect --lab", "The same without colours."),
    ]

    @OptionGroup var provider: ProviderOptions

    @Flag(help: "Draw without colors (also when NO_COLOR is set).")
    var noColor = false

    @Option(help: ArgumentHelp("How many request traces to keep; the oldest are dropped first.", valueName: "N"))
    var maxTraces = ConsoleOptions.defaultMaxTraces

    @Option(
        help: ArgumentHelp(
            "How many of the newest traces keep headers, certificates and curl's log; older ones keep their summary and timings.",
            valueName: "N"))
    var maxTraceDetails = ConsoleOptions.defaultMaxTraceDetails

    @Option(help: RequestOptionHelp.cacert)
    var cacert: String?

    @OptionGroup var requestTimeout: ProbeTimeoutOption

    func validate() throws {
        guard maxTraces >= 1 && maxTraces <= 10_000_000 else {
            throw ValidationError("--max-traces must be between 1 and 10000000")
        }
        guard maxTraceDetails >= 1 else { throw ValidationError("--max-trace-details must be at least 1") }
    }

    func run() async throws {
        guard ConsoleSession.hasTerminal else { throw UsageError("\(ConsoleStartError.notATerminal)") }
        let originCA = try CAFileOption.origin(cacert: cacert)
        let session = try await provider.start()
        let keyMap: KeyMap
        do {
            keyMap = try KeyMap.remapped(session.configuration.console.keys)
        } catch {
            await session.close()
            throw UsageError(error.description)
        }
        let theme = ConsoleTheme.resolve(
            session.configuration.console.theme, environment: ProcessInfo.processInfo.environment)
        var options = ProbeOptions(timeout: .seconds(requestTimeout.probeTimeout ?? ProbeTimeoutOption.defaultSeconds))
        // The lab's CA stands alone (its names are all the console probes then), as in the agent.
        options.caFile = session.lab?.endpoints.ca ?? originCA?.path
        options.caFileAddsToSystem = session.lab == nil && originCA?.addsToSystem == true
        options.secretNames = RedactionNames(adding: session.configuration.redact)
        let cache = session.cache
        let engine = LiveConsoleEngine(
            session: session, probe: ProbeEngine(resolve: { await cache.resolve($0) }, options: options))
        let stoppedBy: Int32?
        do {
            stoppedBy = try await ConsoleSession.run(
                engine: engine,
                options: ConsoleOptions(
                    useColor: !noColor && !ConsoleOptions.environmentForbidsColor, maxTraces: maxTraces,
                    maxTraceDetails: maxTraceDetails, keyMap: keyMap, theme: theme,
                    exportDirectory: session.configuration.console.exportDirectory))
        } catch {
            await session.close()
            throw error
        }
        await session.close()
        // Stopped by a signal: exit as a shell expects.
        if let stoppedBy { Foundation.exit(ExitStatus.stopped(by: stoppedBy)) }
    }
}

/// The real engine behind the console: probes through `ProbeEngine`, names through the
/// `ResolverCache`, faults through the in-process `Lab`.
final class LiveConsoleEngine: ConsoleEngine {
    let description: EngineDescription
    let cache: ResolverCache
    let prober: ProbeEngine
    private let lab: Lab?
    let session: ResolverSession
    /// The providers the compare view asks, built once from `[[providers]]` (or the lab's).
    private let compared: [ComparedProvider]
    /// The hosts probed in this session, in order, each once: the doctor view's `--host` names.
    private let probedHosts = Locked([String]())

    init(session: ResolverSession, probe: ProbeEngine) {
        self.session = session
        cache = session.cache
        prober = probe
        lab = session.lab
        compared = ComparedProvider.build(session.configuration.providers, base: session.configuration.resolver)
        let configuration = session.configuration
        description = EngineDescription(
            provider: session.cache.provider.name, endpoint: configuration.effectiveEndpoint ?? "system DNS",
            lab: session.lab != nil, family: configuration.family, reuseExpired: configuration.reuseExpired,
            labExamples: session.lab == nil ? [] : ((try? Lab.examples()) ?? []))
    }

    func probe(_ text: String) -> AsyncStream<ProbeEvent> {
        if let host = try? ProbeURL.parse(text).host {
            probedHosts.withLock { if !$0.contains(host) { $0.append(host) } }
        }
        return prober.probe(session.labTarget(text))
    }

    func cacheEntries() async -> [CacheEntrySnapshot] { cache.entries() }

    func compareProviders(_ host: String) async -> ProviderComparison {
        let configuration = cache.configuration
        return await ProviderComparison.run(
            host, providers: compared, system: SystemResolver(dnsServer: configuration.dnsServer),
            families: configuration.family.concrete(), timeout: .seconds(configuration.timeout))
    }
    func resolverEvents() -> AsyncStream<ResolverEvent> { cache.events() }
    func flush(_ host: String?) async { cache.flush(host) }
    func refresh(_ host: String) async { await cache.refresh(host) }
    func setFamily(_ family: AddressFamily) async { cache.setFamily(family) }
    func setReuseExpired(_ enabled: Bool) async { cache.setReuseExpired(enabled) }

    func setLabFault(_ fault: LabFault) async -> LabFault? {
        guard let lab else { return nil }
        try? await lab.setFault(fault)  // the console shows the fault in force, whatever happened
        return lab.fault
    }

    func export(_ reports: [URLReport], basePath: String) async throws -> [String] {
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
    func rankIPs(_ resolution: HostResolution, port: Int, attempts: [Attempt]) async -> IPRanking {
        await IPRanking.rank(resolution, port: port, attempts: attempts)
    }

    func probe(_ target: String, scenario: Scenario, ip: IPAddress) -> AsyncStream<ProbeEvent> {
        let text = session.labTarget(target)
        let host = (try? ProbeURL.parse(text))?.host
        let cache = self.cache
        // The target's host answers with the chosen address only; other hosts (a redirect's)
        // resolve as usual.
        let pinned: HostResolver = { name in
            guard name == host else { return await cache.resolve(name) }
            return PinnedAddress.resolution(of: name, to: [ip], by: "chosen in the IP view")
        }
        var options = prober.options
        options.scenarios = [scenario]
        options.allIPs = false
        return ProbeEngine(resolve: pinned, options: options).probe(text)
    }

    func doctor(progress: @escaping @Sendable (DoctorFinding) -> Void) async -> DoctorReport {
        // Bounded as `ipdirect doctor` is by default; the hosts probed so far are its --host names,
        // so a hijack the probe found is held against HTTPDNS here too.
        let context = session.doctorContext(
            hosts: probedHosts.withLock { $0 }, budget: .seconds(DoctorCommand.defaultWithin))
        return await DoctorRunner().run(context, provider: session.providerDescription, progress: progress)
    }

    func exportDoctor(_ report: DoctorReport, path: String) async throws -> String {
        do {
            try PrivateFile.write(report.json(), to: path)
        } catch {
            throw ExportError(path: path, reason: error.description)
        }
        return path
    }

    func exportWatch(_ rounds: [WatchRound], path: String) async throws -> String {
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

/// An export file that could not be written.
struct ExportError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "cannot write \(path): \(reason)" }
}

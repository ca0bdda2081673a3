// `ipdirect agent`: headless, probes a target list on an interval until SIGTERM/SIGINT, serving
// Prometheus /metrics, exporting OTLP traces and JSON Lines; SIGHUP re-reads the targets file.
import Agent
import ArgumentParser
import Composition
import ConfigurationSources
import FoundationEssentials
import Logging
import NameResolution
import Probe
import Signals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension AgentLogFormat: ExpressibleByArgument {}

struct AgentCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "agent", abstract: "Probe a target list on an interval; serve metrics, export traces.",
        discussion: """
            Runs until SIGTERM or SIGINT, which end it within a second (exporters flushed, exit 0). \
            Targets: URLs as arguments, or --input FILE in the probe --input format (one URL a line, \
            '#' comments), re-read when it changes and on SIGHUP; a file that is deleted or has a bad \
            line keeps the last good list, and the log says so. A line may set the URL's own settings \
            after it: scenario=direct-sni,direct-https method=HEAD header="X-A: b". The configuration \
            file's [[agent.targets]] tables (url, scenarios, method, headers) are probed too; a URL \
            in both takes the command line's or the file's settings.
            --metrics-listen HOST:PORT serves /metrics for Prometheus, and /probe?target=URL, which probes \
            that URL now and answers its series (blackbox_exporter's multi-target pattern; with no \
            targets of its own the agent only answers /probe); --otlp-endpoint URL sends each \
            probe as a trace over OTLP/HTTP protobuf; --jsonl FILE writes the records probe --format \
            jsonl writes, rotated past --rotate SIZE. Every metric and span carries the --label pairs.
            The log (standard error) has one line per event; --log-format json for a log shipper.
            """)

    static let examples: [(command: String, shows: String)] = [
        (
            "ipdirect agent --lab --interval 5 --metrics-listen 127.0.0.1:9464",
            "Every lab name every 5 s; curl 127.0.0.1:9464/metrics shows the results."
        ),
        (
            "ipdirect agent --lab --interval 5 --jsonl probes.jsonl https://sni-a.lab.test/",
            "One lab name, each round a JSON line in probes.jsonl."
        ),
        (
            "ipdirect agent --input targets.txt --otlp-endpoint http://127.0.0.1:4318",
            "Your targets, each probe a trace for an OpenTelemetry collector."
        ),
    ]

    @Argument(help: RequestOptionHelp.urls)
    var urls: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Read targets from FILE, one URL a line (with its own scenario=, method=, header=); re-read on change and on SIGHUP.",
            valueName: "FILE"))
    var input: String?

    @Option(name: .long, help: ArgumentHelp("Seconds from the start of one round to the next.", valueName: "SECONDS"))
    var interval: Double = AgentSchedule.standard.interval

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Each wait is longer or shorter by up to this fraction of the interval.", valueName: "FRACTION"))
    var jitter: Double = AgentSchedule.standard.jitter

    @Option(name: .long, help: ArgumentHelp("URLs probed at once.", valueName: "N"))
    var concurrency: Int = AgentSchedule.standard.concurrency

    @Option(name: .long, help: ArgumentHelp("A label for every metric and span (repeatable).", valueName: "NAME=VALUE"))
    var label: [String] = []

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus /metrics here.", valueName: "HOST:PORT"))
    var metricsListen: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --metrics-listen: /probe requests probed at once; the next is answered 503.", valueName: "N"))
    var probeConcurrency: Int = ProbeEndpointSettings.standard.concurrency

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --metrics-listen: what /probe may probe (repeatable). A host glob allows names, an address range addresses: a literal target, redirect or dns_server= needs a range, and what a name resolves to is held to the ranges when any are given. Link-local and metadata addresses only when named.",
            valueName: "CIDR|GLOB"))
    var probeAllow: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --metrics-listen: TLS and basic auth for the listener, in exporter-toolkit's format (tls_server_config, basic_auth_users with bcrypt hashes).",
            valueName: "FILE"))
    var webConfigFile: String?

    @Option(name: .long, help: ArgumentHelp("Send traces to this OTLP/HTTP collector.", valueName: "URL"))
    var otlpEndpoint: String?

    @Option(name: .long, help: ArgumentHelp("Write JSON Lines records to FILE.", valueName: "FILE"))
    var jsonl: String?

    @Option(
        name: .long,
        help: ArgumentHelp("With --jsonl: rotate the file past this size.", valueName: "SIZE"))
    var rotate: String = "100MB"

    @Option(name: .long, help: ArgumentHelp("Log lines as text or json.", valueName: "FORMAT"))
    var logFormat: AgentLogFormat = .text

    @Option(name: .long, help: RequestOptionHelp.scenario)
    var scenario: [Scenario] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "GET or HEAD (the agent never sends POST: it would repeat a change every round).", valueName: "METHOD"))
    var method: RequestMethod = .get

    @Option(name: [.customShort("H"), .long], help: RequestOptionHelp.header)
    var header: [String] = []

    @Option(name: .long, help: RequestOptionHelp.cacert)
    var cacert: String?

    @Flag(name: .long, help: "Keep Authorization, Cookie, Set-Cookie and other secrets in the exports.")
    var noRedact = false

    @OptionGroup var requestTimeout: ProbeTimeoutOption

    @OptionGroup(title: "Provider options")
    var providerOptions: ProviderOptions

    func validate() throws {
        guard interval >= 1 && interval <= 86_400 else {
            throw ValidationError("--interval must be between 1 and 86400 seconds")
        }
        guard jitter >= 0 && jitter < 1 else { throw ValidationError("--jitter must be at least 0 and below 1") }
        guard concurrency >= 1 && concurrency <= 4096 else {
            throw ValidationError("--concurrency must be between 1 and 4096")
        }
        guard probeConcurrency >= 1 && probeConcurrency <= 4096 else {
            throw ValidationError("--probe-concurrency must be between 1 and 4096")
        }
        if method == .post {
            throw ValidationError("the agent sends GET or HEAD; POST would repeat a change every round")
        }
        if let metricsListen, Self.listenAddress(metricsListen) == nil {
            throw ValidationError("--metrics-listen takes HOST:PORT (127.0.0.1:9464, [::1]:9464 or :9464)")
        }
    }

    /// `HOST:PORT`, `[V6]:PORT` or `:PORT` (all addresses).
    static func listenAddress(_ text: String) -> (host: String, port: Int)? {
        guard let (host, portText) = IPLiteral.splitHostPort(text), let port = portText.flatMap({ Int($0) }),
            (0...65_535).contains(port)
        else { return nil }
        return (host.isEmpty ? "0.0.0.0" : host, port)
    }

    func run() async throws {
        // Two malloc arenas, not glibc's eight per core: the agent's threads (the cooperative pool
        // grows past the cores while probes wait, NIO's loop, the transfer loop) each took one,
        // and their free space stayed resident: peak RSS under 100 /probe at once fell 72 -> 64 MB,
        // with no loss of speed measured (issue 34); one arena was slower.
        #if canImport(Glibc)
            // mallopt is in malloc.h, which the Glibc module leaves out: looked up by name.
            if let mallopt = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
                let setOption = unsafeBitCast(mallopt, to: (@convention(c) (Int32, Int32) -> Int32).self)
                _ = setOption(-8, 2)  // M_ARENA_MAX
            }
        #endif
        let (labels, rotateBytes) = try checkedSettings()
        let originCA = try CAFileOption.origin(cacert: cacert)
        LoggingSystem.bootstrap { _ in AgentLogHandler(format: logFormat) }
        let logger = Logger(label: "ipdirect.agent")
        var options = try probeOptions()

        let session: ResolverSession
        do {
            session = try await providerOptions.start()
        } catch let error as ValidationError {
            throw UsageError(error.message)
        }
        // --cacert adds to the system's CAs, as in probe; CURL_CA_BUNDLE and SSL_CERT_FILE replace them, as in curl.
        options = session.probeOptions(options, originCA: originCA)
        if session.lab != nil, cacert != nil {
            logger.warning("--cacert is not used with --lab: the lab's CA is trusted instead")
        }
        let cache = session.cache
        let engine = session.probeEngine(options)
        let source: AgentTargetSource
        let exporters: AgentExporters
        do {
            source = try targetSource(session)
            let probe = try metricsListen == nil ? nil : probeEndpoint(session, options: options)
            exporters = try await AgentExporters.start(
                self, labels: labels, rotateBytes: rotateBytes, probe: probe, logger: logger)
        } catch {
            await session.close()
            throw error
        }

        let agent = ProbeAgent(
            engine: engine, source: source,
            schedule: AgentSchedule(interval: interval, jitter: jitter, concurrency: concurrency),
            sinks: AgentSinks(metrics: exporters.metrics, exporters: exporters.reports), logger: logger)
        await Self.runUntilStopped(agent, counting: cache.events(), logger: logger)

        // Within the second a stop has: flush the exporters, close the listener, save the cache.
        await Deadline.first(within: .milliseconds(900)) {
            await agent.sinks.finish(within: .milliseconds(600))
            await exporters.server?.close()
            await session.close()
        }
        logger.info("agent stopped", metadata: ["event": "agent-stopped"])
        Glibc.exit(0)
    }

    /// The settings `validate()` cannot check without parsing them: labels and the rotation size,
    /// and the targets' form.
    ///
    /// - Returns: the labels and the size past which --jsonl rotates.
    /// - Throws: `UsageError` for a bad value.
    private func checkedSettings() throws -> ([AgentLabel], Int64) {
        let labels: [AgentLabel]
        do {
            labels = try label.map { text throws(AgentSettingError) in try AgentLabel(parsing: text) }
        } catch {
            throw UsageError(error.description)
        }
        if Set(labels.map(\.name)).count != labels.count { throw UsageError("--label names each label once") }
        let rotateBytes: Int64
        do {
            rotateBytes = try ByteSize.parse(rotate)
        } catch {
            throw UsageError(error.description)
        }
        if !urls.isEmpty && input != nil { throw UsageError("give URLs or --input FILE, not both") }
        if input == "-" {
            throw UsageError(
                "--input - cannot be reloaded on change or SIGHUP: give the agent a file (probe reads standard input)")
        }
        return (labels, rotateBytes)
    }

    /// How to probe: the command line's request options, the agent's bounds and its refusals.
    private func probeOptions() throws -> ProbeOptions {
        var options = ProbeOptions()
        if !scenario.isEmpty { options.scenarios = scenario }
        options.method = method
        do {
            options.headers = try header.map { line throws(TargetSettingError) in try HeaderField(parsing: line) }
        } catch {
            throw UsageError(error.reason)
        }
        options.timeout = requestTimeout.timeout(orResolutionTimeout: providerOptions.timeout)
        // Requests at once: room for every scenario of each URL under way.
        options.concurrency = concurrency * Scenario.allCases.count
        options.redact = !noRedact
        // Unattended, probing on others' word: a redirect to a metadata address is not followed.
        options.linkLocal = .refuse
        return options
    }

    /// What to probe: --input's file, the URLs, the configuration's targets, or the lab's names.
    ///
    /// - Throws: `UsageError` when there is no target or one is not usable.
    private func targetSource(_ session: ResolverSession) throws -> AgentTargetSource {
        do {
            let rewrite: @Sendable (String) -> String = session.labTarget
            let configured = try AgentTarget.configured(session.configuration.agent, rewrite: rewrite)
            if let input {
                return .file(try TargetsFile(path: input, rewrite: rewrite, configured: configured))
            } else if !urls.isEmpty {
                return .fixed(AgentTarget.merged(try urls.map { try AgentTarget(rewrite($0)) }, configured))
            } else if !configured.isEmpty {
                return .fixed(configured)
            } else if let labURLs = session.labURLs {
                return .fixed(try labURLs.map { try AgentTarget($0) })
            } else if metricsListen != nil {
                // A pure on-demand prober: Prometheus names the targets, through /probe.
                return .fixed([])
            }
            throw UsageError(
                "no target given (URLs, --input FILE, or [[agent.targets]] in the configuration file; or --metrics-listen alone, for /probe)"
            )
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("\(error)")
        }
    }

    /// What answers /probe: an engine of its own whose resolver keeps to --probe-allow (it probes on
    /// others' word), the configuration's modules, and the resolvers provider= and dns_server= pick.
    ///
    /// - Returns: the endpoint, made once the metrics it counts resource shortages in exist.
    /// - Throws: `UsageError` for a bad --probe-allow entry or module.
    private func probeEndpoint(
        _ session: ResolverSession, options: ProbeOptions
    ) throws -> @Sendable (AgentMetrics) -> ProbeEndpoint {
        let allow: ProbeAllowList
        let modules: [String: ProbeModule]
        do {
            allow = try ProbeAllowList(parsing: probeAllow)
            modules = try ProbeModule.configured(
                session.configuration.agent.modules, providers: session.configuration.providers.map(\.name))
        } catch {
            throw UsageError("\(error)")
        }
        let settings = ProbeEndpointSettings(
            concurrency: probeConcurrency, margin: ProbeEndpointSettings.standard.margin, timeout: options.timeout)
        // Its own multi loop: room for every scenario of each probe --probe-concurrency lets run
        // (the agent's --concurrency bounds its own rounds, not /probe's).
        var endpointOptions = options
        endpointOptions.concurrency = probeConcurrency * Scenario.allCases.count
        let probing = endpointOptions
        return { metrics in
            ProbeEndpoint(
                engine: ProbeEngine(resolve: allow.guarding(session.resolver), options: probing),
                settings: settings, modules: modules, allow: allow,
                resolvers: ProbeResolvers(configuration: session.configuration.resolver, allow: allow),
                rewrite: session.labTarget, metrics: metrics)
        }
    }

    /// Runs the agent until SIGINT or SIGTERM; SIGHUP re-reads its targets. Counts the resolver's
    /// events meanwhile.
    private static func runUntilStopped(
        _ agent: ProbeAgent, counting events: AsyncStream<ResolverEvent>, logger: Logger
    ) async {
        let counting = agent.countResolverEvents(events)
        let signals = try? SignalPipe(watching: [SIGINT, SIGTERM, SIGHUP])
        signals?.onSignal { number in
            if number == SIGHUP {
                agent.reload()
            } else {
                logger.info("signal \(number): stopping", metadata: ["event": "signal"])
                agent.stop()
            }
        }
        await agent.run()
        signals?.stop()
        counting.cancel()
    }
}

/// Where the agent's results go: metrics (served when --metrics-listen), traces, JSON Lines.
private struct AgentExporters {
    var metrics: AgentMetrics
    var server: MetricsServer?
    var tracing: AgentTracing?
    var jsonl: RotatingJSONL?

    /// The exporters each report goes to beside the metrics.
    var reports: [any ReportExporter] {
        let all: [(any ReportExporter)?] = [tracing, jsonl]
        return all.compactMap { $0 }
    }

    /// Starts what the command asks for; on failure, what was started is closed.
    ///
    /// - Throws: `UsageError` when a listener, collector or file cannot be set up.
    static func start(
        _ command: AgentCommand, labels: [AgentLabel], rotateBytes: Int64,
        probe: (@Sendable (AgentMetrics) -> ProbeEndpoint)?,
        logger: Logger
    ) async throws -> AgentExporters {
        var exporters = AgentExporters(metrics: AgentMetrics(labels: labels))
        let metrics = exporters.metrics
        do {
            if let metricsListen = command.metricsListen, let address = AgentCommand.listenAddress(metricsListen) {
                // The listener's connections come out of what RLIMIT_NOFILE leaves after probing.
                let reserve = MetricsListenerLimits.probingReserve(
                    urlsAtOnce: command.concurrency + command.probeConcurrency)
                let (limits, room) = MetricsListenerLimits.standard.leaving(reserve)
                let web = try command.webConfigFile.map { path throws(AgentSettingError) in
                    try ListenerWebConfig(file: path)
                }
                let server = try await MetricsServer(
                    host: address.host, port: address.port, limits: limits, metrics: metrics, logger: logger,
                    probe: probe?(metrics), web: web
                ) { metrics.exposition() }
                exporters.server = server
                logger.info(
                    "serving /metrics and /probe on \(IPLiteral.hostPort(address.host, port: server.port))",
                    metadata: [
                        "event": "metrics-listening", "connections": "\(limits.connections)", "reserve": "\(reserve)",
                    ])
                if let room, room < MetricsListenerLimits.standard.connections {
                    logger.warning(
                        "ulimit -n leaves /metrics \(max(room, 0)) connections beyond the \(reserve) descriptors kept for probing; it keeps \(limits.connections). Raise it (systemd: LimitNOFILE=) or lower --concurrency",
                        metadata: ["event": "metrics-listener-cramped"])
                }
            }
            if let otlpEndpoint = command.otlpEndpoint {
                let tracing = try AgentTracing(
                    endpoint: otlpEndpoint, labels: labels, metrics: metrics, logger: logger,
                    redact: !command.noRedact)
                exporters.tracing = tracing
                logger.info("sending traces to \(tracing.endpoint)", metadata: ["event": "otlp-exporting"])
            }
            if let jsonl = command.jsonl {
                exporters.jsonl = try RotatingJSONL(
                    path: jsonl, limit: rotateBytes, redact: !command.noRedact, metrics: metrics, logger: logger)
            }
        } catch {
            await exporters.server?.close()
            throw UsageError("\(error)")
        }
        return exporters
    }
}

// `GET /probe?target=...`: one probe now, answered as that probe's series (blackbox_exporter's
// multi-target pattern), within the scrape's budget and a bound on probes at once.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe
import Prometheus
import TerminalText

/// An answer of the listener: status, content type, body.
public struct EndpointAnswer: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Headers besides Content-Type and Content-Length (`WWW-Authenticate`).
    public var headers: [String: String]

    public init(status: Int, contentType: String, body: [UInt8], headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// The Prometheus text format's content type.
    public static let expositionType = "text/plain; version=0.0.4; charset=utf-8"

    /// A sentence, as plain text, with its line end.
    static func sentence(_ status: Int, _ text: String) -> EndpointAnswer {
        EndpointAnswer(status: status, contentType: "text/plain; charset=utf-8", body: Array("\(text)\n".utf8))
    }
}

/// How `/probe` spends time and how many it runs at once.
public struct ProbeEndpointSettings: Sendable, Equatable {
    /// Probes under way at once; the next is answered 503 at once (`--probe-concurrency`).
    public var concurrency: Int
    /// Taken off the scrape timeout Prometheus sends, so the answer arrives before it gives up.
    public var margin: Double
    /// The longest a probe may take, and its budget when the request names no scrape timeout.
    public var timeout: Double

    /// blackbox_exporter's margin; 16 probes at once; a probe request's own timeout.
    public static let standard = ProbeEndpointSettings(
        concurrency: 16, margin: 0.5, timeout: ProbeOptions.defaultTimeout.inSeconds)

    public init(concurrency: Int, margin: Double, timeout: Double) {
        self.concurrency = concurrency
        self.margin = margin
        self.timeout = timeout
    }

    /// - Parameter timeout: as `ProbeOptions.timeout` gives it.
    public init(concurrency: Int, margin: Double, timeout: Duration) {
        self.init(concurrency: concurrency, margin: margin, timeout: timeout.inSeconds)
    }

    /// The probe's budget: the scrape timeout less the margin, capped by `cap`; `cap` when the
    /// header is absent or not a number of seconds.
    ///
    /// - Parameters:
    ///   - header: `X-Prometheus-Scrape-Timeout-Seconds` as sent.
    ///   - cap: the module's timeout.
    func budget(header: String?, cap: Double) -> Double {
        guard let header, let scrape = Double(header.trimmingWhitespace()), scrape.isFinite,
            scrape > 0
        else { return cap }
        // A budget too short for any exchange still runs, and answers probe_success 0 in time.
        return max(min(scrape - margin, cap), 0.05)
    }
}

/// What a `/probe` request asks, read from its query string.
struct ProbeRequest: Equatable {
    var target: String
    var module: String?
    var scenarios: [Scenario] = []
    var allIPs: Bool?
    var provider: String?
    var dnsServer: String?
    var debug = false

    /// Reads the query of `uri`.
    ///
    /// - Throws: a sentence for a parameter missing, unknown or not understood.
    init(uri: String) throws(EndpointRefusal) {
        let items = URLComponents(string: uri)?.queryItems ?? []
        var target: String?
        for item in items {
            let value = item.value ?? ""
            switch item.name {
            case "target": target = value
            case "module": module = value
            case "scenario":
                do {
                    for scenario in try TargetSettings.scenario(value) where !scenarios.contains(scenario) {
                        scenarios.append(scenario)
                    }
                } catch {
                    throw EndpointRefusal(400, "scenario=: \(TerminalText.escaped(error.reason))")
                }
            case "all_ips": allIPs = try Self.flag(item.name, value)
            case "debug": debug = try Self.flag(item.name, value)
            case "provider": provider = value
            case "dns_server": dnsServer = value
            default:
                throw EndpointRefusal(
                    400,
                    "/probe takes target, module, scenario, provider, dns_server, all_ips and debug, not \(TerminalText.escaped(item.name))"
                )
            }
        }
        guard let target, !target.isEmpty else {
            throw EndpointRefusal(400, "/probe needs target=URL (a bare host means https://host/)")
        }
        self.target = target
    }

    private static func flag(_ name: String, _ value: String) throws(EndpointRefusal) -> Bool {
        switch value.lowercased() {
        case "", "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw EndpointRefusal(400, "\(name)= takes true or false, not \(TerminalText.escaped(value))")
        }
    }
}

/// A request `/probe` will not run, with its status and the sentence that says why.
///
/// The sentence is escaped here, where every refusal is made: it may quote what the request
/// said (`provider=`, `dns_server=`, a target), and a scraper's log or a curl in a terminal
/// shows the answer as it comes: one line, a line break in it escaped too. Escaping is
/// idempotent on text already escaped.
struct EndpointRefusal: Error {
    var answer: EndpointAnswer
    init(_ status: Int, _ sentence: String) { answer = .sentence(status, TerminalText.escaped(sentence)) }
}

/// Runs `/probe` requests through the agent's probe engine.
public final class ProbeEndpoint: Sendable {
    private let engine: ProbeEngine
    private let settings: ProbeEndpointSettings
    private let modules: [String: ProbeModule]
    private let allow: ProbeAllowList
    private let resolvers: ProbeResolvers?
    private let rewrite: @Sendable (String) -> String
    private let metrics: AgentMetrics?
    private let running = Locked(0)

    /// - Parameters:
    ///   - engine: the agent's engine; a request's overrides get one like it (same multi loop).
    ///   - settings: concurrency, margin and timeout.
    ///   - modules: what `module=` may name (`ProbeModule.configured`); `default` when absent.
    ///   - allow: what may be probed; the engine's resolver must be guarded by the same list
    ///     (`ProbeAllowList.guarding`), which this checks the target's own name or address against,
    ///     and which the engine asks at each redirect (a `Location` naming an address is resolved by
    ///     no resolver).
    ///   - resolvers: what `provider=` and `dns_server=` resolve through; nil refuses them.
    ///   - rewrite: applied to each target (the lab's port for a lab name).
    ///   - metrics: where a probe that could not start for want of a resource is counted.
    public init(
        engine: ProbeEngine, settings: ProbeEndpointSettings = .standard,
        modules: [String: ProbeModule] = [ProbeModule.standard.name: .standard],
        allow: ProbeAllowList = ProbeAllowList(),
        resolvers: ProbeResolvers? = nil,
        rewrite: @escaping @Sendable (String) -> String = { $0 }, metrics: AgentMetrics? = nil
    ) {
        self.engine = engine.with(destinations: allow)
        self.settings = settings
        self.modules = modules
        self.allow = allow
        self.resolvers = resolvers
        self.rewrite = rewrite
        self.metrics = metrics
    }

    /// Probes under way now.
    public var probesRunning: Int { running.withLock { $0 } }

    /// Answers one request to `/probe`.
    ///
    /// - Parameters:
    ///   - uri: the request's target, with its query.
    ///   - scrapeTimeout: the `X-Prometheus-Scrape-Timeout-Seconds` header, when sent.
    /// - Returns: the probe's series (200), its trace with `debug=true`, 400 for a request that
    ///   cannot be run, 503 when the probes at once are at their bound or the agent is short of a
    ///   resource.
    public func answer(uri: String, scrapeTimeout: String?) async -> EndpointAnswer {
        do {
            return try await run(try ProbeRequest(uri: uri), scrapeTimeout: scrapeTimeout)
        } catch {
            return error.answer
        }
    }

    private func run(_ request: ProbeRequest, scrapeTimeout: String?) async throws(EndpointRefusal) -> EndpointAnswer {
        let admitted = try admit(request, scrapeTimeout: scrapeTimeout)
        let started = ContinuousClock.now
        // The slot is held until the probe ends, not until its answer is sent: the bound is on
        // probes running, and one that missed its budget is still running.
        let running = running
        let engine = admitted.engine
        let target = admitted.target
        let report = await Deadline.first(within: admitted.limit) { () async -> URLReport? in
            defer { running.withLock { $0 -= 1 } }
            return await engine.report(target, emit: { _ in })
        }
        let seconds = started.duration(to: .now).inSeconds
        return try answer(
            report ?? nil, seconds: seconds, request: request, module: admitted.module, target: target,
            budget: admitted.budget)
    }

    /// What an admitted probe runs with.
    private struct Admission {
        var engine: ProbeEngine
        var module: ProbeModule
        var target: String
        var budget: Double
        var limit: Duration
    }

    /// Reads the request into the engine and budget its probe runs with, and takes a slot among
    /// the probes at once. Not async, so what it builds lives on the thread's stack for the moment
    /// it runs, not in the async frame every probe under way holds (issue 34: /probe's peak memory).
    @inline(never)
    private func admit(_ request: ProbeRequest, scrapeTimeout: String?) throws(EndpointRefusal) -> Admission {
        let name = request.module ?? ProbeModule.standard.name
        guard let module = modules[name] else {
            throw EndpointRefusal(
                400,
                "unknown module \(TerminalText.escaped(name)): this agent has \(modules.keys.sorted().joined(separator: ", ")) ([modules.NAME] in the configuration file)"
            )
        }
        let target = rewrite(request.target)
        let url: ProbeURL
        do {
            url = try ProbeURL.parse(target)
        } catch {
            throw EndpointRefusal(400, "target=\(TerminalText.escaped(request.target)): \(error.reason)")
        }
        if let reason = allow.refusal(host: url.host) {
            throw EndpointRefusal(403, "target=\(TerminalText.escaped(request.target)) refused: \(reason)")
        }
        let budget = settings.budget(header: scrapeTimeout, cap: module.timeout ?? settings.timeout)
        var options = module.settings.applied(to: engine.options)
        if let allIPs = module.allIPs { options.allIPs = allIPs }
        if !request.scenarios.isEmpty { options.scenarios = request.scenarios }
        if let allIPs = request.allIPs { options.allIPs = allIPs }
        // Neither the answer nor the debug trace shows a reproduce command.
        options.reproduceCommands = false
        // Only the debug trace shows curl's log; the series are read from the transfer itself.
        options.curlLog = request.debug
        // Each request is bounded by the budget too, so a probe that runs out ends soon after.
        let limit = Duration.milliseconds(Int64(budget * 1000))
        options.timeout = min(options.timeout, limit)
        let engine: ProbeEngine
        let provider = request.provider ?? module.provider
        if provider != nil || request.dnsServer != nil || module.dnsServer != nil {
            guard let resolvers else {
                throw EndpointRefusal(400, "this agent takes no provider= or dns_server=: it resolves its own way")
            }
            // The request's choice over the module's.
            let resolve =
                if let dnsServer = request.dnsServer {
                    try resolvers.resolver(provider: provider, dnsServer: dnsServer)
                } else {
                    try resolvers.resolver(provider: provider, dnsServer: module.dnsServer)
                }
            engine =
                resolve.map { self.engine.with(resolve: $0, options: options) } ?? self.engine.with(options: options)
        } else {
            engine = self.engine.with(options: options)
        }

        let admitted = running.withLock { count -> Bool in
            guard count < settings.concurrency else { return false }
            count += 1
            return true
        }
        guard admitted else {
            throw EndpointRefusal(
                503,
                "\(settings.concurrency) probes are under way, the most \(Setting.probeConcurrency.named(.configuration)) allows; "
                    + "this one was not started"
            )
        }
        return Admission(engine: engine, module: module, target: target, budget: budget, limit: limit)
    }

    /// The answer for a finished (or timed-out, nil) probe. Not async, so the series and the trace
    /// it builds live on the thread's stack for the moment it runs, not in the request's async frame.
    @inline(never)
    private func answer(
        _ finished: URLReport?, seconds: Double, request: ProbeRequest, module: ProbeModule, target: String,
        budget: Double
    ) throws(EndpointRefusal) -> EndpointAnswer {
        if let finished, finished.verdict.works.isEmpty, let shortage = finished.attempts.compactMap(\.shortage).first {
            metrics?.resourceErrors(shortage).increment()
            throw EndpointRefusal(503, "the probe could not start: \(shortage.sentence(.configuration))")
        }
        let success = finished.map(module.succeeded) ?? false
        let exposition = ProbeExposition.render(finished, .init(seconds: seconds, success: success))
        guard request.debug else {
            return EndpointAnswer(status: 200, contentType: EndpointAnswer.expositionType, body: exposition)
        }
        let trace = Self.trace(
            target: target, module: module.name, budget: budget, report: finished, exposition: exposition)
        return EndpointAnswer(status: 200, contentType: "text/plain; charset=utf-8", body: Array(trace.utf8))
    }

    /// The plain-text trace `debug=true` answers, as blackbox's debug output: the resolution and
    /// each attempt's curl log, the verdict, then the series the probe would have answered.
    static func trace(
        target: String, module: String, budget: Double, report: URLReport?, exposition: [UInt8]
    )
        -> String
    {
        var out =
            "Probe of \(TerminalText.escaped(target)), module \(module), within \(String(cFormat: "%.2f", budget)) s\n\n"
        if let report {
            out += ProbeExport.table([report])
            for attempt in report.attempts where !attempt.hops.isEmpty {
                out += "curl log of \(attempt.scenario.rawValue) to \(attempt.ip ?? "-"):\n"
                for hop in attempt.hops {
                    for line in hop.log {
                        out +=
                            "  \(String(cFormat: "%8.1f", line.atMs)) ms \(line.kind.rawValue): \(TerminalText.escaped(line.text))\n"
                    }
                }
                out += "\n"
            }
        } else {
            out += "The probe did not finish within its budget: probe_success 0.\n\n"
        }
        out += "Metrics that would have been returned:\n"
        out += String(decoding: exposition, as: UTF8.self)
        return out
    }
}

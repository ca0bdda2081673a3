// Each probe as an OpenTelemetry trace over OTLP/HTTP protobuf (swift-otel): a span per URL, a
// child per attempt, a grandchild per redirect hop with its phases as events; never blocking.
import Foundation
import Logging
import NameResolution
import OTel
import Probe
import ServiceLifecycle
import Tracing

/// A point in time from a report's wall-clock dates, for spans built after the fact.
struct ReportInstant: TracerInstant {
    var nanosecondsSinceEpoch: UInt64

    init(_ date: Date) { nanosecondsSinceEpoch = UInt64(max(0, date.timeIntervalSince1970) * 1e9) }

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch }
}

/// Sends each probe to an OTLP/HTTP endpoint as a trace. Spans are queued and sent in batches
/// by swift-otel's processor; a slow or absent collector drops batches (counted in
/// `ipdirect_export_failures_total{exporter="otlp"}` and logged at most once a minute), and
/// probing never waits for it.
public final class AgentTracing: ReportExporter {
    private let tracer: any Tracer
    private let group: ServiceGroup
    private let runner: Task<Void, Never>
    private let labels: [AgentLabel]
    private let redact: Bool

    /// The traces endpoint spans go to.
    public let endpoint: String

    /// Starts the exporter.
    ///
    /// - Parameters:
    ///   - endpoint: the collector: a base URL (`http://host:4318`, `/v1/traces` is added) or
    ///     the full traces URL.
    ///   - labels: the vantage labels, on the resource and every span.
    ///   - metrics: where failed exports are counted.
    ///   - logger: where they are reported.
    ///   - redact: hide secrets in URLs, as every export does.
    /// - Throws: `AgentSettingError` when the endpoint is not an http(s) URL or swift-otel
    ///   refuses the configuration.
    public init(
        endpoint: String, labels: [AgentLabel], metrics: AgentMetrics?, logger: Logger, redact: Bool = true
    ) throws(AgentSettingError) {
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw AgentSettingError(
                "--otlp-endpoint \(endpoint) is not an http(s) URL; give the collector's OTLP/HTTP address, such as http://127.0.0.1:4318"
            )
        }
        let traces = url.path.isEmpty || url.path == "/" ? endpoint.trimmingSuffix("/") + "/v1/traces" : endpoint
        self.endpoint = traces
        self.labels = labels
        self.redact = redact

        let diagnostics = Logger(label: "ipdirect.otlp") { _ in
            OTLPDiagnostics(metrics: metrics, logger: logger, endpoint: traces)
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "ipdirect-agent"
        var resource = ["service.version": IPDirectVersion.string]
        for label in labels { resource[label.name] = label.value }
        configuration.resourceAttributes = resource
        configuration.diagnosticLogger = .custom(diagnostics)
        configuration.diagnosticLogLevel = .warning
        configuration.propagators = [.traceContext]
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.traces.enabled = true
        configuration.traces.sampler = .alwaysOn
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.endpoint = traces
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.otlpExporter.timeout = .seconds(5)
        configuration.traces.batchSpanProcessor.scheduleDelay = .seconds(1)
        configuration.traces.batchSpanProcessor.exportTimeout = .seconds(5)
        do {
            let (tracer, service) = try OTel.makeTracingBackend(configuration: configuration)
            self.tracer = tracer
            group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: [service], logger: Logger(label: "ipdirect.otlp") { _ in SwiftLogNoOpLogHandler() }))
        } catch {
            throw AgentSettingError("cannot export to \(endpoint): \(error)")
        }
        let group = group
        runner = Task { try? await group.run() }
    }

    /// Sends what is queued and stops, waiting at most `budget`.
    public func finish(within budget: Duration) async {
        let group = group
        let runner = runner
        // What is left when time is up goes on in the background (a task group would wait for
        // it, since an exporter's flush does not answer cancellation).
        await Deadline.first(within: budget) {
            await group.triggerGracefulShutdown()
            await runner.value
        }
    }

    // MARK: Spans

    /// Records one probed URL as a trace.
    ///
    /// - Parameters:
    ///   - report: what the probe found.
    ///   - context: the target it was for, and when its probe began (resolution included).
    public func record(_ report: URLReport, context: ReportContext) {
        let started = context.started
        let shown = redact ? Redaction.report(report) : report
        let attemptTimes = shown.attempts.compactMap(Self.span(of:))
        let end = attemptTimes.map(\.end).max() ?? Date()
        let root = tracer.startSpan(
            "ipdirect.probe", context: ServiceContext.topLevel, ofKind: .internal, at: ReportInstant(started))
        var attributes = baseAttributes()
        attributes["url.full"] = shown.url
        attributes["server.address"] = shown.host
        attributes["ipdirect.target"] = context.target
        attributes["ipdirect.recommended"] = shown.verdict.recommended?.rawValue ?? "none"
        attributes["ipdirect.works"] = shown.verdict.works.map(\.rawValue).joined(separator: ",")
        attributes["ipdirect.dns.agreement"] = shown.resolution.agreement.rawValue
        attributes["ipdirect.httpdns.provider"] = shown.resolution.httpdns.provider.rawValue
        attributes["ipdirect.httpdns.source"] = shown.resolution.httpdns.source.rawValue
        root.attributes.merge(attributes)
        var resolved: SpanAttributes = [:]
        resolved["ipdirect.httpdns.ms"] = shown.resolution.httpdns.ms
        resolved["ipdirect.httpdns.ips"] = (shown.resolution.httpdns.ipv4 + shown.resolution.httpdns.ipv6)
            .joined(separator: ",")
        resolved["ipdirect.system.ips"] = (shown.resolution.system.ipv4 + shown.resolution.system.ipv6)
            .joined(separator: ",")
        if let error = shown.resolution.httpdns.error { resolved["ipdirect.httpdns.error"] = error.sentence }
        root.addEvent(
            SpanEvent(
                name: "resolved",
                at: ReportInstant(started.addingTimeInterval(max(shown.resolution.httpdns.ms, 0) / 1000)),
                attributes: resolved))
        if shown.verdict.works.isEmpty {
            root.setStatus(SpanStatus(code: .error, message: shown.verdict.summary))
        }
        for attempt in shown.attempts where attempt.outcome != .skipped {
            recordAttempt(attempt, parent: root.context, fallbackStart: started)
        }
        root.end(at: ReportInstant(max(end, started)))
    }

    private func baseAttributes() -> SpanAttributes {
        var attributes: SpanAttributes = [:]
        for label in labels { attributes[label.name] = label.value }
        return attributes
    }

    /// When an attempt's exchanges began and ended; nil when none was made.
    private static func span(of attempt: Attempt) -> (start: Date, end: Date)? {
        guard let first = attempt.hops.first, let last = attempt.hops.last else { return nil }
        return (first.startedAt, last.startedAt.addingTimeInterval(last.timings.total / 1000))
    }

    private func recordAttempt(_ attempt: Attempt, parent: ServiceContext, fallbackStart: Date) {
        let times = Self.span(of: attempt) ?? (fallbackStart, fallbackStart)
        let method = attempt.hops.first?.method ?? "GET"
        let span = tracer.startSpan(method, context: parent, ofKind: .client, at: ReportInstant(times.start))
        var attributes = baseAttributes()
        attributes["http.request.method"] = method
        attributes["url.full"] = attempt.hops.first?.originalURL ?? attempt.url
        attributes["ipdirect.scenario"] = attempt.scenario.rawValue
        attributes["ipdirect.outcome"] = attempt.outcome.rawValue
        if let source = attempt.ipSource { attributes["ipdirect.resolver"] = source.rawValue }
        if let ip = attempt.ip { attributes["network.peer.address"] = ip.text }
        if let sni = attempt.sni { attributes["tls.client.server_name"] = sni }
        if let status = attempt.status { attributes["http.response.status_code"] = status }
        if let version = attempt.httpVersion { attributes["network.protocol.version"] = version }
        attributes["network.protocol.name"] = "http"
        attributes["ipdirect.redirects"] = max(0, attempt.hops.count - 1)
        if let leaf = attempt.certificate?.chain.first {
            attributes["tls.server.not_after"] = ISO8601DateFormatter().string(from: leaf.notAfter)
            attributes["tls.server.subject"] = leaf.subject
        }
        if !attempt.outcome.reachedServer {
            attributes["error.type"] = attempt.outcome.rawValue
            span.setStatus(SpanStatus(code: .error, message: attempt.error?.sentence ?? attempt.outcome.rawValue))
        }
        span.attributes.merge(attributes)
        for (index, hop) in attempt.hops.enumerated() {
            recordHop(hop, index: index, scenario: attempt.scenario, parent: span.context)
        }
        span.end(at: ReportInstant(times.end))
    }

    private func recordHop(_ hop: Hop, index: Int, scenario: Scenario, parent: ServiceContext) {
        let span = tracer.startSpan(hop.method, context: parent, ofKind: .client, at: ReportInstant(hop.startedAt))
        var attributes = baseAttributes()
        attributes["http.request.method"] = hop.method
        attributes["url.full"] = hop.originalURL
        attributes["ipdirect.request_url"] = hop.url
        attributes["ipdirect.hop"] = index
        attributes["ipdirect.scenario"] = scenario.rawValue
        attributes["ipdirect.outcome"] = hop.outcome.rawValue
        attributes["ipdirect.resolver"] = hop.resolver.rawValue
        if let host = URL(string: hop.originalURL)?.host { attributes["server.address"] = host }
        if let ip = hop.remoteIP { attributes["network.peer.address"] = ip.text }
        if let port = hop.remotePort {
            attributes["network.peer.port"] = port
            attributes["server.port"] = port
        }
        if let sni = hop.sni { attributes["tls.client.server_name"] = sni }
        if let status = hop.status { attributes["http.response.status_code"] = status }
        if let version = hop.httpVersion { attributes["network.protocol.version"] = version }
        attributes["http.response.body.size"] = hop.responseBytes
        if !hop.outcome.reachedServer {
            attributes["error.type"] = hop.outcome.rawValue
            span.setStatus(SpanStatus(code: .error, message: hop.error?.sentence ?? hop.outcome.rawValue))
        }
        span.attributes.merge(attributes)
        let phases: [(String, Double?)] = [
            ("connect", hop.timings.connect), ("tls", hop.timings.tlsDone), ("first_byte", hop.timings.firstByte),
        ]
        for (name, ms) in phases {
            guard let ms, ms > 0 else { continue }
            span.addEvent(SpanEvent(name: name, at: ReportInstant(hop.startedAt.addingTimeInterval(ms / 1000))))
        }
        span.end(at: ReportInstant(hop.startedAt.addingTimeInterval(hop.timings.total / 1000)))
    }
}

/// swift-otel's diagnostics: a failed or dropped batch is counted and said in the agent's log,
/// at most once a minute (with how many failed meanwhile); the rest is dropped.
private struct OTLPDiagnostics: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning
    let metrics: AgentMetrics?
    let logger: Logger
    let endpoint: String
    private let throttle = ReportThrottle(every: 60)

    init(metrics: AgentMetrics?, logger: Logger, endpoint: String) {
        self.metrics = metrics
        self.logger = logger
        self.endpoint = endpoint
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .warning else { return }
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let text = event.message.description
        let lost: Int
        if text.contains("dropped") {
            lost = all["dropped_count"].flatMap { Int("\($0)") } ?? 1
        } else if text.contains("Failed to export") || text.contains("flush failed") {
            lost = all["batch_size"].flatMap { Int("\($0)") } ?? 1
        } else {
            lost = 0
        }
        if lost > 0 { metrics?.exportFailed(.otlp, count: lost) }
        let reason = all["error"].map { ": \($0)" } ?? ""
        throttle.report { suppressed in
            let more = suppressed > 0 ? " (\(suppressed) more since the last report)" : ""
            logger.warning(
                "OTLP export to \(endpoint) failed\(reason); spans are dropped, probing goes on\(more). Check that the collector is up.",
                metadata: ["event": "otlp-export-failed", "spans": "\(lost)"])
        }
    }
}

/// Says a recurring problem at most once per period, counting the times it stayed silent.
final class ReportThrottle: Sendable {
    private let period: Double
    private let state = Locked((last: Date?.none, suppressed: 0))

    init(every seconds: Double) { period = seconds }

    /// Calls `say` with the number of silenced reports when the period has passed.
    func report(now: Date = Date(), _ say: (Int) -> Void) {
        let due = state.withLock { state -> Int? in
            if let last = state.last, now.timeIntervalSince(last) < period {
                state.suppressed += 1
                return nil
            }
            defer {
                state.last = now
                state.suppressed = 0
            }
            return state.suppressed
        }
        if let due { say(due) }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}

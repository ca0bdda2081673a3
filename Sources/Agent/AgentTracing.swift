// Each probe as an OpenTelemetry trace over OTLP/HTTP protobuf: a span per URL, a child per
// attempt, a grandchild per redirect hop with its phases as events; sent in batches, never blocking.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import Logging
import NameResolution
import Probe

/// Sends each probe to an OTLP/HTTP endpoint as a trace. Spans are queued and sent in batches
/// each second through the shared libcurl loop; a slow or absent collector drops batches (counted
/// in `ipdirect_export_failures_total{exporter="otlp"}` and logged at most once a minute), and
/// probing never waits for it.
///
/// The request is written by hand (`OTLPEncoding`), not with swift-otel: the spans are built
/// after the fact from a finished report, so no live tracer is needed, and swift-otel brought
/// SwiftProtobuf, AsyncHTTPClient and NIOHTTP2 (8 MB of the binary) and Foundation's ICU with it.
public final class AgentTracing: ReportExporter {
    /// Spans waiting for the next batch, encoded, at most `queueLimit`.
    private let queue = Locked([[UInt8]]())
    private let sender: Task<Void, Never>
    private let labels: [AgentLabel]
    private let redact: Bool
    private let resource: [(String, OTLPSpan.Value)]
    private let metrics: AgentMetrics?
    private let logger: Logger
    private let throttle = ReportThrottle(every: 60)
    private let delivery: OTLPDelivery

    /// The traces endpoint spans go to.
    public let endpoint: String

    /// Spans held for a collector that is slow; more are dropped (swift-otel's default).
    static let queueLimit = 2048
    /// Spans per request.
    static let batchLimit = 512

    /// Starts the exporter.
    ///
    /// - Parameters:
    ///   - endpoint: the collector: a base URL (`http://host:4318`, `/v1/traces` is added) or
    ///     the full traces URL.
    ///   - labels: the vantage labels, on the resource and every span.
    ///   - metrics: where failed exports are counted.
    ///   - logger: where they are reported.
    ///   - redact: hide secrets in URLs, as every export does.
    ///   - environment: where the `OTEL_EXPORTER_OTLP_*` variables are read (`OTLPDelivery`).
    /// - Throws: `AgentSettingError` when the endpoint is not an http(s) URL.
    public init(
        endpoint: String, labels: [AgentLabel], metrics: AgentMetrics?, logger: Logger, redact: Bool = true,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(AgentSettingError) {
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw AgentSettingError(
                .otlpEndpoint, value: endpoint,
                " is not an http(s) URL; give the collector's OTLP/HTTP address, such as http://127.0.0.1:4318")
        }
        let traces = url.path.isEmpty || url.path == "/" ? endpoint.trimmingSuffix("/") + "/v1/traces" : endpoint
        self.endpoint = traces
        self.labels = labels
        self.redact = redact
        self.metrics = metrics
        self.logger = logger
        resource =
            [("service.name", .string("ipdirect-agent")), ("service.version", .string(IPDirectVersion.string))]
            + labels.map { ($0.name, .string($0.value)) }
        delivery = OTLPDelivery(environment: environment)
        let queue = queue
        let send = Self.sender(
            endpoint: traces, delivery: delivery, resource: resource, metrics: metrics, logger: logger,
            throttle: throttle)
        sender = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await Self.flush(queue, send)
            }
        }
    }

    /// Sends what is queued and stops, waiting at most `budget`.
    public func finish(within budget: Duration) async {
        sender.cancel()
        let queue = queue
        let send = Self.sender(
            endpoint: endpoint, delivery: delivery, resource: resource, metrics: metrics, logger: logger,
            throttle: throttle)
        // What is left when time is up goes on in the background: a collector that does not
        // answer costs its own timeout, not the caller's.
        await Deadline.first(within: budget) { await Self.flush(queue, send) }
    }

    /// Sends the queue in batches until it is empty.
    private static func flush(_ queue: Locked<[[UInt8]]>, _ send: @Sendable ([[UInt8]]) async -> Void) async {
        while true {
            let batch = queue.withLock { spans -> [[UInt8]] in
                let taken = Array(spans.prefix(batchLimit))
                spans.removeFirst(taken.count)
                return taken
            }
            guard !batch.isEmpty else { return }
            await send(batch)
        }
    }

    /// One POST of a batch; a failure is counted and said (throttled), and the batch dropped.
    private static func sender(
        endpoint: String, delivery: OTLPDelivery, resource: [(String, OTLPSpan.Value)], metrics: AgentMetrics?,
        logger: Logger, throttle: ReportThrottle
    ) -> @Sendable ([[UInt8]]) async -> Void {
        return { batch in
            let body = OTLPEncoding.request(
                resource: resource, scope: ("ipdirect", IPDirectVersion.string), spans: batch)
            let record = await TransferLoop.shared.perform(
                TransferSpec(
                    url: endpoint, method: "POST",
                    headers: [HeaderField(name: "Content-Type", value: "application/x-protobuf")] + delivery.headers,
                    body: body, timeout: delivery.timeout, caFile: delivery.caFile, freshConnection: false,
                    bodyLimit: .keepFirst(1024)))
            let reason: String? =
                if let failure = record.failure {
                    failure.message
                } else if !(200..<300).contains(record.status) {
                    "the collector answered \(record.status)"
                } else {
                    nil
                }
            guard let reason else { return }
            failed(
                batch.count, reason: reason, endpoint: endpoint, metrics: metrics, logger: logger, throttle: throttle)
        }
    }

    /// Counts lost spans and says so at most once a minute.
    private static func failed(
        _ lost: Int, reason: String, endpoint: String, metrics: AgentMetrics?, logger: Logger, throttle: ReportThrottle
    ) {
        metrics?.exportFailed(.otlp, count: lost)
        throttle.report { suppressed in
            let more = suppressed > 0 ? " (\(suppressed) more since the last report)" : ""
            logger.warning(
                "OTLP export to \(endpoint) failed: \(reason); spans are dropped, probing goes on\(more). Check that the collector is up.",
                metadata: ["event": "otlp-export-failed", "spans": "\(lost)"])
        }
    }

    /// Queues encoded spans; what does not fit is dropped and counted.
    private func enqueue(_ spans: [OTLPSpan]) {
        let encoded = spans.map(OTLPEncoding.span)
        let dropped = queue.withLock { queued -> Int in
            let room = max(Self.queueLimit - queued.count, 0)
            queued.append(contentsOf: encoded.prefix(room))
            return encoded.count - min(room, encoded.count)
        }
        if dropped > 0 {
            Self.failed(
                dropped, reason: "\(Self.queueLimit) spans were already waiting", endpoint: endpoint,
                metrics: metrics, logger: logger, throttle: throttle)
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
        let trace = OTLPSpan.randomID(bytes: 16)
        var root = OTLPSpan(
            traceID: trace, spanID: OTLPSpan.randomID(bytes: 8), name: "ipdirect.probe", kind: .internal,
            start: Self.nanoseconds(started))
        var attributes = baseAttributes()
        attributes["url.full"] = .string(shown.url)
        attributes["server.address"] = .string(shown.host)
        attributes["ipdirect.target"] = .string(context.target)
        attributes["ipdirect.recommended"] = .string(shown.verdict.recommended?.rawValue ?? "none")
        attributes["ipdirect.works"] = .string(shown.verdict.works.map(\.rawValue).joined(separator: ","))
        attributes["ipdirect.dns.agreement"] = .string(shown.resolution.agreement.rawValue)
        attributes["ipdirect.httpdns.provider"] = .string(shown.resolution.httpdns.provider.rawValue)
        attributes["ipdirect.httpdns.source"] = .string(shown.resolution.httpdns.source.rawValue)
        root.attributes = attributes.pairs
        var resolved = SpanAttributes()
        resolved["ipdirect.httpdns.ms"] = .double(shown.resolution.httpdns.ms)
        resolved["ipdirect.httpdns.ips"] = .string(
            (shown.resolution.httpdns.ipv4 + shown.resolution.httpdns.ipv6).joined(separator: ","))
        resolved["ipdirect.system.ips"] = .string(
            (shown.resolution.system.ipv4 + shown.resolution.system.ipv6).joined(separator: ","))
        if let error = shown.resolution.httpdns.error { resolved["ipdirect.httpdns.error"] = .string(error.sentence) }
        root.events.append(
            OTLPSpan.Event(
                name: "resolved",
                time: Self.nanoseconds(started.addingTimeInterval(max(shown.resolution.httpdns.ms, 0) / 1000)),
                attributes: resolved.pairs))
        if shown.verdict.works.isEmpty { root.errorMessage = shown.verdict.summary }
        root.end = Self.nanoseconds(max(end, started))
        var spans = [root]
        for attempt in shown.attempts where attempt.outcome != .skipped {
            spans += attemptSpans(attempt, parent: root, fallbackStart: started)
        }
        enqueue(spans)
    }

    /// Unix nanoseconds of a date (0 before 1970).
    private static func nanoseconds(_ date: Date) -> UInt64 {
        UInt64(max(0, date.timeIntervalSince1970) * 1e9)
    }

    private func baseAttributes() -> SpanAttributes {
        var attributes = SpanAttributes()
        for label in labels { attributes[label.name] = .string(label.value) }
        return attributes
    }

    /// When an attempt's exchanges began and ended; nil when none was made.
    private static func span(of attempt: Attempt) -> (start: Date, end: Date)? {
        guard let first = attempt.hops.first, let last = attempt.hops.last else { return nil }
        return (first.startedAt, last.startedAt.addingTimeInterval(last.timings.total / 1000))
    }

    /// An attempt's span and its hops' under it.
    private func attemptSpans(_ attempt: Attempt, parent: OTLPSpan, fallbackStart: Date) -> [OTLPSpan] {
        let times = Self.span(of: attempt) ?? (fallbackStart, fallbackStart)
        let method = attempt.hops.first?.method ?? "GET"
        var span = OTLPSpan(
            traceID: parent.traceID, spanID: OTLPSpan.randomID(bytes: 8), parentSpanID: parent.spanID, name: method,
            kind: .client, start: Self.nanoseconds(times.start), end: Self.nanoseconds(times.end))
        var attributes = baseAttributes()
        attributes["http.request.method"] = .string(method)
        attributes["url.full"] = .string(attempt.hops.first?.originalURL ?? attempt.url)
        attributes["ipdirect.scenario"] = .string(attempt.scenario.rawValue)
        attributes["ipdirect.outcome"] = .string(attempt.outcome.rawValue)
        if let source = attempt.ipSource { attributes["ipdirect.resolver"] = .string(source.rawValue) }
        if let ip = attempt.ip { attributes["network.peer.address"] = .string(ip.text) }
        if let sni = attempt.sni { attributes["tls.client.server_name"] = .string(sni) }
        if let status = attempt.status { attributes["http.response.status_code"] = .int(status) }
        if let version = attempt.httpVersion { attributes["network.protocol.version"] = .string(version) }
        attributes["network.protocol.name"] = .string("http")
        attributes["ipdirect.redirects"] = .int(max(0, attempt.hops.count - 1))
        if let leaf = attempt.certificate?.chain.first {
            attributes["tls.server.not_after"] = .string(Date.ISO8601FormatStyle().format(leaf.notAfter))
            attributes["tls.server.subject"] = .string(leaf.subject)
        }
        if !attempt.outcome.reachedServer {
            attributes["error.type"] = .string(attempt.outcome.rawValue)
            span.errorMessage = attempt.error?.sentence ?? attempt.outcome.rawValue
        }
        span.attributes = attributes.pairs
        var spans = [span]
        for (index, hop) in attempt.hops.enumerated() {
            spans.append(hopSpan(hop, index: index, scenario: attempt.scenario, parent: span))
        }
        return spans
    }

    private func hopSpan(_ hop: Hop, index: Int, scenario: Scenario, parent: OTLPSpan) -> OTLPSpan {
        var span = OTLPSpan(
            traceID: parent.traceID, spanID: OTLPSpan.randomID(bytes: 8), parentSpanID: parent.spanID,
            name: hop.method, kind: .client, start: Self.nanoseconds(hop.startedAt),
            end: Self.nanoseconds(hop.startedAt.addingTimeInterval(hop.timings.total / 1000)))
        var attributes = baseAttributes()
        attributes["http.request.method"] = .string(hop.method)
        attributes["url.full"] = .string(hop.originalURL)
        attributes["ipdirect.request_url"] = .string(hop.url)
        attributes["ipdirect.hop"] = .int(index)
        attributes["ipdirect.scenario"] = .string(scenario.rawValue)
        attributes["ipdirect.outcome"] = .string(hop.outcome.rawValue)
        attributes["ipdirect.resolver"] = .string(hop.resolver.rawValue)
        if let host = URL(string: hop.originalURL)?.host { attributes["server.address"] = .string(host) }
        if let ip = hop.remoteIP { attributes["network.peer.address"] = .string(ip.text) }
        if let port = hop.remotePort {
            attributes["network.peer.port"] = .int(port)
            attributes["server.port"] = .int(port)
        }
        if let sni = hop.sni { attributes["tls.client.server_name"] = .string(sni) }
        if let status = hop.status { attributes["http.response.status_code"] = .int(status) }
        if let version = hop.httpVersion { attributes["network.protocol.version"] = .string(version) }
        attributes["http.response.body.size"] = .int(hop.responseBytes)
        if !hop.outcome.reachedServer {
            attributes["error.type"] = .string(hop.outcome.rawValue)
            span.errorMessage = hop.error?.sentence ?? hop.outcome.rawValue
        }
        span.attributes = attributes.pairs
        let phases: [(String, Double?)] = [
            ("connect", hop.timings.connect), ("tls", hop.timings.tlsDone), ("first_byte", hop.timings.firstByte),
        ]
        for (name, ms) in phases {
            guard let ms, ms > 0 else { continue }
            span.events.append(
                OTLPSpan.Event(name: name, time: Self.nanoseconds(hop.startedAt.addingTimeInterval(ms / 1000))))
        }
        return span
    }
}

/// How batches are sent, from the OpenTelemetry exporter variables (the traces-specific one over
/// the general): `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,...`, values percent-decoded),
/// `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds; 5 s when unset) and
/// `OTEL_EXPORTER_OTLP_CERTIFICATE` (a PEM file of the CAs to trust for an https collector).
struct OTLPDelivery: Sendable, Equatable {
    var headers: [HeaderField] = []
    var timeout: Duration = .seconds(5)
    var caFile: String?

    init(environment: [String: String]) {
        func variable(_ name: String) -> String? {
            (environment["OTEL_EXPORTER_OTLP_TRACES_" + name] ?? environment["OTEL_EXPORTER_OTLP_" + name])
                .map(\.trimmedSpaces).flatMap { $0.isEmpty ? nil : $0 }
        }
        for pair in (variable("HEADERS") ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmedSpaces
            let value = parts[1].trimmedSpaces
            guard !name.isEmpty else { continue }
            headers.append(HeaderField(name: name, value: value.percentDecoded ?? value))
        }
        if let text = variable("TIMEOUT"), let milliseconds = Int(text), milliseconds > 0 {
            timeout = .milliseconds(milliseconds)
        }
        caFile = variable("CERTIFICATE")
    }
}

/// A span's attributes in the order first set; setting a key again replaces its value.
private struct SpanAttributes {
    private(set) var pairs: [(String, OTLPSpan.Value)] = []

    subscript(key: String) -> OTLPSpan.Value? {
        get { pairs.first { $0.0 == key }?.1 }
        set {
            let index = pairs.firstIndex { $0.0 == key }
            switch (index, newValue) {
            case (let index?, let value?): pairs[index].1 = value
            case (let index?, nil): pairs.remove(at: index)
            case (nil, let value?): pairs.append((key, value))
            case (nil, nil): break
            }
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

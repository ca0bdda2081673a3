// The pieces of probe exports: HAR 1.2 entries (one per attempt and hop, timings from curl's
// cumulative values) that `ReportWriter` writes, and the table `ipdirect probe` prints.
import CurlTransport
import FoundationEssentials
import NameResolution
import TerminalText

/// Turns reports into the pieces of the formats users hand to scripts, browsers and colleagues;
/// `ReportWriter` writes whole documents (JSON, JSON Lines, HAR) from them.
public enum ProbeExport {
    /// The HAR entries of one report: one per hop of every attempt made, one with status 0
    /// for an attempt that could not be made, none for a skipped one.
    static func harEntries(_ report: URLReport, redact: Bool) -> [JSONValue] {
        var entries: [JSONValue] = []
        let httpdns = harHTTPDNS(report.resolution.httpdns)
        for attempt in report.attempts where attempt.outcome != .skipped {
            if attempt.hops.isEmpty {
                entries.append(harEntry(unmade: redact ? Redaction.attempt(attempt) : attempt, httpdns: httpdns))
            }
            for (index, hop) in attempt.hops.enumerated() {
                entries.append(harEntry(hop, index: index, attempt: attempt, redact: redact, httpdns: httpdns))
            }
        }
        return entries
    }

    /// The `_httpdns` field of each entry: what HTTPDNS said about the URL's host, with each
    /// family's TTL and, from the legacy API, `origin_ttl` and `extra`.
    static func harHTTPDNS(_ answer: HTTPDNSAnswer) -> JSONValue {
        func ttl(_ value: FamilyTTL) -> JSONValue {
            .object(IPFamily.allCases.compactMap { family in value[family].map { (family.rawValue, .int($0)) } })
        }
        var fields: [(String, JSONValue)] = [
            ("provider", .string(answer.provider.rawValue)), ("source", .string(answer.source.rawValue)),
            ("ttl", ttl(answer.ttl)),
        ]
        if let origin = answer.originTTL { fields.append(("originTTL", ttl(origin))) }
        if let extra = answer.extra { fields.append(("extra", .string(extra))) }
        return .object(fields)
    }

    /// One HAR entry pretty-printed and indented as an element of `log.entries`.
    static func harEntryText(_ entry: JSONValue) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        let text = (try? encoder.encode(entry)).map(ProbeJSON.escapingSeparators) ?? Data("{}".utf8)
        let indent: [UInt8] = Array("      ".utf8)
        return Data(indent + text.flatMap { $0 == 0x0A ? [0x0A] + indent : [$0] })
    }

    /// HAR timings from curl's cumulative ones: connect includes ssl (as HAR says), -1 where
    /// a phase did not happen; `time` is the sum of the non-negative phases.
    static func harTimings(_ t: PhaseTimings, usesTLS: Bool) -> (time: Double, fields: [(String, JSONValue)]) {
        func round3(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        let dns = t.nameLookup.map(round3) ?? -1
        let base = t.nameLookup ?? 0
        var connect = -1.0
        var ssl = -1.0
        if let connected = t.connect {
            // A handshake that never finished lasted until the exchange ended.
            let handshakeEnd = t.tlsDone ?? (usesTLS && t.preTransfer == nil ? t.total : connected)
            connect = round3(max(0, handshakeEnd - base))
            if usesTLS { ssl = round3(max(0, handshakeEnd - connected)) }
        } else if t.total > 0 {
            connect = round3(max(0, t.total - base))  // time spent failing to connect
        }
        let ready = t.preTransfer
        let send = ready.map { round3(max(0, $0 - (t.tlsDone ?? t.connect ?? $0))) } ?? 0
        var wait = 0.0
        var receive = 0.0
        if let ready, let first = t.firstByte {
            wait = round3(max(0, first - ready))
            receive = round3(max(0, t.total - first))
        } else if let ready {
            wait = round3(max(0, t.total - ready))
        }
        let time = [dns, connect, send, wait, receive].filter { $0 >= 0 }.reduce(0, +)
        return (
            round3(time),
            [
                ("blocked", .number(-1)), ("dns", .number(dns)), ("connect", .number(connect)),
                ("ssl", .number(ssl)), ("send", .number(send)), ("wait", .number(wait)),
                ("receive", .number(receive)),
            ]
        )
    }

    private static func harEntry(
        _ hop: Hop, index: Int, attempt: Attempt, redact: Bool, httpdns: JSONValue
    ) -> JSONValue {
        let hop = redact ? Redaction.hop(hop) : hop
        let usesTLS = hop.url.lowercased().hasPrefix("https:")
        let (time, timings) = harTimings(hop.timings, usesTLS: usesTLS)
        let url = (try? ProbeURL.parse(hop.url))
        let query = (url?.queryItems ?? []).map { item in
            JSONValue.object([
                ("name", .string(item.name)),
                ("value", .string(redact && Redaction.isSecretParameter(item.name) ? Redaction.marker : item.value)),
            ])
        }
        var request: [(String, JSONValue)] = [
            ("method", .string(hop.method)), ("url", .string(hop.url)),
            ("httpVersion", .string(hop.httpVersion ?? "HTTP/1.1")), ("cookies", .array([])),
            ("headers", headers(hop.requestHeaders)), ("queryString", .array(query)), ("headersSize", .int(-1)),
            ("bodySize", .int(hop.requestBodyBytes)),
        ]
        if hop.requestBodyBytes > 0 {
            let type = hop.requestHeaders.first { $0.name.lowercased() == "content-type" }?.value
            request.append(("postData", .object([("mimeType", .string(type ?? "application/octet-stream"))])))
        }
        let contentType = hop.responseHeaders.first { $0.name.lowercased() == "content-type" }?.value
        let location = hop.responseHeaders.first { $0.name.lowercased() == "location" }?.value
        var content: [(String, JSONValue)] = [
            ("size", .int(hop.responseBytes)), ("mimeType", .string(contentType ?? "x-unknown")),
        ]
        if !hop.bodyPreview.isEmpty { content.append(("text", .string(hop.bodyPreview))) }
        let response: [(String, JSONValue)] = [
            ("status", .int(hop.status ?? 0)), ("statusText", .string(reason(hop.status))),
            ("httpVersion", .string(hop.httpVersion ?? "")), ("cookies", .array([])),
            ("headers", headers(hop.responseHeaders)), ("content", .object(content)),
            ("redirectURL", .string(location ?? "")), ("headersSize", .int(-1)),
            ("bodySize", .int(hop.status == nil ? -1 : hop.responseBytes)),
        ]
        var entry: [(String, JSONValue)] = [
            ("startedDateTime", .string(ProbeJSON.timestamp(hop.startedAt))), ("time", .number(time)),
            ("request", .object(request)), ("response", .object(response)), ("cache", .object([])),
            ("timings", .object(timings)),
        ]
        if let ip = hop.remoteIP { entry.append(("serverIPAddress", .string(ip.text))) }
        if let port = hop.remotePort { entry.append(("connection", .string(String(port)))) }
        entry += [
            ("_scenario", .string(attempt.scenario.rawValue)), ("_sni", hop.sni.map(JSONValue.string) ?? .null),
            ("_checkedName", hop.checkedName.map(JSONValue.string) ?? .null),
            ("_resolver", .string(hop.resolver.rawValue)),
            ("_outcome", .string(hop.outcome.rawValue)), ("_error", hop.error.map { .string($0.sentence) } ?? .null),
            ("_originalURL", .string(hop.originalURL)), ("_hop", .int(index + 1)),
            ("_attempt", .string(attempt.id.uuidString)),
            ("_reproduce", attempt.reproduce.map(JSONValue.string) ?? .null), ("_httpdns", httpdns),
        ]
        return .object(entry)
    }

    private static func harEntry(unmade attempt: Attempt, httpdns: JSONValue) -> JSONValue {
        let (time, timings) = harTimings(PhaseTimings(), usesTLS: false)
        return .object([
            ("startedDateTime", .string(ProbeJSON.timestamp(Date()))), ("time", .number(time)),
            (
                "request",
                .object([
                    ("method", "GET"), ("url", .string(attempt.url)), ("httpVersion", "HTTP/1.1"),
                    ("cookies", .array([])), ("headers", .array([])), ("queryString", .array([])),
                    ("headersSize", .int(-1)), ("bodySize", .int(0)),
                ])
            ),
            (
                "response",
                .object([
                    ("status", .int(0)), ("statusText", ""), ("httpVersion", ""), ("cookies", .array([])),
                    ("headers", .array([])), ("content", .object([("size", .int(0)), ("mimeType", "x-unknown")])),
                    ("redirectURL", ""), ("headersSize", .int(-1)), ("bodySize", .int(-1)),
                ])
            ),
            ("cache", .object([])), ("timings", .object(timings)),
            ("_scenario", .string(attempt.scenario.rawValue)), ("_sni", .null), ("_checkedName", .null),
            ("_resolver", .string(attempt.ipSource?.rawValue ?? "none")),
            ("_outcome", .string(attempt.outcome.rawValue)),
            ("_error", attempt.error.map { .string($0.sentence) } ?? .null),
            ("_attempt", .string(attempt.id.uuidString)),
            ("_reproduce", attempt.reproduce.map(JSONValue.string) ?? .null), ("_httpdns", httpdns),
        ])
    }

    private static func headers(_ fields: [HeaderField]) -> JSONValue {
        .array(fields.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) })
    }

    private static func reason(_ status: Int?) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 421: "Misdirected Request"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: ""
        }
    }

    // MARK: Table

    /// The human summary `ipdirect probe` prints (`ProbeTable`): per URL, the resolution, one row
    /// per attempt made with its phases and its sentence when it failed, the skipped scenarios on
    /// one line, the verdict and the notes. Everything a
    /// server or provider wrote goes through `TerminalText`, so the table shows escapes, never
    /// acts on them, and its columns line up by display width.
    public static func table(_ reports: [URLReport], style: TableStyle = .plain) -> String {
        reports.map { ProbeTable.render($0, style: style) }.joined()
    }
}

/// A JSON value with ordered keys, for documents whose shape is fixed by others (HAR).
enum JSONValue: Encodable, ExpressibleByStringLiteral {
    case string(String)
    case number(Double)
    case int(Int)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    init(stringLiteral value: String) { self = .string(value) }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let value):
            var c = encoder.singleValueContainer()
            try c.encode(value)
        case .number(let value):
            var c = encoder.singleValueContainer()
            try c.encode(value)
        case .int(let value):
            var c = encoder.singleValueContainer()
            try c.encode(value)
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .array(let values):
            var c = encoder.unkeyedContainer()
            for value in values { try c.encode(value) }
        case .object(let fields):
            var c = encoder.container(keyedBy: Key.self)
            for (name, value) in fields { try c.encode(value, forKey: Key(stringValue: name)) }
        }
    }
}

// OTLP's trace messages in protobuf's wire format, written by hand for the few fields the agent
// sends (opentelemetry-proto's trace/v1): no generated code, no protobuf runtime in the binary.

/// A span as the agent exports it, its times in Unix nanoseconds.
struct OTLPSpan: Sendable {
    /// `SPAN_KIND_INTERNAL` (1) and `SPAN_KIND_CLIENT` (3).
    enum Kind: UInt64, Sendable {
        case `internal` = 1
        case client = 3
    }

    /// An attribute's value: OTLP's `AnyValue` for the kinds the agent sets.
    enum Value: Sendable, Equatable {
        case string(String)
        case int(Int)
        case double(Double)
    }

    /// One timed event of a span, with attributes.
    struct Event: Sendable {
        var name: String
        var time: UInt64
        var attributes: [(String, Value)] = []
    }

    var traceID: [UInt8]
    var spanID: [UInt8]
    /// Empty for a trace's root.
    var parentSpanID: [UInt8] = []
    var name: String
    var kind: Kind
    var start: UInt64
    var end: UInt64 = 0
    var attributes: [(String, Value)] = []
    var events: [Event] = []
    /// `STATUS_CODE_ERROR` with this message; nil leaves the status unset.
    var errorMessage: String?

    /// A fresh trace ID (16 random bytes) or span ID (8), never all zero (OTLP's "invalid").
    /// Eight bytes a draw: each draw of the system generator is a getrandom call.
    static func randomID(bytes: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        while true {
            var id: [UInt8] = []
            id.reserveCapacity(bytes + 7)
            while id.count < bytes { withUnsafeBytes(of: generator.next()) { id.append(contentsOf: $0) } }
            id.removeLast(id.count - bytes)
            if id.contains(where: { $0 != 0 }) { return id }
        }
    }
}

/// `ExportTraceServiceRequest` bytes: one resource, one instrumentation scope, the spans.
enum OTLPEncoding {
    /// Encodes a request.
    ///
    /// - Parameters:
    ///   - resource: the resource's attributes (`service.name`, the vantage labels).
    ///   - scope: the instrumentation scope's name and version.
    ///   - spans: the spans, each already encoded with `span(_:)`.
    static func request(resource: [(String, OTLPSpan.Value)], scope: (String, String), spans: [[UInt8]]) -> [UInt8] {
        var resourceMessage = ProtobufWriter()
        for attribute in resource { resourceMessage.message(1, keyValue(attribute)) }
        var scopeMessage = ProtobufWriter()
        scopeMessage.string(1, scope.0)
        scopeMessage.string(2, scope.1)
        var scopeSpans = ProtobufWriter()
        scopeSpans.message(1, scopeMessage.bytes)
        for span in spans { scopeSpans.message(2, span) }
        var resourceSpans = ProtobufWriter()
        resourceSpans.message(1, resourceMessage.bytes)
        resourceSpans.message(2, scopeSpans.bytes)
        var request = ProtobufWriter()
        request.message(1, resourceSpans.bytes)
        return request.bytes
    }

    /// A `Span` message.
    static func span(_ span: OTLPSpan) -> [UInt8] {
        var message = ProtobufWriter()
        message.data(1, span.traceID)
        message.data(2, span.spanID)
        if !span.parentSpanID.isEmpty { message.data(4, span.parentSpanID) }
        message.string(5, span.name)
        message.varint(6, span.kind.rawValue)
        message.fixed64(7, span.start)
        message.fixed64(8, span.end)
        for attribute in span.attributes { message.message(9, keyValue(attribute)) }
        for event in span.events {
            var encoded = ProtobufWriter()
            encoded.fixed64(1, event.time)
            encoded.string(2, event.name)
            for attribute in event.attributes { encoded.message(3, keyValue(attribute)) }
            message.message(11, encoded.bytes)
        }
        if let errorMessage = span.errorMessage {
            var status = ProtobufWriter()
            status.string(2, errorMessage)
            status.varint(3, 2)
            message.message(15, status.bytes)
        }
        return message.bytes
    }

    /// A `KeyValue` with its `AnyValue`.
    private static func keyValue(_ attribute: (String, OTLPSpan.Value)) -> [UInt8] {
        var value = ProtobufWriter()
        switch attribute.1 {
        case .string(let text): value.string(1, text)
        case .int(let number): value.varint(3, UInt64(bitPattern: Int64(number)))
        case .double(let number): value.fixed64(4, number.bitPattern)
        }
        var pair = ProtobufWriter()
        pair.string(1, attribute.0)
        pair.message(2, value.bytes)
        return pair.bytes
    }
}

/// Appends protobuf fields: varints, 64-bit fixed values and length-delimited bytes.
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ field: Int, _ value: UInt64) {
        key(field, wireType: 0)
        raw(value)
    }

    mutating func fixed64(_ field: Int, _ value: UInt64) {
        key(field, wireType: 1)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func data(_ field: Int, _ value: [UInt8]) {
        key(field, wireType: 2)
        raw(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ field: Int, _ value: String) { data(field, Array(value.utf8)) }

    mutating func message(_ field: Int, _ value: [UInt8]) { data(field, value) }

    private mutating func key(_ field: Int, wireType: UInt64) { raw(UInt64(field) << 3 | wireType) }

    private mutating func raw(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}

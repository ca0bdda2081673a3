// Compact JSON for JSON Lines, written straight into bytes as `encode(to:)` produces it: the
// same bytes Foundation's JSONEncoder gives with ProbeJSON's settings, at a fraction of its cost.
import CurlTransport
import FoundationEssentials

/// Encodes a value as one line of compact JSON, byte for byte what `ProbeJSON.foundation(_:pretty:
/// false)` writes (keys in encoding order, slashes not escaped, dates as `ProbeJSON.timestamp`,
/// absent values of `AbsentAsNull` types as null).
///
/// Foundation's encoder builds a tree of every value, then checks each one for special types by
/// dynamic casts, then serialises the tree: a tenth of a batch probe's CPU went there. This one
/// writes each value when it is encoded, which works for containers used one after the other,
/// as every `encode(to:)` in the probe model does. Anything else (nested or super encoders, two
/// containers from one encoder, Data, URL, Decimal, non-finite numbers, a value that encodes
/// nothing) throws `Unsupported`, and `encode` falls back to Foundation's encoder for that value:
/// the output is the same either way.
enum CompactJSONEncoder {
    /// Thrown where writing in order cannot give JSONEncoder's bytes.
    struct Unsupported: Error {}

    /// The value as compact JSON, by the fast path when it can, else by JSONEncoder.
    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        if let bytes = try? encodeInOrder(value) { return bytes }
        return Array(try ProbeJSON.foundation(value, pretty: false))
    }

    /// Encodes one value after another into the same buffer and frames, which stay allocated:
    /// a batch writer's records (a fresh buffer grown to each record's size, and a copy into
    /// `Data`, were the heap churn that made JSON Lines fault in more pages than the table).
    /// Not thread-safe: its owner uses it under a lock.
    final class LineWriter: @unchecked Sendable {
        private let sink = Sink()

        init() {}

        deinit { sink.releaseFrames() }

        /// `value` as one JSON line with its newline (as `ProbeJSON.line` writes it), handed to
        /// `body` while the bytes are valid; nil when the value cannot be encoded.
        func withLine<T: Encodable, Result>(_ value: T, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
            sink.bytes.removeAll(keepingCapacity: true)
            do {
                try sink.write(value)
            } catch {
                sink.bytes.removeAll(keepingCapacity: true)
                guard let data = try? ProbeJSON.foundation(value, pretty: false) else { return nil }
                sink.bytes.append(contentsOf: data)
            }
            sink.bytes.append(0x0A)
            defer {
                // One huge record does not keep its buffer for the rest of the batch.
                if sink.bytes.capacity > 1 << 20 { sink.bytes = [] }
            }
            return sink.bytes.withUnsafeBytes(body)
        }
    }

    /// The fast path alone (a test compares it with JSONEncoder).
    static func encodeInOrder<T: Encodable>(_ value: T) throws -> [UInt8] {
        let sink = Sink()
        defer { sink.releaseFrames() }
        try sink.write(value)
        return sink.bytes
    }

    /// The bytes written so far, shared by every encoder and container of one value.
    fileprivate final class Sink {
        // One encode call owns its sink on one thread: the runtime's access checks on every
        // appended byte were a fifth of the encoder's time.
        @exclusivity(unchecked) var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(4096) }

        /// Writes one value: scalars directly, anything else through its `encode(to:)`.
        /// Containers reach this unspecialised, so types are told apart by comparing metatypes
        /// (a pointer compare) rather than by dynamic casts.
        func write<T: Encodable>(_ value: T) throws {
            if T.self == String.self {
                writeString(Self.same(value, as: String.self))
            } else if T.self == Int.self {
                writeInteger(Self.same(value, as: Int.self))
            } else if T.self == Bool.self {
                writeBool(Self.same(value, as: Bool.self))
            } else if T.self == Double.self {
                try writeDouble(Self.same(value, as: Double.self))
            } else if T.self == String?.self {
                // The model's optional fields: Optional's encode(to:) would take a frame and a
                // single-value container to write the same null or value.
                if let text = Self.same(value, as: String?.self) { writeString(text) } else { writeNull() }
            } else if T.self == Int?.self {
                if let number = Self.same(value, as: Int?.self) { writeInteger(number) } else { writeNull() }
            } else if T.self == Double?.self {
                if let number = Self.same(value, as: Double?.self) { try writeDouble(number) } else { writeNull() }
            } else if T.self == [CurlLogLine].self {
                try writeLog(Self.same(value, as: [CurlLogLine].self))
            } else if T.self == [HeaderField].self {
                writeHeaders(Self.same(value, as: [HeaderField].self))
            } else if T.self == Date.self {
                writeString(ProbeJSON.timestamp(Self.same(value, as: Date.self)))
            } else if let text = Self.integerText(value) {
                // Every other integer type: their encode(to:) would come back here through the
                // single-value container, for ever.
                bytes.append(contentsOf: text.utf8)
            } else if T.self == Data.self || T.self == URL.self || T.self == Decimal.self || T.self == Float.self {
                throw Unsupported()  // JSONEncoder writes these its own way
            } else {
                // Values nest strictly (one finishes before its parent goes on), so frames are
                // reused from a stack instead of allocated for every header and log line.
                let frame = spareFrames.popLast() ?? Frame(sink: self)
                frame.opened = .nothing
                frame.hasElement = false
                frame.valueType = T.self
                frame.nullsDecided = nil
                try value.encode(to: frame)
                try frame.close()
                spareFrames.append(frame)
            }
        }

        /// Each frame holds its sink, and the sink holds its spare frames: a cycle, which its
        /// owner breaks with `releaseFrames()` when done with the sink. Left whole, every record
        /// kept its sink, its frames and its buffer (about 10 KB a probed URL: the agent's JSON
        /// Lines grew it by some 18 MB a round at 1,000 targets, issue 20).
        @exclusivity(unchecked) private var spareFrames: [Frame] = []

        /// Lets the frames go, and with them the cycle that keeps this sink alive.
        func releaseFrames() {
            spareFrames.removeAll()
        }

        /// The decimal text of a fixed-width integer other than `Int`, nil for anything else.
        private static func integerText<T>(_ value: T) -> String? {
            if T.self == Int64.self { return String(same(value, as: Int64.self)) }
            if T.self == Int32.self { return String(same(value, as: Int32.self)) }
            if T.self == Int16.self { return String(same(value, as: Int16.self)) }
            if T.self == Int8.self { return String(same(value, as: Int8.self)) }
            if T.self == UInt.self { return String(same(value, as: UInt.self)) }
            if T.self == UInt64.self { return String(same(value, as: UInt64.self)) }
            if T.self == UInt32.self { return String(same(value, as: UInt32.self)) }
            if T.self == UInt16.self { return String(same(value, as: UInt16.self)) }
            if T.self == UInt8.self { return String(same(value, as: UInt8.self)) }
            return nil
        }

        /// `value` as the type it is already known to be (its metatype was compared).
        private static func same<T, U>(_ value: T, as type: U.Type) -> U {
            withUnsafePointer(to: value) { $0.withMemoryRebound(to: U.self, capacity: 1) { $0.pointee } }
        }

        func writeNull() {
            bytes.append(contentsOf: Self.nullBytes)
        }

        /// curl's log, most of a record's values: written here rather than through
        /// `CurlLogLine`'s synthesised `encode(to:)` (a frame, a boxed container and a dispatch
        /// per value), with its keys in the order it declares them, as that would write them
        /// (a test holds the two to the same bytes).
        func writeLog(_ lines: [CurlLogLine]) throws {
            bytes.append(UInt8(ascii: "["))
            for (index, line) in lines.enumerated() {
                bytes.append(contentsOf: index == 0 ? Self.logAtKey : Self.nextLogAtKey)
                try writeDouble(line.atMs)
                bytes.append(contentsOf: Self.logKindKey)
                writeString(line.kind.rawValue)
                bytes.append(contentsOf: Self.logTextKey)
                writeString(line.text)
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "]"))
        }

        /// Request and response headers, as `HeaderField`'s synthesised `encode(to:)` writes them.
        func writeHeaders(_ fields: [HeaderField]) {
            bytes.append(UInt8(ascii: "["))
            for (index, field) in fields.enumerated() {
                bytes.append(contentsOf: index == 0 ? Self.headerNameKey : Self.nextHeaderNameKey)
                writeString(field.name)
                bytes.append(contentsOf: Self.headerValueKey)
                writeString(field.value)
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "]"))
        }

        static let logAtKey = Array(#"{"atMs":"#.utf8)
        static let nextLogAtKey = Array(#",{"atMs":"#.utf8)
        static let logKindKey = Array(#","kind":"#.utf8)
        static let logTextKey = Array(#","text":"#.utf8)
        static let headerNameKey = Array(#"{"name":"#.utf8)
        static let nextHeaderNameKey = Array(#",{"name":"#.utf8)
        static let headerValueKey = Array(#","value":"#.utf8)

        func writeBool(_ flag: Bool) {
            bytes.append(contentsOf: flag ? Self.trueBytes : Self.falseBytes)
        }

        /// `Int.description`: `String(_:)` of a generic integer takes the slow generic path.
        func writeInteger(_ number: Int) {
            bytes.append(contentsOf: number.description.utf8)
        }

        /// As JSONEncoder: the shortest round-trip form, without a trailing ".0".
        func writeDouble(_ number: Double) throws {
            guard number.isFinite else { throw Unsupported() }
            var text = number.description
            text.withUTF8 { utf8 in
                // ASCII: a ".0" ending is its last two bytes.
                let wholeNumber =
                    utf8.count >= 2 && utf8[utf8.count - 2] == UInt8(ascii: ".")
                    && utf8[utf8.count - 1] == UInt8(ascii: "0")
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<(utf8.count - (wholeNumber ? 2 : 0))]))
            }
        }

        /// A JSON string as JSONEncoder escapes it with `.withoutEscapingSlashes`: quote,
        /// backslash and C0 controls escaped (\b \f \n \r \t by name, the rest as \u00XX),
        /// and as `ProbeJSON.escapingSeparators` then escapes DEL, C1, U+2028 and U+2029;
        /// everything else as its UTF-8 bytes.
        func writeString(_ string: String) {
            bytes.append(UInt8(ascii: "\""))
            var copy = string
            copy.withUTF8 { utf8 in
                var mark = 0
                for index in 0..<utf8.count {
                    let byte = utf8[index]
                    guard index >= mark else { continue }  // inside an escaped separator
                    if byte == 0x7F || byte == 0xC2 || byte == 0xE2 {
                        let (scalar, length) = ProbeJSON.escapedSeparator(utf8, at: index)
                        guard let scalar else { continue }
                        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                        mark = index + length
                        bytes.append(contentsOf: ProbeJSON.unicodeEscape(scalar))
                        continue
                    }
                    guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                    mark = index + 1
                    bytes.append(UInt8(ascii: "\\"))
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                    case 0x08: bytes.append(UInt8(ascii: "b"))
                    case 0x0C: bytes.append(UInt8(ascii: "f"))
                    case 0x0A: bytes.append(UInt8(ascii: "n"))
                    case 0x0D: bytes.append(UInt8(ascii: "r"))
                    case 0x09: bytes.append(UInt8(ascii: "t"))
                    default:
                        bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                        bytes.append(Self.hexDigits[Int(byte >> 4)])
                        bytes.append(Self.hexDigits[Int(byte & 0x0F)])
                    }
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...]))
            }
            bytes.append(UInt8(ascii: "\""))
        }

        static let trueBytes = Array("true".utf8)
        static let falseBytes = Array("false".utf8)
        static let nullBytes = Array("null".utf8)
        static let hexDigits = Array("0123456789abcdef".utf8)
    }

    /// The encoder one value's `encode(to:)` gets: it may open one container, written as used
    /// and closed when `encode(to:)` returns.
    fileprivate final class Frame: Encoder {
        enum Opened { case nothing, object, array, single }

        let sink: Sink
        @exclusivity(unchecked) var opened = Opened.nothing
        /// Whether the open object or array has an element yet (a comma goes before the next).
        @exclusivity(unchecked) var hasElement = false
        /// The type of the value being written, and whether it is `AbsentAsNull` once asked.
        @exclusivity(unchecked) var valueType: Any.Type = Never.self
        @exclusivity(unchecked) var nullsDecided: Bool?

        /// Whether an absent value is written as null: asked at the first one, once per value
        /// (the conformance check is a runtime lookup; most values have no absent field).
        var writesNulls: Bool {
            if let nullsDecided { return nullsDecided }
            let decided = valueType is any AbsentAsNull.Type
            nullsDecided = decided
            return decided
        }
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(sink: Sink) { self.sink = sink }

        func open(_ kind: Opened) throws {
            guard opened == .nothing else { throw Unsupported() }
            opened = kind
            switch kind {
            case .object: sink.bytes.append(UInt8(ascii: "{"))
            case .array: sink.bytes.append(UInt8(ascii: "["))
            case .nothing, .single: break
            }
        }

        func close() throws {
            switch opened {
            case .object: sink.bytes.append(UInt8(ascii: "}"))
            case .array: sink.bytes.append(UInt8(ascii: "]"))
            case .single: break
            case .nothing: throw Unsupported()  // JSONEncoder has its own answer for an empty value
            }
        }

        /// The separator before an element of the open object or array.
        func nextElement() {
            if hasElement { sink.bytes.append(UInt8(ascii: ",")) }
            hasElement = true
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            let failed = (try? open(.object)) == nil
            return KeyedEncodingContainer(ObjectContainer<Key>(frame: self, failed: failed))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            let failed = (try? open(.array)) == nil
            return ArrayContainer(frame: self, failed: failed)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            let failed = (try? open(.single)) == nil
            return SingleContainer(frame: self, failed: failed)
        }
    }

    fileprivate struct ObjectContainer<Key: CodingKey>: DecidesAbsentValues {
        let frame: Frame
        /// The container could not be opened in order: every use throws.
        let failed: Bool
        var codingPath: [any CodingKey] { [] }

        private func key(_ key: Key) throws {
            guard !failed else { throw Unsupported() }
            frame.nextElement()
            frame.sink.writeString(key.stringValue)
            frame.sink.bytes.append(UInt8(ascii: ":"))
        }

        mutating func encodeNil(forKey key: Key) throws {
            try self.key(key)
            frame.sink.writeNull()
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try self.key(key)
            try frame.sink.write(value)
        }

        // The scalar requirements written directly: their defaults go through the generic one.
        mutating func encode(_ value: String, forKey key: Key) throws {
            try self.key(key)
            frame.sink.writeString(value)
        }

        mutating func encode(_ value: Int, forKey key: Key) throws {
            try self.key(key)
            frame.sink.writeInteger(value)
        }

        mutating func encode(_ value: Double, forKey key: Key) throws {
            try self.key(key)
            try frame.sink.writeDouble(value)
        }

        mutating func encode(_ value: Bool, forKey key: Key) throws {
            try self.key(key)
            frame.sink.writeBool(value)
        }

        // A synthesised encode(to:) writes an optional field only when present, as JSONEncoder
        // does, or as null for an `AbsentAsNull` value, as NullWritingEncoder does. The common
        // scalars are written directly; the others go through the generic one (DecidesAbsentValues).
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try absent(key) }
        }

        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try absent(key) }
        }

        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try absent(key) }
        }

        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try absent(key) }
        }

        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try absent(key) }
        }

        /// An absent value: null when the value being written is `AbsentAsNull`, else nothing.
        private func absent(_ key: Key) throws {
            guard !failed else { throw Unsupported() }
            guard frame.writesNulls else { return }
            try self.key(key)
            frame.sink.writeNull()
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        )
            -> KeyedEncodingContainer<NestedKey>
        {
            KeyedEncodingContainer(ObjectContainer<NestedKey>(frame: frame, failed: true))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            ArrayContainer(frame: frame, failed: true)
        }

        mutating func superEncoder() -> any Encoder { Refused() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { Refused() }
    }

    fileprivate struct ArrayContainer: UnkeyedEncodingContainer {
        let frame: Frame
        let failed: Bool
        var codingPath: [any CodingKey] { [] }
        private(set) var count = 0

        init(frame: Frame, failed: Bool) {
            self.frame = frame
            self.failed = failed
        }

        private mutating func element() throws {
            guard !failed else { throw Unsupported() }
            frame.nextElement()
            count += 1
        }

        mutating func encodeNil() throws {
            try element()
            frame.sink.writeNull()
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try element()
            try frame.sink.write(value)
        }

        mutating func encode(_ value: String) throws {
            try element()
            frame.sink.writeString(value)
        }

        mutating func encode(_ value: Int) throws {
            try element()
            frame.sink.writeInteger(value)
        }

        mutating func encode(_ value: Double) throws {
            try element()
            try frame.sink.writeDouble(value)
        }

        mutating func encode(_ value: Bool) throws {
            try element()
            frame.sink.writeBool(value)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        )
            -> KeyedEncodingContainer<NestedKey>
        {
            KeyedEncodingContainer(ObjectContainer<NestedKey>(frame: frame, failed: true))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            ArrayContainer(frame: frame, failed: true)
        }

        mutating func superEncoder() -> any Encoder { Refused() }
    }

    fileprivate struct SingleContainer: SingleValueEncodingContainer {
        let frame: Frame
        let failed: Bool
        var codingPath: [any CodingKey] { [] }
        private var written = false

        init(frame: Frame, failed: Bool) {
            self.frame = frame
            self.failed = failed
        }

        private mutating func once() throws {
            guard !failed, !written else { throw Unsupported() }
            written = true
        }

        mutating func encodeNil() throws {
            try once()
            frame.sink.writeNull()
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try once()
            try frame.sink.write(value)
        }

        // String is what every enum of the model writes (its raw value).
        mutating func encode(_ value: String) throws {
            try once()
            frame.sink.writeString(value)
        }

        mutating func encode(_ value: Int) throws {
            try once()
            frame.sink.writeInteger(value)
        }

        mutating func encode(_ value: Double) throws {
            try once()
            try frame.sink.writeDouble(value)
        }

        mutating func encode(_ value: Bool) throws {
            try once()
            frame.sink.writeBool(value)
        }
    }

    /// What a nested or super encoder request gets: every container it hands out throws.
    fileprivate struct Refused: Encoder {
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(ObjectContainer<Key>(frame: Frame(sink: Sink()), failed: true))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            ArrayContainer(frame: Frame(sink: Sink()), failed: true)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            SingleContainer(frame: Frame(sink: Sink()), failed: true)
        }
    }
}

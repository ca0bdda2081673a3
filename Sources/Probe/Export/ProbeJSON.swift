// The JSON shape of probe results: absent values of the model's types are written as null (a
// script reads `"sni": null` as "no SNI was sent"), dates as ISO 8601 with milliseconds.
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A type whose JSON has a key for every optional field, `null` where the value is absent, where
/// a synthesised `encode(to:)` leaves the key out. The type keeps its synthesised conformance
/// (one list of fields: its stored properties, or its `CodingKeys`); ProbeJSON's encoders, the
/// compact one and Foundation's through `NullWritingEncoder`, write the nulls. Other modules'
/// reports written in the same conventions (`ProbeExport.document`) conform too.
public protocol AbsentAsNull {}

extension Attempt: AbsentAsNull {}
extension Hop: AbsentAsNull {}
extension PhaseTimings: AbsentAsNull {}
extension Verdict: AbsentAsNull {}

/// Every timing is milliseconds from the start of the exchange (schema/probe.schema.json says so
/// once); a phase that did not happen is null, and so is the total when nothing happened (a
/// skipped attempt), rather than a 0 a script would average in. The fields are the synthesised
/// ones, in their order; only `total` is decided here.
extension PhaseTimings {
    private enum Field: String, CodingKey {
        case nameLookup, connect, tlsDone, preTransfer, firstByte, total
    }

    /// Nothing was timed: the attempt was not made.
    var isEmpty: Bool {
        total == 0 && nameLookup == nil && connect == nil && tlsDone == nil && preTransfer == nil && firstByte == nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Field.self)
        try c.encodeIfPresent(nameLookup, forKey: .nameLookup)
        try c.encodeIfPresent(connect, forKey: .connect)
        try c.encodeIfPresent(tlsDone, forKey: .tlsDone)
        try c.encodeIfPresent(preTransfer, forKey: .preTransfer)
        try c.encodeIfPresent(firstByte, forKey: .firstByte)
        try c.encodeIfPresent(isEmpty ? nil : total, forKey: .total)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Field.self)
        self.init(
            nameLookup: try c.decodeIfPresent(Double.self, forKey: .nameLookup),
            connect: try c.decodeIfPresent(Double.self, forKey: .connect),
            tlsDone: try c.decodeIfPresent(Double.self, forKey: .tlsDone),
            preTransfer: try c.decodeIfPresent(Double.self, forKey: .preTransfer),
            firstByte: try c.decodeIfPresent(Double.self, forKey: .firstByte),
            total: try c.decodeIfPresent(Double.self, forKey: .total) ?? 0)
    }
}

extension ProbeExport {
    /// `value` as one JSON document in `probe --format json`'s conventions, for other reports
    /// (the doctor's): keys in encoding order and compact, or indented with sorted keys when
    /// `pretty`; slashes not escaped; dates as ISO 8601 with milliseconds; the absent values of
    /// `AbsentAsNull` types as null. No newline at the end.
    ///
    /// - Returns: the bytes, nil when the value cannot be encoded.
    public static func document<T: Encodable>(_ value: T, pretty: Bool) -> Data? {
        if pretty { return try? ProbeJSON.foundation(value, pretty: true) }
        return (try? CompactJSONEncoder.encode(value)).map { Data($0) }
    }
}

public enum ProbeJSON {
    /// One JSON Lines record (compact JSON and its newline); nil when the value cannot be encoded.
    static func line<T: Encodable>(_ value: T) -> Data? {
        guard var bytes = try? CompactJSONEncoder.encode(value) else { return nil }
        bytes.append(0x0A)
        return Data(bytes)
    }

    /// `value` as Foundation's JSONEncoder writes it with `encoder(pretty:)`'s settings, the
    /// absent values of `AbsentAsNull` types as null.
    static func foundation<T: Encodable>(_ value: T, pretty: Bool) throws -> Data {
        escapingSeparators(try encoder(pretty: pretty).encode(NullWritingEncoder.Root(value: value)))
    }

    /// JSON text with DEL, every C1 control and U+2028 and U+2029 written as `\u` escapes, as
    /// the compact writer writes them. JSON allows them raw, but a reader that splits lines on
    /// Unicode's line breaks (U+0085 is one) would cut a record in two, and a terminal acts on
    /// C1. Their UTF-8 forms can only stand inside strings (JSON's structure is ASCII), so the
    /// bytes are replaced where they are found.
    public static func escapingSeparators(_ json: Data) -> Data {
        guard json.contains(where: { $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else { return json }
        let bytes = Array(json)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var index = 0
        while index < bytes.count {
            let (scalar, length) = escapedSeparator(bytes, at: index)
            if let scalar {
                out.append(contentsOf: unicodeEscape(scalar))
                index += length
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return Data(out)
    }

    /// The code point to escape that starts at `index` of UTF-8 `bytes` and its length in bytes:
    /// DEL, C1 (C2 80 to C2 9F), U+2028 and U+2029 (E2 80 A8, E2 80 A9); nil for anything else.
    static func escapedSeparator(
        _ bytes: some RandomAccessCollection<UInt8>, at index: Int
    ) -> (scalar: UInt32?, length: Int) {
        let start = bytes.index(bytes.startIndex, offsetBy: index)
        let count = bytes.count - index
        let byte = bytes[start]
        if byte == 0x7F { return (0x7F, 1) }
        if byte == 0xC2, count >= 2 {
            let next = bytes[bytes.index(after: start)]
            if (0x80...0x9F).contains(next) { return (UInt32(next), 2) }
        } else if byte == 0xE2, count >= 3 {
            let second = bytes[bytes.index(start, offsetBy: 1)]
            let third = bytes[bytes.index(start, offsetBy: 2)]
            if second == 0x80, third == 0xA8 || third == 0xA9 { return (0x2000 + UInt32(third) - 0x80, 3) }
        }
        return (nil, 1)
    }

    /// `\u` and four lower-case hex digits, as JSONEncoder writes the C0 controls.
    static func unicodeEscape(_ scalar: UInt32) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return [UInt8(ascii: "\\"), UInt8(ascii: "u")] + [12, 8, 4, 0].map { digits[Int(scalar >> $0 & 0xF)] }
    }

    /// The encoder `probe --format json` writes with: slashes not escaped, dates as `timestamp`,
    /// indented with sorted keys when `pretty`.
    public static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(timestamp(date))
        }
        return encoder
    }

    /// ISO 8601 with milliseconds, UTC (`2026-11-23T08:00:00.123Z`), as `ISO8601DateFormatter`
    /// writes it with internet date-time and fractional seconds: to the nearest millisecond, a
    /// half rounded up. Written by hand: a formatter per record was a tenth of a probe's CPU.
    public static func timestamp(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down)
        // Years 1583 to 9999 here (the formatter's calendar is Julian before October 1582);
        // anything else the way it was always written.
        guard milliseconds >= -12_212_553_600_000, milliseconds < 253_402_300_800_000 else {
            return distantTimestamp(date, milliseconds: milliseconds)
        }
        let whole = Int(milliseconds)
        var seconds = time_t(whole.quotientRoundingDown(by: 1000))
        let millis = whole - Int(seconds) * 1000
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var out: [UInt8] = []
        out.reserveCapacity(24)
        func put(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, digits: 4)
        out.append(UInt8(ascii: "-"))
        put(Int(parts.tm_mon) + 1, digits: 2)
        out.append(UInt8(ascii: "-"))
        put(Int(parts.tm_mday), digits: 2)
        out.append(UInt8(ascii: "T"))
        put(Int(parts.tm_hour), digits: 2)
        out.append(UInt8(ascii: ":"))
        put(Int(parts.tm_min), digits: 2)
        out.append(UInt8(ascii: ":"))
        put(Int(parts.tm_sec), digits: 2)
        out.append(UInt8(ascii: "."))
        put(millis, digits: 3)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// ISO 8601 to the second, UTC (`2026-11-23T08:00:00Z`), as `ISO8601DateFormatter` writes
    /// it by default: the moment rounded to the millisecond, then its milliseconds left out.
    public static func timestampToTheSecond(_ date: Date) -> String {
        var text = timestamp(date)
        text.removeSubrange(text.index(text.endIndex, offsetBy: -5)..<text.index(before: text.endIndex))
        return text
    }

    /// A date before 1583 or after 9999 as the formatter wrote it: the whole seconds by
    /// `Date.ISO8601FormatStyle` (Julian before October 1582, as the formatter's calendar), the
    /// rounded milliseconds by hand (the style truncates), and a year before 1 as the year of its
    /// era (`0250` for 250 BC, where the style writes `-0249`). The style's calendar stops at
    /// 4713 BC and about AD 500,000: dates beyond are written as the style clamps them.
    private static func distantTimestamp(_ date: Date, milliseconds: Double) -> String {
        let style = Date.ISO8601FormatStyle()
        guard milliseconds.isFinite, milliseconds.magnitude < 1e17 else {
            return Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
        }
        let whole = Int(milliseconds)
        let seconds = whole.quotientRoundingDown(by: 1000)
        var text = style.format(Date(timeIntervalSince1970: Double(seconds)))
        text.removeLast()  // the "Z", written after the milliseconds
        let millis = String(whole - seconds * 1000)
        text += "." + String(repeating: "0", count: 3 - millis.count) + millis + "Z"
        guard let dash = text.dropFirst().firstIndex(of: "-"), let year = Int(text[..<dash]), year <= 0 else {
            return text
        }
        let yearOfEra = String(1 - year)
        return String(repeating: "0", count: max(0, 4 - yearOfEra.count)) + yearOfEra + text[dash...]
    }
}

extension Int {
    /// Division rounding toward negative infinity (dates before 1970 have negative seconds).
    fileprivate func quotientRoundingDown(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}

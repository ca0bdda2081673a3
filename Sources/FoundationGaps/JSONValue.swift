// A JSON document as a tree, read with FoundationEssentials' JSONDecoder and written back, for the
// answers services send (hostile bytes) and the few objects ipdirect seals: JSONSerialization's job.
import FoundationEssentials

/// Any JSON value, as `JSONSerialization` gave it (dictionaries, arrays, `NSNumber`, `NSNull`),
/// with the reads ipdirect's parsers make of it.
///
/// `JSONValue(parsing:)` accepts what `JSONSerialization.jsonObject(with:)` accepted and refuses
/// what it refused: both are the same scanner underneath (UTF-8, UTF-16 and UTF-32 with or
/// without a byte-order mark, at most 512 levels deep). Unlike it, a repeated key keeps its first
/// value, and an integer beyond 64 bits is not wrapped (JSONValueTests pins both).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The document in `bytes` when its top level is an object or an array; nil for anything
    /// else: not JSON, a bare value (`5`, `"a"`), a number beyond `Double` (`1e400`), a lone
    /// surrogate escape. `JSONSerialization` without `.fragmentsAllowed` refused the same.
    public init?(parsing bytes: some Collection<UInt8>) {
        let data = bytes as? Data ?? Data(bytes)
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: data) else { return nil }
        switch value {
        case .object, .array: self = value
        default: return nil
        }
    }

    /// The members of an object; nil for any other value.
    public var object: [String: JSONValue]? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The elements of an array; nil for any other value.
    public var array: [JSONValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    /// The elements of an array of objects only, as `as? [[String: Any]]` read one; nil for an
    /// array holding anything else, and for any other value.
    public var objects: [[String: JSONValue]]? {
        guard let elements = array else { return nil }
        let objects = elements.compactMap(\.object)
        return objects.count == elements.count ? objects : nil
    }

    /// The text of a string; nil for any other value (a number is not a string, as `as? String`
    /// on `JSONSerialization`'s `NSNumber` was not).
    public var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// Whether the value is JSON's `null`.
    public var isNull: Bool { self == .null }

    /// The member `key` of an object; nil when it is absent or this is not an object.
    public subscript(key: String) -> JSONValue? { object?[key] }

    /// A number as `NSNumber.intValue` read it: fractions cut towards zero, `true` as 1 and
    /// `false` as 0; nil for strings, null, arrays and objects.
    public var intValue: Int? {
        switch self {
        case .number(let number): number.intValue
        case .bool(let flag): flag ? 1 : 0
        default: nil
        }
    }
}

/// A JSON number, kept as exactly as JSONDecoder reads it: an integer when it is one that fits 64
/// bits, else a `Double`.
public struct JSONNumber: Sendable, Equatable {
    enum Storage: Sendable, Equatable {
        case integer(Int64)
        case unsigned(UInt64)
        case double(Double)
    }

    let storage: Storage

    /// The integer `value`.
    public init(_ value: Int) { storage = .integer(Int64(value)) }

    /// The floating-point `value`.
    public init(_ value: Double) { storage = .double(value) }

    init(storage: Storage) { self.storage = storage }

    /// The number as `NSNumber.intValue` gave it: an integer as it is (one above `Int.max`
    /// wrapped to 64 bits), a fraction cut towards zero, a `Double` beyond `Int`'s range as
    /// `Int.min` (what the x86-64 conversion `NSNumber` used gives).
    public var intValue: Int {
        switch storage {
        case .integer(let value): Int(value)
        case .unsigned(let value): Int(truncatingIfNeeded: value)
        case .double(let value): Int(exactly: value.rounded(.towardZero)) ?? Int.min
        }
    }

    /// The number when JSONDecoder read it as a signed 64-bit integer (`1.0` and `1e2` too).
    public var int64: Int64? {
        if case .integer(let value) = storage { value } else { nil }
    }

    /// The number as a `Double`.
    public var doubleValue: Double {
        switch storage {
        case .integer(let value): Double(value)
        case .unsigned(let value): Double(value)
        case .double(let value): value
        }
    }
}

extension JSONNumber: CustomStringConvertible {
    /// As `NSNumber` described itself: `1`, `18446744073709551615`, `1.5`, `100.0`, `1e+30`.
    public var description: String {
        switch storage {
        case .integer(let value): String(value)
        case .unsigned(let value): String(value)
        case .double(let value): "\(value)"
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as `"\(value)"` printed what `JSONSerialization` gave: a string as its text, a
    /// number as `NSNumber` printed it, `true` as `1`, null as `<null>`, `[1, "a"]`, `["k": 1]`
    /// (members in key order here; a dictionary's order was arbitrary there).
    public var description: String { described(nested: false) }

    private func described(nested: Bool) -> String {
        switch self {
        case .null: return "<null>"
        case .bool(let flag): return flag ? "1" : "0"
        case .number(let number): return number.description
        case .string(let text): return nested ? text.debugDescription : text
        case .array(let elements):
            return "[" + elements.map { $0.described(nested: true) }.joined(separator: ", ") + "]"
        case .object(let members):
            guard !members.isEmpty else { return "[:]" }
            return "["
                + members.sorted { $0.key < $1.key }
                .map { "\($0.key.debugDescription): \($0.value.described(nested: true))" }
                .joined(separator: ", ") + "]"
        }
    }
}

extension JSONValue: Decodable {
    /// Reads one value of any kind, trying each in turn (JSONDecoder has no "whatever is there").
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Strings first: they are most of what services send (addresses), and each miss costs
        // a thrown error.
        if container.decodeNil() {
            self = .null
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .number(JSONNumber(storage: .integer(integer)))
        } else if let unsigned = try? container.decode(UInt64.self) {
            self = .number(JSONNumber(storage: .unsigned(unsigned)))
        } else if let double = try? container.decode(Double.self) {
            self = .number(JSONNumber(storage: .double(double)))
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

extension JSONValue: Encodable {
    /// Writes the value through an Encoder (the cache file's pretty, sorted JSONEncoder): numbers
    /// as they were read, so an integer stays an integer.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            switch number.storage {
            case .integer(let value): try container.encode(value)
            case .unsigned(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            }
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral members: (String, JSONValue)...) {
        self = .object(Dictionary(members, uniquingKeysWith: { $1 }))
    }
}

extension JSONValue {
    /// The value as JSON text in UTF-8, written as `JSONSerialization.data(withJSONObject:options:
    /// [.sortedKeys])` wrote it: no spaces, `/` escaped as `\/`, control characters as `\n`, `\t`
    /// or `\u001f`, other text as it is, and each object's keys in `JSONValue.keyPrecedes` order.
    /// The request bytes ipdirect seals and signs depend on every one of these.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .number(let number):
            // JSONSerialization wrote an integral Double without its `.0`.
            if case .double(let value) = number.storage, let integral = Int64(exactly: value) {
                out += Array(String(integral).utf8)
            } else {
                out += Array(number.description.utf8)
            }
        case .string(let text): Self.writeString(text, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted(by: Self.keyPrecedes).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, into out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out += [UInt8(ascii: "\\"), byte]
            case 0x08: out += Array(#"\b"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0C: out += Array(#"\f"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x00..<0x20: out += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether key `a` goes before `b` in `.sortedKeys` order as `JSONSerialization` has it (a
    /// numeric, case-insensitive comparison in the system locale's collation, ties put lower
    /// case first) for keys of ASCII letters, digits, `_` and `-`, which is what ipdirect
    /// seals (`dn`, `q`, `cip`, `sdns-*`): `_` before `-` before digits before letters, a run of
    /// digits by its value. Other characters go after those, by code point.
    public static func keyPrecedes(_ a: String, _ b: String) -> Bool {
        let left = collationKey(a)
        let right = collationKey(b)
        if left.primary != right.primary { return left.primary.lexicographicallyPrecedes(right.primary) }
        if left.tie != right.tie { return left.tie.lexicographicallyPrecedes(right.tie) }
        return Array(a.unicodeScalars.map(\.value)).lexicographicallyPrecedes(b.unicodeScalars.map(\.value))
    }

    /// A key's primary weights (case folded, digit runs as numbers) and the weights that break a
    /// tie between keys equal at that level (fewer leading zeros first, then lower case first).
    private static func collationKey(_ key: String) -> (primary: [UInt64], tie: [UInt64]) {
        var primary: [UInt64] = []
        var tie: [UInt64] = []
        var scalars = Array(key.unicodeScalars)[...]
        while let scalar = scalars.first {
            switch scalar {
            case "_": primary.append(1)
            case "-": primary.append(2)
            case "0"..."9":
                let digits = scalars.prefix { ("0"..."9").contains($0) }
                scalars = scalars.dropFirst(digits.count - 1)
                let significant = digits.drop { $0 == "0" }
                // Numbers with more digits than fit are ordered by length, then digit by digit.
                primary.append(3)
                primary.append(UInt64(significant.count))
                primary += significant.map { UInt64($0.value) }
                tie.append(UInt64(digits.count - significant.count))
            case "a"..."z": primary.append(100 + UInt64(scalar.value)); tie.append(0)
            case "A"..."Z": primary.append(100 + UInt64(scalar.value) + 32); tie.append(1)
            default: primary.append(1_000 + UInt64(scalar.value))
            }
            scalars = scalars.dropFirst()
        }
        return (primary, tie)
    }
}

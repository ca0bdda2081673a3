// Foundation's JSONEncoder with one policy added: the absent values of `AbsentAsNull` types are
// written as null. The pretty exports, and the compact one's fallback, encode through it.
import FoundationEssentials

/// Wraps the encoder a value is given: its containers pass everything to Foundation's, and an
/// `AbsentAsNull` value's `encodeIfPresent` of nil writes null. Nested values are wrapped in
/// turn (through the base's super encoders), so the policy reaches the model's types wherever
/// they sit; scalars and the types Foundation writes its own way (dates by its strategy, data,
/// URLs, decimals) go to the base containers as they are.
struct NullWritingEncoder: Encoder {
    /// The value handed to JSONEncoder: it encodes `value` through a `NullWritingEncoder`.
    struct Root<Value: Encodable>: Encodable {
        var value: Value

        func encode(to encoder: any Encoder) throws {
            try NullWritingEncoder.encode(value, to: encoder)
        }
    }

    let base: any Encoder
    /// Whether the value being encoded is `AbsentAsNull`.
    let writesNulls: Bool
    var codingPath: [any CodingKey] { base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

    /// Encodes `value` into `base`, wrapped.
    static func encode<T: Encodable>(_ value: T, to base: any Encoder) throws {
        try value.encode(to: NullWritingEncoder(base: base, writesNulls: T.self is any AbsentAsNull.Type))
    }

    /// Whether Foundation writes a `T` by itself (a scalar, or a type it has its own way for).
    static func isLeaf<T>(_: T.Type) -> Bool {
        T.self == String.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self
            || T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self
            || T.self == Float.self || T.self == Int8.self || T.self == Int16.self || T.self == Int32.self
            || T.self == Int64.self || T.self == UInt.self || T.self == UInt8.self || T.self == UInt16.self
            || T.self == UInt32.self || T.self == UInt64.self
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Keyed(base: base.container(keyedBy: type), writesNulls: writesNulls))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        Unkeyed(base: base.unkeyedContainer())
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        Single(encoder: base)
    }

    struct Keyed<Key: CodingKey>: DecidesAbsentValues {
        var base: KeyedEncodingContainer<Key>
        let writesNulls: Bool
        var codingPath: [any CodingKey] { base.codingPath }

        mutating func encodeNil(forKey key: Key) throws {
            try base.encodeNil(forKey: key)
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if NullWritingEncoder.isLeaf(T.self) {
                try base.encode(value, forKey: key)
            } else {
                try NullWritingEncoder.encode(value, to: base.superEncoder(forKey: key))
            }
        }

        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            if let value {
                try encode(value, forKey: key)
            } else if writesNulls {
                try base.encodeNil(forKey: key)
            }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(
                Keyed<NestedKey>(base: base.nestedContainer(keyedBy: keyType, forKey: key), writesNulls: false))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(base: base.nestedUnkeyedContainer(forKey: key))
        }

        mutating func superEncoder() -> any Encoder {
            NullWritingEncoder(base: base.superEncoder(), writesNulls: false)
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            NullWritingEncoder(base: base.superEncoder(forKey: key), writesNulls: false)
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        var base: any UnkeyedEncodingContainer
        var codingPath: [any CodingKey] { base.codingPath }
        var count: Int { base.count }

        mutating func encodeNil() throws {
            try base.encodeNil()
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            if NullWritingEncoder.isLeaf(T.self) {
                try base.encode(value)
            } else {
                try NullWritingEncoder.encode(value, to: base.superEncoder())
            }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(base: base.nestedContainer(keyedBy: keyType), writesNulls: false))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            Unkeyed(base: base.nestedUnkeyedContainer())
        }

        mutating func superEncoder() -> any Encoder {
            NullWritingEncoder(base: base.superEncoder(), writesNulls: false)
        }
    }

    /// Takes the base's single-value container only for what it writes itself: anything else
    /// encodes into the base encoder, wrapped, as Foundation would encode it there.
    struct Single: SingleValueEncodingContainer {
        let encoder: any Encoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil() throws {
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            if NullWritingEncoder.isLeaf(T.self) {
                var container = encoder.singleValueContainer()
                try container.encode(value)
            } else {
                try NullWritingEncoder.encode(value, to: encoder)
            }
        }
    }
}

/// A keyed container whose `encodeIfPresent` of every scalar goes through its generic one, where
/// it decides what an absent value writes: each scalar has a requirement of its own, whose
/// standard default leaves the key out whatever the container would do.
protocol DecidesAbsentValues: KeyedEncodingContainerProtocol {}

extension DecidesAbsentValues {
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try generic(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try generic(value, key) }

    /// The generic requirement (a call with a concrete type would pick the overload again).
    private mutating func generic<T: Encodable>(_ value: T?, _ key: Key) throws {
        try encodeIfPresent(value, forKey: key)
    }
}

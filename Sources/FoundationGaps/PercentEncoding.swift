// Percent-encoding and decoding of text by its UTF-8 bytes (RFC 3986), for query values the
// services sign and for paths the lab and the agent read back.

extension StringProtocol {
    /// The text with every UTF-8 byte escaped as `%XX` (upper-case hex) except ASCII letters,
    /// digits and the ASCII characters in `kept`; what Foundation's
    /// `addingPercentEncoding(withAllowedCharacters: .alphanumerics + kept)` gives for ASCII input,
    /// and each byte of a non-ASCII character escaped.
    public func percentEncoded(keeping kept: String = "") -> String {
        let extra = Set(kept.utf8.filter { $0 < 0x80 })
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(byte)
            case _ where extra.contains(byte):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The text with each `%XX` replaced by its byte; nil when a `%` is not followed by two hex
    /// digits or the bytes are not UTF-8, as Foundation's `removingPercentEncoding`.
    public var percentDecoded: String? {
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var bytes = utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else {
                return nil
            }
            out.append(high << 4 | low)
        }
        return String(validating: out, as: UTF8.self)
    }
}

private let hexDigits = Array("0123456789ABCDEF".utf8)

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

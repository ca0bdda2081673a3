// An IP address as a value: parsed once where outside bytes enter (HTTPDNS answers, system DNS,
// a DNS server, a URL's literal host, the cache file) and trusted everywhere after.

/// An IPv4 or IPv6 address that has been checked: answers, attempts, hops, pins and exports
/// carry this, never the text a server sent.
///
/// Made only by `IPLiteral`'s strict parse (`init?(_:)`), so holding one is proof the text was an
/// address literal. Its text is the canonical form `inet_ntop` writes (IPv6 in lowercase, zeros
/// compressed): what JSON, HAR and the screen show, and what `Codable` reads and writes (the
/// plain string, as before addresses had a type).
public struct IPAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// IPv4 or IPv6.
    public let family: IPFamily
    /// The canonical text: `192.0.2.7`, `2001:db8::1`.
    public let text: String

    /// Parses an address literal strictly (see `IPLiteral`); nil for anything else, a name,
    /// brackets, a port, a zone or a byte after the address included.
    public init?(_ text: String) {
        guard let parsed = IPLiteral.parse(text) else { return nil }
        self = parsed
    }

    /// Made by the parser only, from text `inet_ntop` wrote.
    init(checked text: String, family: IPFamily) {
        self.text = text
        self.family = family
    }

    public var description: String { text }

    /// As a URL's authority or a `host:port` writes it: IPv6 in brackets (`[::1]`).
    public var authorityForm: String { family == .v6 ? "[\(text)]" : text }

    /// `127.0.0.1:443`, `[::1]:443`.
    public func hostPort(_ port: Int) -> String { "\(authorityForm):\(port)" }

    /// A link-local address (169.254.0.0/16, fe80::/10, or the IPv4 range mapped into IPv6) or
    /// a cloud metadata address (100.100.100.200, fd00:ec2::254): where a redirect could lead a
    /// prober to a host's instance credentials.
    public var isLinkLocalOrMetadata: Bool { IPLiteral.isLinkLocalOrMetadata(text) }

    /// Orders by family (IPv4 first), then by text: a stable order for tables, not a numeric one.
    public static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
        lhs.family != rhs.family ? lhs.family == .v4 : lhs.text < rhs.text
    }
}

extension IPAddress: Codable {
    /// Reads the plain string and parses it as `init?(_:)` does: a file or a JSON document is
    /// outside bytes too.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the string is not an address literal.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = IPAddress(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an IP address")
        }
        self = address
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

extension IPAddress: ExpressibleByStringLiteral {
    /// An address written in the source (the lab's, a test's); a literal that is not an
    /// address is a programming error and stops the program.
    public init(stringLiteral text: String) {
        guard let address = IPAddress(text) else { preconditionFailure("not an IP address literal: \(text)") }
        self = address
    }
}

extension Sequence<IPAddress> {
    /// The addresses' texts, for sentences and tables: `127.0.0.1, ::1`.
    public func joined(separator: String) -> String { map(\.text).joined(separator: separator) }
}

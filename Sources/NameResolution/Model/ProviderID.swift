// The name of the provider an answer came from (`alicloud`, `doh-json (dns.google)`), as a type
// rather than a bare String: encoded as that same string, so every output keeps its bytes.

/// Which provider gave an answer, as outputs and screens name it. Encodes and decodes as the
/// plain string (`"provider": "alicloud"`).
public struct ProviderID: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// The provider's name as it calls itself (`HTTPDNSProvider.name`).
    public init(_ name: String) { rawValue = name }

    public init(stringLiteral value: String) { rawValue = value }

    /// `--provider system`: getaddrinfo standing in for HTTPDNS.
    public static let system = ProviderID(ProviderKind.system.rawValue)

    public var description: String { rawValue }
}

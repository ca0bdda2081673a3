// DNS over HTTPS in the DNS wire format (RFC 8484): a c-ares query sent as ?dns=BASE64URL by GET
// or as the body of a POST, the application/dns-message reply read by c-ares, A and AAAA side by side.
import CurlTransport
import FoundationEssentials
import TerminalText

/// How RFC 8484 queries travel.
public enum DoHMethod: String, Sendable, Codable, CaseIterable {
    /// `GET /dns-query?dns=BASE64URL(query)` (cacheable by HTTP caches; the RFC's first form).
    case get
    /// `POST /dns-query` with the query as an `application/dns-message` body.
    case post
}

/// An RFC 8484 resolver (`--provider doh`).
public struct DoHWireProvider: HTTPDNSProvider {
    /// The full query URL, e.g. `https://dns.alidns.com/dns-query`.
    public let endpoint: String
    public let method: DoHMethod
    let transport: HTTPDNSTransport

    public var name: String { "doh" }

    static let mediaType = "application/dns-message"

    init(endpoint: String, method: DoHMethod, transport: HTTPDNSTransport) {
        self.endpoint = endpoint
        self.method = method
        self.transport = transport
    }

    /// The GET URL carrying `query`: base64url without padding, as RFC 8484 section 4.1 asks.
    func url(carrying query: [UInt8]) -> String {
        let separator = endpoint.contains("?") ? "&" : "?"
        return "\(endpoint)\(separator)dns=\(Self.base64URL(query))"
    }

    /// The GET URL of the query this provider sends for `host` (id 0, padded), for a command
    /// that repeats it with curl; nil when the name cannot be put in a query.
    public func queryURL(for host: String, family: IPFamily) -> String? {
        (try? DNSMessage.query(host, family: family, id: 0, padded: true)).map(url(carrying:))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    public func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        async let v4 = families.contains(.v4) ? ask(host, .v4) : nil
        async let v6 = families.contains(.v6) ? ask(host, .v6) : nil
        let (a, b) = await (v4, v6)
        // "No record of that family" is an answer too (cached as empty), not a failure.
        let parts = try answeredFamilies([a, b])
        let answered = Set(parts.map(\.family))
        // NOERROR without addresses: the name exists (NODATA), which is not NXDOMAIN.
        if parts.allSatisfy({ $0.addresses.sent == 0 }) { throw .noData(host: host, families: answered) }
        let rawV4 = parts.filter { $0.family == .v4 }.flatMap(\.addresses.raw)
        let rawV6 = parts.filter { $0.family == .v6 }.flatMap(\.addresses.raw)
        // Each family keeps its own records' TTL (one query per family).
        var ttl = FamilyTTL()
        for part in parts { ttl[part.family] = part.addresses.ttl ?? 60 }
        return try ProviderAnswer.screened(
            host: host, rawV4: rawV4, rawV6: rawV6, ttl: ttl, answered: answered, ms: parts.map(\.ms).max() ?? 0,
            sent: [
                .v4: parts.filter { $0.family == .v4 }.map(\.addresses.sent).reduce(0, +),
                .v6: parts.filter { $0.family == .v6 }.map(\.addresses.sent).reduce(0, +),
            ])
    }

    private func ask(
        _ host: String, _ family: IPFamily
    ) async -> Result<(family: IPFamily, addresses: DNSReplyAddresses, ms: Double), ResolutionError> {
        do throws(ResolutionError) {
            // RFC 8484 4.1: id 0, so identical queries are identical URLs for HTTP caches.
            let query: [UInt8]
            do {
                // Padded (RFC 8467): over TLS a query's length would otherwise hint at the name.
                query = try DNSMessage.query(host, family: family, id: 0, padded: true)
            } catch {
                throw ResolutionError.misconfigured("cannot ask the DoH server for \(host): the reply \(error.clause)")
            }
            let accept = HeaderField(name: "Accept", value: Self.mediaType)
            let (response, ms): (TransferRecord, Double)
            switch method {
            case .get:
                (response, ms) = try await transport.get(
                    url(carrying: query), headers: [accept], display: endpoint)
            case .post:
                (response, ms) = try await transport.get(
                    endpoint, headers: [accept, HeaderField(name: "Content-Type", value: Self.mediaType)],
                    display: endpoint, body: query)
            }
            guard (200..<300).contains(response.status) else {
                throw ResolutionError.http(status: response.status, code: serviceCode(response.body))
            }
            let type = response.header("Content-Type")?.lowercased() ?? ""
            guard type.hasPrefix(Self.mediaType) else {
                throw ResolutionError.malformed(
                    detail:
                        "the DoH server \(endpoint) sent \(type.isEmpty ? "no Content-Type" : TerminalText.quoted(type)), not \(Self.mediaType) (\(preview(response.body))): check that it speaks RFC 8484; for a JSON API use the doh-json provider"
                )
            }
            do {
                let addresses = try DNSMessage.addresses(in: response.body, host: host, family: family, id: 0)
                return .success((family, addresses, ms))
            } catch .noData {
                return .success((family, DNSReplyAddresses(raw: [], ttl: nil, aliases: []), ms))
            } catch .rcode(let rcode) {
                // An RCODE inside HTTP 200 is the DNS server's answer, told by its name.
                throw ResolutionError.dnsRcode(server: "the DoH server \(endpoint)", host: host, rcode: rcode)
            } catch {
                throw ResolutionError.malformed(
                    detail:
                        "the DoH server \(endpoint)'s reply for \(host) \(error.clause): check that the endpoint speaks RFC 8484 DNS messages"
                )
            }
        } catch {
            return .failure(error)
        }
    }
}

// DNS over HTTPS, JSON flavour (Google, Cloudflare, AliDNS): GET ?name=H&type=A|AAAA with
// Accept: application/dns-json, one request per family, asked side by side.
import CurlTransport
import FoundationEssentials
import FoundationGaps

/// A DoH JSON resolver.
public struct DoHJSONProvider: HTTPDNSProvider {
    /// The full query URL, e.g. `https://dns.google/resolve`.
    public let endpoint: String
    let transport: HTTPDNSTransport

    public var name: String { "doh-json" }

    init(endpoint: String, transport: HTTPDNSTransport) {
        self.endpoint = endpoint
        self.transport = transport
    }

    /// The URL asking for `host`'s records of `family` (`?name=H&type=A`).
    public func url(for host: String, family: IPFamily) -> String {
        let separator = endpoint.contains("?") ? "&" : "?"
        return "\(endpoint)\(separator)name=\(queryEscaped(host))&type=\(family == .v4 ? "A" : "AAAA")"
    }

    public func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        async let v4 = families.contains(.v4) ? ask(host, .v4) : nil
        async let v6 = families.contains(.v6) ? ask(host, .v6) : nil
        let (a, b) = await (v4, v6)
        let parts = try answeredFamilies([a, b])
        // Status 0 without addresses: the name exists (NODATA), which is not NXDOMAIN.
        if parts.allSatisfy({ $0.raw.isEmpty }) { throw .noData(host: host, families: Set(parts.map(\.family))) }
        let rawV4 = parts.filter { $0.family == .v4 }.flatMap(\.raw)
        let rawV6 = parts.filter { $0.family == .v6 }.flatMap(\.raw)
        // Each family keeps its own records' TTL (one query per family).
        var ttl = FamilyTTL()
        for part in parts { ttl[part.family] = part.ttl ?? 60 }
        return try ProviderAnswer.screened(
            host: host, rawV4: rawV4, rawV6: rawV6, ttl: ttl, answered: Set(parts.map(\.family)),
            ms: parts.map(\.ms).max() ?? 0)
    }

    struct Family: Sendable {
        var family: IPFamily
        var raw: [String]
        var ttl: Int?
        var ms: Double
    }

    private func ask(_ host: String, _ family: IPFamily) async -> Result<Family, ResolutionError> {
        do throws(ResolutionError) {
            let (response, ms) = try await transport.get(
                url(for: host, family: family), headers: [HeaderField(name: "Accept", value: "application/dns-json")],
                display: endpoint)
            guard (200..<300).contains(response.status) else {
                throw ResolutionError.http(status: response.status, code: serviceCode(response.body))
            }
            let (raw, ttl) = try Self.parse(
                response.body, host: host, family: family, server: "the DoH server \(endpoint)")
            return .success(Family(family: family, raw: raw, ttl: ttl, ms: ms))
        } catch {
            return .failure(error)
        }
    }

    /// Parses `{"Status":0,"Answer":[{"name","type","TTL","data"}]}`, keeping the records
    /// of the asked type (CNAME steps are skipped).
    ///
    /// - Parameter server: how to name the server when `Status` is a DNS error.
    static func parse(
        _ body: [UInt8], host: String, family: IPFamily, server: String = "the DoH server"
    ) throws(ResolutionError) -> (
        raw: [String], ttl: Int?
    ) {
        guard let object = JSONValue(parsing: body)?.object else {
            throw .malformed(detail: "expected a DoH JSON object, got \(preview(body))")
        }
        guard let status = integer(object["Status"]) else { throw .malformed(detail: "no 'Status' in the answer") }
        // `Status` is the RCODE (NXDOMAIN, SERVFAIL...): the server's answer, told by its name.
        if status != 0 { throw .dnsRcode(server: server, host: host, rcode: DNSRcode(code: status)) }
        let wanted = family == .v4 ? 1 : 28
        var raw: [String] = []
        var ttl: Int?
        for record in object["Answer"]?.objects ?? [] where integer(record["type"]) == wanted {
            raw.append(record["data"]?.string ?? record["data"]?.description ?? "")
            if let t = integer(record["TTL"]) { ttl = min(ttl ?? t, t) }
        }
        return (raw, ttl)
    }
}

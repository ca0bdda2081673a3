// Tencent DNSPod D+ HTTPDNS: GET /d?dn=H answers "ip1;ip2,ttl" as plain text, and with
// type=addrs "v4ips,ttl-v6ips,ttl" for both families at once.
import CurlTransport
import Foundation

/// Tencent's DNSPod D+ service (the free public one, or an enterprise one by account).
public struct TencentProvider: HTTPDNSProvider {
    public let endpoint: String
    let account: String?
    let transport: HTTPDNSTransport

    public var name: String { "tencent" }

    init(endpoint: String, account: String?, transport: HTTPDNSTransport) {
        var base = trimmedBase(endpoint)
        if base.hasSuffix("/d") { base.removeLast(2) }
        self.endpoint = base
        self.account = account.flatMap { $0.isEmpty ? nil : $0 }
        self.transport = transport
    }

    func url(for host: String, families: Set<IPFamily>) -> String {
        var url = "\(endpoint)/d?dn=\(queryEscaped(host))&ttl=1"
        if families.contains(.v6) { url += "&type=addrs" }
        if let account { url += "&id=\(queryEscaped(account))" }
        return url
    }

    public func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        let (response, ms) = try await transport.get(url(for: host, families: families), display: endpoint)
        guard (200..<300).contains(response.status) else {
            throw ResolutionError.fromStatus(response.status, code: serviceCode(response.body), account: account)
        }
        return try Self.parse(response.body, host: host, families: families, ms: ms)
    }

    /// Parses `ip;ip,ttl` or, for type=addrs, `v4;v4,ttl-v6;v6,ttl` (`0` for an empty side).
    static func parse(
        _ body: [UInt8], host: String, families: Set<IPFamily>, ms: Double
    ) throws(ResolutionError)
        -> ProviderAnswer
    {
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty || text == "0" || text == "0-0" { throw .noSuchName(host: host, families: families) }
        if text.hasPrefix("{") || text.hasPrefix("<") || text.contains("\n") || text.contains("|") {
            throw .malformed(detail: "expected 'ip;ip,ttl', got \(preview(body))")
        }
        let addrs = families.contains(.v6)
        let halves = addrs ? splitFamilies(text) : [text]
        if addrs, halves.count != 2 {
            throw .malformed(detail: "expected 'v4,ttl-v6,ttl', got \(preview(body))")
        }
        var ttl: Int?
        // The TTL follows the last comma; junk in the address list may hold commas of its own.
        func part(_ s: String) -> [String] {
            var list = Substring(s)
            if let comma = s.lastIndex(of: ","), let t = Int(s[s.index(after: comma)...]) {
                ttl = min(ttl ?? t, t)
                list = s[..<comma]
            }
            return list.split(separator: ";").map(String.init).filter { !$0.isEmpty && $0 != "0" }
        }
        let first = part(halves[0])
        let second = halves.count > 1 ? part(halves[1]) : []
        // Without type=addrs a single list comes back; its family is whatever each item is.
        var rawV4: [String] = []
        var rawV6: [String] = []
        if halves.count > 1 {
            rawV4 = first
            rawV6 = second
        } else {
            for item in first {
                if item.contains(":") { rawV6.append(item) } else { rawV4.append(item) }
            }
        }
        return try ProviderAnswer.screened(
            host: host, rawV4: families.contains(.v4) ? rawV4 : [], rawV6: families.contains(.v6) ? rawV6 : [],
            ttl: ttl ?? 60, answered: families, ms: ms)
    }

    /// Splits `v4part-v6part` at the '-' that ends the IPv4 part: the one after its TTL
    /// (`,60-`) or after an empty side's `0`. Junk such as `not-an-ip` holds dashes too, so
    /// the first '-' is not good enough.
    static func splitFamilies(_ text: String) -> [String] {
        var index = text.startIndex
        while let dash = text[index...].firstIndex(of: "-") {
            let before = text[..<dash]
            let afterComma = before.lastIndex(of: ",").map { before[before.index(after: $0)...] }
            if before == "0" || (afterComma.map { !$0.isEmpty && $0.allSatisfy(\.isNumber) } ?? false) {
                return [String(before), String(text[text.index(after: dash)...])]
            }
            index = text.index(after: dash)
        }
        return [text]
    }
}

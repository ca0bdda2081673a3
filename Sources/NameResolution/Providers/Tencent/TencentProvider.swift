// Tencent DNSPod D+ HTTPDNS: GET /d?dn=H answers "ip1;ip2,ttl|clientip" as plain text (with
// type=addrs "v4ips,ttl-v6ips,ttl"); the production form seals the name and answer with DES or AES.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import WireCiphers

/// Tencent's DNSPod D+ service: the plain debug form, the encrypted production form (DES or
/// AES, by account), or the HTTPS form with a token. Requests follow the DNSPod Android SDK
/// (`RequestBuilder`, `DesHttpDnsConfig`, `AesHttpDnsConfig`, `HttpsDnsConfig`).
public struct TencentProvider: BatchResolving {
    /// How queries travel.
    enum Form: Sendable, Equatable {
        /// `/d?dn=H`: the public debug service (119.29.29.29).
        case plain
        /// `/d?dn=ENC&id=ID&alg=des|aes`: name and answer sealed with the key.
        case encrypted(TencentAlgorithm, key: String)
        /// `https://.../d?dn=H&id=ID&token=T`.
        case token(String)
    }

    public let endpoint: String
    let account: String?
    let form: Form
    let transport: HTTPDNSTransport
    /// At most this many names a request (the SDK's batch lines have no documented limit;
    /// five keeps the URL short and matches alicloud).
    public static let batchLimit = 5

    public var name: String {
        switch form {
        case .plain: return "tencent"
        case .encrypted(let algorithm, _): return "tencent (\(algorithm == .des ? "des" : "aes-cbc"))"
        case .token: return "tencent (token)"
        }
    }

    init(endpoint: String, account: String?, transport: HTTPDNSTransport, form: Form = .plain) {
        var base = trimmedBase(endpoint)
        if base.hasSuffix("/d") { base.removeLast(2) }
        self.endpoint = base
        self.account = account.flatMap { $0.isEmpty ? nil : $0 }
        self.transport = transport
        self.form = form
    }

    /// The provider a configuration asks for: the token form when IPDIRECT_HTTPDNS_TOKEN is
    /// set, the encrypted form when a key is, else the plain form.
    ///
    /// - Throws: `.setup` naming what is missing (the account, the key), a cipher tencent has
    ///   not, or a key that cannot seal with the cipher.
    static func make(
        _ configuration: ResolverConfiguration, endpoint: String, transport: HTTPDNSTransport
    ) throws(ResolutionError) -> TencentProvider {
        let account = configuration.account.flatMap { $0.isEmpty ? nil : $0 }
        if let token = configuration.token, !token.isEmpty {
            guard account != nil else {
                throw .setup(.missing(.account, provider: .tencent, form: "HTTPS form (with a token)"))
            }
            return TencentProvider(endpoint: endpoint, account: account, transport: transport, form: .token(token))
        }
        let algorithm: TencentAlgorithm?
        switch configuration.cipher {
        case .none: algorithm = configuration.key == nil ? nil : .des
        case .des: algorithm = .des
        case .aesCBC: algorithm = .aes
        case .aesGCM: throw .setup(.cipherNotSpoken(.aesGCM, provider: .tencent, instead: [.des, .aesCBC]))
        }
        guard let algorithm else { return TencentProvider(endpoint: endpoint, account: account, transport: transport) }
        guard let key = configuration.key, !key.isEmpty else {
            throw .setup(.missing(.key, provider: .tencent, form: "encrypted form"))
        }
        guard account != nil else {
            throw .setup(.missing(.account, provider: .tencent, form: "encrypted form"))
        }
        // Check the key (and, for DES, OpenSSL's legacy provider) now rather than per query.
        do {
            _ = try algorithm.seal("check", key: key)
        } catch {
            throw .setup(
                .unusable(.cipher, value: algorithm == .des ? "des" : "aes-cbc", provider: .tencent, reason: "\(error)")
            )
        }
        return TencentProvider(
            endpoint: endpoint, account: account, transport: transport, form: .encrypted(algorithm, key: key))
    }

    /// The type parameter for `families`: A alone, AAAA alone, or both (`addrs`).
    static func type(_ families: Set<IPFamily>) -> String? {
        families == [.v6] ? "aaaa" : families.contains(.v6) ? "addrs" : nil
    }

    /// The request URL for `hosts` (comma-joined, sealed as one string in the encrypted form).
    func url(for hosts: [String], families: Set<IPFamily>) throws(ResolutionError) -> String {
        let names = hosts.joined(separator: ",")
        let type = Self.type(families).map { "&type=\($0)" } ?? ""
        let id = account.map { "&id=\(queryEscaped($0))" } ?? ""
        switch form {
        case .plain:
            return "\(endpoint)/d?dn=\(queryEscaped(names))&clientip=1&ttl=1\(id)\(type)"
        case .encrypted(let algorithm, let key):
            let sealed: String
            do {
                sealed = try algorithm.seal(names, key: key)
            } catch {
                throw .misconfigured("the tencent key cannot seal the query: \(error)")
            }
            return "\(endpoint)/d?dn=\(sealed)&ip=&clientip=1&ttl=1\(id)\(type)&alg=\(algorithm.rawValue)"
        case .token(let token):
            return
                "\(endpoint)/d?dn=\(queryEscaped(names))&ip=&clientip=1&ttl=1\(id)&token=\(queryEscaped(token))\(type)"
        }
    }

    public func request(
        _ hosts: [String], families: Set<IPFamily>
    ) async throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>] {
        // The display form never carries the query: it holds the token or the sealed name.
        let (response, ms) = try await transport.get(url(for: hosts, families: families), display: endpoint)
        guard (200..<300).contains(response.status) else {
            throw ResolutionError.fromStatus(response.status, code: serviceCode(response.body), account: account)
        }
        var text = String(decoding: response.body, as: UTF8.self).trimmingWhitespaceAndNewlines()
        if case .encrypted(let algorithm, let key) = form {
            if text.isEmpty {
                throw .undecryptable(
                    detail: "tencent answered nothing to the encrypted query: check the account (the AUTH_ID) and "
                        + "IPDIRECT_HTTPDNS_KEY, and that the cipher matches the key (des or aes-cbc)")
            }
            do {
                text = try algorithm.open(text, key: key)
            } catch {
                throw .undecryptable(
                    detail: "the answer could not be decrypted: check the \(algorithm == .des ? "DES" : "AES") key "
                        + "(IPDIRECT_HTTPDNS_KEY) and the cipher (\(error))")
            }
        }
        let server = URLComponents(string: endpoint)?.host
        return try Self.parseLines(text, hosts: hosts, families: families, ms: ms, server: server)
    }

    /// Reads a whole answer: one `ips,ttl|clientip` line for one name, or one
    /// `name.:ips,ttl|clientip` line per name for several (DNSPod SDK `ResponseParser`).
    static func parseLines(
        _ text: String, hosts: [String], families: Set<IPFamily>, ms: Double, server: String?
    ) throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>] {
        if text.hasPrefix("{") || text.hasPrefix("<") {
            throw .malformed(detail: "expected 'ip;ip,ttl', got \(preview(Array(text.utf8)))")
        }
        let addrs = type(families) == "addrs"
        var byName: [String: String] = [:]
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        for line in lines {
            if let mark = line.firstRange(of: ".:") {
                byName[line[..<mark.lowerBound].lowercased()] = String(line[mark.upperBound...])
            } else if hosts.count == 1, lines.count == 1 {
                byName[hosts[0].lowercased()] = line
            } else {
                throw .malformed(detail: "expected 'name.:ip;ip,ttl' lines, got \(preview(Array(line.utf8)))")
            }
        }
        var results: [String: Result<ProviderAnswer, ResolutionError>] = [:]
        for host in hosts {
            guard var line = byName[host.lowercased()] else {
                results[host] = .failure(.noSuchName(host: host, families: families))
                continue
            }
            var clientIP: String?
            if let bar = line.lastIndex(of: "|") {
                clientIP = String(line[line.index(after: bar)...])
                line = String(line[..<bar])
            }
            do throws(ResolutionError) {
                var answer = try parse(Array(line.utf8), host: host, families: families, ms: ms, addrs: addrs)
                answer.clientIP = ProviderAnswer.shownClientIP(clientIP)
                answer.server = server
                results[host] = .success(answer)
            } catch {
                results[host] = .failure(error)
            }
        }
        return results
    }

    /// Parses `ip;ip,ttl` or, for type=addrs, `v4;v4,ttl-v6;v6,ttl` (`0` for an empty side).
    static func parse(
        _ body: [UInt8], host: String, families: Set<IPFamily>, ms: Double, addrs: Bool? = nil
    ) throws(ResolutionError)
        -> ProviderAnswer
    {
        let text = String(decoding: body, as: UTF8.self).trimmingWhitespaceAndNewlines()
        if text.isEmpty || text == "0" || text == "0-0" { throw .noSuchName(host: host, families: families) }
        if text.hasPrefix("{") || text.hasPrefix("<") || text.contains("\n") || text.contains("|") {
            throw .malformed(detail: "expected 'ip;ip,ttl', got \(preview(body))")
        }
        let addrs = addrs ?? families.contains(.v6)
        let halves = addrs ? splitFamilies(text) : [text]
        if addrs, halves.count != 2 {
            throw .malformed(detail: "expected 'v4,ttl-v6,ttl', got \(preview(body))")
        }
        var ttls: [Int?] = []
        // The TTL follows the last comma; junk in the address list may hold commas of its own.
        func part(_ s: String) -> [String] {
            var list = Substring(s)
            var ttl: Int?
            if let comma = s.lastIndex(of: ","), let t = Int(s[s.index(after: comma)...]) {
                ttl = t
                list = s[..<comma]
            }
            ttls.append(ttl)
            return list.split(separator: ";").map(String.init).filter { !$0.isEmpty && $0 != "0" }
        }
        let first = part(halves[0])
        let second = halves.count > 1 ? part(halves[1]) : []
        // `type=addrs` gives each family its TTL (`v4ips,ttl-v6ips,ttl`); a single list gives one for both.
        let ttl =
            halves.count > 1
            ? FamilyTTL(v4: ttls[0] ?? 60, v6: ttls[1] ?? 60).only(families)
            : FamilyTTL(ttls[0] ?? 60, for: families)
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
            ttl: ttl, answered: families, ms: ms)
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

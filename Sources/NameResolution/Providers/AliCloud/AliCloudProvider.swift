// Alibaba Cloud HTTPDNS, legacy API: /{account}/d, signed /{account}/sign_d whenever a
// secret is configured, and batch /{account}/resolve or signed /sign_resolve (5 names a request).
import CurlTransport
import FoundationEssentials
import FoundationGaps
import TerminalText
import WireCiphers

/// Alibaba Cloud's HTTPDNS service, legacy API (`--provider alicloud-legacy`).
public struct AliCloudProvider: HTTPDNSProvider {
    /// Where queries go: the endpoint, or the service IPs `/ss` names (signed with the secret).
    let servers: AliCloudServiceIPs
    public let account: String
    let secret: String?
    let transport: HTTPDNSTransport
    /// Whose requests are sent (`--sdk`): ipdirect's, or the C SDK 2.2.5's.
    let profile: SDKProfile
    /// The client address the answer is asked for (`--client-ip`, `ip=`); nil for this machine's.
    let clientIP: String?
    /// The `sid` of the C SDK's requests, one per run as it keeps one per client.
    let sessionID: String
    /// The wall clock the signature's `t` is read from.
    let now: @Sendable () -> Date
    /// The batch API takes at most this many names a request.
    public static let batchLimit = 5

    public var name: String {
        let parts = (secret == nil ? [] : ["signed"]) + profile.nameParts(clientIP: clientIP)
        return parts.isEmpty ? "alicloud" : "alicloud (\(parts.joined(separator: ", ")))"
    }

    /// Queries go to `endpoint` only.
    init(endpoint: String, account: String, secret: String?, transport: HTTPDNSTransport) {
        self.init(
            servers: AliCloudServiceIPs(endpoint: Self.base(endpoint, account: account)), account: account,
            secret: secret, transport: transport)
    }

    /// Queries go to `servers`.
    init(
        servers: AliCloudServiceIPs, account: String, secret: String?, transport: HTTPDNSTransport,
        profile: SDKProfile = .ipdirect, clientIP: String? = nil, sessionID: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.now = now
        self.profile = profile
        self.clientIP = clientIP
        self.sessionID = sessionID ?? AliCloudV2Provider.newSessionID()
        self.servers = servers
        self.account = account
        self.secret = secret.flatMap { $0.isEmpty ? nil : $0 }
        self.transport = transport
    }

    /// The base URL of an endpoint, a pasted query URL (".../{account}/d") accepted too.
    static func base(_ endpoint: String, account: String) -> String {
        var base = trimmedBase(endpoint)
        for suffix in ["/\(account)/d", "/\(account)/sign_d", "/\(account)/resolve"] where base.hasSuffix(suffix) {
            base.removeLast(suffix.count)
        }
        return base
    }

    /// The provider a configuration asks for: its endpoint, or without one the service IPs the
    /// region's start IPs name (`/ss`, signed when a secret is set), as for v2.
    static func make(
        _ configuration: ResolverConfiguration, account: String
    ) throws(ResolutionError) -> AliCloudProvider {
        try configuration.sdk.check(for: .alicloudLegacy)
        let secret = configuration.secret.flatMap { $0.isEmpty ? nil : $0 }
        let endpoint = configuration.endpoint.flatMap {
            $0.isEmpty ? nil : Self.base(ProviderPreset.named($0)?.endpoint ?? $0, account: account)
        }
        return AliCloudProvider(
            servers: try AliCloudServiceIPs.make(
                configuration, account: account, endpoint: endpoint, legacySecret: secret),
            account: account, secret: secret, transport: HTTPDNSTransport(configuration), profile: configuration.sdk,
            clientIP: configuration.clientIP)
    }

    /// The `s` parameter: lowercase hex of md5("host-secret-t"), as the lab checks it.
    static func signature(host: String, secret: String, expiry: Int) -> String {
        AliCloudLegacySigning.signature(host: host, secret: secret, expiry: String(expiry))
    }

    static func query(_ families: Set<IPFamily>) -> String {
        families == [.v6] ? "6" : families == [.v4] ? "4" : "4,6"
    }

    /// The path and query for one name; with a secret, the signed form.
    func target(for host: String, families: Set<IPFamily>, now: Date? = nil) -> String {
        target(api: "d", host: host, families: families, now: now ?? self.now())
    }

    /// The path and query for a batch of names: `/resolve`, or with a secret `/sign_resolve`,
    /// signed over the comma-joined names as they go in `host=` (C SDK 2.2.5,
    /// src/hdns_resolver.c `hdns_resv_send_req` and src/hdns_sign.c).
    func batchTarget(for hosts: [String], families: Set<IPFamily>, now: Date? = nil) -> String {
        target(api: "resolve", host: hosts.joined(separator: ","), families: families, now: now ?? self.now())
    }

    /// `api` is `d` or `resolve`; with a secret it becomes `sign_d` or `sign_resolve`, `s` = md5 of
    /// `host-secret-t` over `host` as sent before URL encoding.
    private func target(api: String, host: String, families: Set<IPFamily>, now: Date) -> String {
        let path = "/\(queryEscaped(account))/\(secret == nil ? api : "sign_" + api)?"
        let expiry = Int(now.timeIntervalSince1970) + profile.signatureLifetime
        let s = secret.map { Self.signature(host: host, secret: $0, expiry: expiry) }
        // `ip=` asks for the answer of another client address (src/hdns_resolver.c).
        let ip = clientIP.map { "&ip=\($0)" } ?? ""
        guard profile == .c22 else {
            let q = "host=\(queryEscaped(host))&query=\(Self.query(families))"
            return path + q + (s.map { "&t=\(expiry)&s=\($0)" } ?? "") + ip
        }
        // The C SDK 2.2.5 (src/hdns_resolver.c `hdns_resv_send_req`, alibaba.json): `host query
        // platform sdk_version sid`, then `s t`, then `ip`, every value URL-encoded (4%2C6).
        let platform = profile.platform
        return path + "host=\(queryEscaped(host))&query=\(queryEscaped(Self.query(families)))"
            + "&platform=\(platform.name)&sdk_version=\(queryEscaped(platform.version))&sid=\(sessionID)"
            + (s.map { "&s=\($0)&t=\(expiry)" } ?? "") + ip
    }

    /// Sends `target` to the service IP in use (rotating as v2 does) and checks the status.
    private func get(_ target: String) async throws(ResolutionError) -> (TransferRecord, Double, String) {
        try await servers.ask { base throws(ResolutionError) in
            // The display form never carries the query: it may hold the signature.
            let (response, ms) = try await transport.get(
                base.url + target, headers: [HeaderField(name: "User-Agent", value: profile.userAgent)],
                display: base.url, checkName: base.checkName)
            try checkStatus(response)
            return (response, ms, base.label)
        }
    }

    public func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        let (response, ms, server) = try await get(target(for: host, families: families))
        var answer = try Self.parseSingle(response.body, host: host, families: families, ms: ms)
        answer.server = server
        return answer
    }

    func checkStatus(_ response: TransferRecord) throws(ResolutionError) {
        guard (200..<300).contains(response.status) else {
            throw ResolutionError.fromStatus(response.status, code: serviceCode(response.body), account: account)
        }
    }

    /// Parses `{"host","ips":[],"ipsv6":[],"ttl","origin_ttl","client_ip"}`.
    static func parseSingle(
        _ body: [UInt8], host: String, families: Set<IPFamily>, ms: Double
    ) throws(ResolutionError)
        -> ProviderAnswer
    {
        guard let object = JSONValue(parsing: body)?.object else {
            throw .malformed(detail: "expected a JSON object, got \(preview(body))")
        }
        if let code = serviceCode(in: object) { throw ResolutionError.fromStatus(200, code: code, account: nil) }
        let v4 = families.contains(.v4) ? try strings(object["ips"], field: "ips") : []
        let v6 = families.contains(.v6) ? try strings(object["ipsv6"], field: "ipsv6") : []
        guard let ttl = integer(object["ttl"]) else { throw .malformed(detail: "no 'ttl' in the answer") }
        var answer = try ProviderAnswer.screened(
            host: host, rawV4: v4, rawV6: v6, ttl: FamilyTTL(ttl, for: families), answered: families, ms: ms,
            clientIP: object["client_ip"])
        // The C SDK keeps both (src/hdns_resolver.c, parse_resv_resp_from_json).
        answer.originTTL = integer(object["origin_ttl"]).map { FamilyTTL($0, for: families) }
        answer.extra = decodedExtra(object["extra"])
        return answer
    }

    public func resolveBatch(
        _ hosts: [String], families: Set<IPFamily>
    ) async -> [String: Result<
        ProviderAnswer, ResolutionError
    >] {
        // A signed account's batch goes signed, through /sign_resolve, as the C SDK sends it.
        await resolveInChunks(hosts, limit: Self.batchLimit) { chunk throws(ResolutionError) in
            let (response, ms, server) = try await get(batchTarget(for: chunk, families: families))
            var results = try Self.parseBatch(response.body, hosts: chunk, families: families, ms: ms)
            for (host, result) in results {
                if case .success(var answer) = result {
                    answer.server = server
                    results[host] = .success(answer)
                }
            }
            return results
        }
    }

    /// Parses `{"dns":[{"host","client_ip","ips":[],"type":1|28,"ttl"}]}`.
    static func parseBatch(
        _ body: [UInt8], hosts: [String], families: Set<IPFamily>, ms: Double
    ) throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>] {
        guard let object = JSONValue(parsing: body)?.object, let records = object["dns"]?.objects
        else { throw .malformed(detail: "expected {\"dns\":[...]}, got \(preview(body))") }
        var v4: [String: [String]] = [:]
        var v6: [String: [String]] = [:]
        var ttls: [String: FamilyTTL] = [:]
        var clientIPs: [String: JSONValue] = [:]
        var originTTLs: [String: FamilyTTL] = [:]
        var extras: [String: String] = [:]
        for record in records {
            guard let host = record["host"]?.string?.lowercased() else { continue }
            clientIPs[host] = record["client_ip"]
            if let extra = decodedExtra(record["extra"]) { extras[host] = extra }
            let ips = try strings(record["ips"], field: "ips")
            let type = integer(record["type"]) ?? 1
            let family: IPFamily = type == 28 ? .v6 : .v4
            if family == .v6 { v6[host, default: []] += ips } else { v4[host, default: []] += ips }
            // One record per name and type, each with its TTL, which the C SDK keeps per type.
            if let ttl = integer(record["ttl"]) { ttls[host, default: FamilyTTL()][family] = ttl }
            if let origin = integer(record["origin_ttl"]) { originTTLs[host, default: FamilyTTL()][family] = origin }
        }
        var results: [String: Result<ProviderAnswer, ResolutionError>] = [:]
        for host in hosts {
            let key = host.lowercased()
            do throws(ResolutionError) {
                var answer = try ProviderAnswer.screened(
                    host: host, rawV4: families.contains(.v4) ? v4[key] ?? [] : [],
                    rawV6: families.contains(.v6) ? v6[key] ?? [] : [], ttl: ttls[key] ?? FamilyTTL(),
                    answered: families, ms: ms, clientIP: clientIPs[key])
                answer.originTTL = originTTLs[key]?.only(families)
                answer.extra = extras[key]
                results[host] = .success(answer)
            } catch {
                results[host] = .failure(error)
            }
        }
        return results
    }
}

/// The most characters of `extra` kept: it is shown in tables and exports.
let extraLimit = 512

/// `extra` as the C SDK reads it: the service HTML-encodes it, and the SDK decodes `&amp;`,
/// `&lt;`, `&gt;`, `&quot;` and `&apos;` (aliyun/alibabacloud-httpdns-c-sdk, src/hdns_resolver.c,
/// `decode_html`), once. Escaped and cut where it enters, as every text a service sends.
func decodedExtra(_ value: JSONValue?) -> String? {
    guard let text = value?.string, !text.isEmpty else { return nil }
    let entities: [(String, String)] = [
        ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"),
    ]
    var decoded = ""
    var rest = Substring(text)
    while let amp = rest.firstIndex(of: "&") {
        decoded += rest[..<amp]
        rest = rest[amp...]
        if let (entity, character) = entities.first(where: { rest.hasPrefix($0.0) }) {
            decoded += character
            rest = rest.dropFirst(entity.count)
        } else {
            decoded += "&"
            rest = rest.dropFirst()
        }
    }
    decoded += rest
    return TerminalText.escaped(decoded, cutAt: extraLimit)
}

/// A JSON array of strings; anything else in it is kept as text so it is named as junk.
func strings(_ value: JSONValue?, field: String) throws(ResolutionError) -> [String] {
    guard let value, !value.isNull else { return [] }
    guard let array = value.array else { throw .malformed(detail: "'\(field)' is not a list") }
    return array.map { $0.string ?? $0.description }
}

/// A JSON number (`true` as 1, a fraction cut) or numeric string as an integer.
func integer(_ value: JSONValue?) -> Int? {
    if let number = value?.intValue { return number }
    if let text = value?.string { return Int(text) }
    return nil
}

/// The start of a body for an error message, escaped.
func preview(_ body: [UInt8]) -> String {
    body.isEmpty ? "an empty body" : TerminalText.quoted(bytes: body)
}

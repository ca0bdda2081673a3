// Alibaba Cloud HTTPDNS v2, what the current SDKs speak: GET /v2/d, signed with HMAC-SHA256,
// optionally sealed with AES-CBC (m=1) or AES-GCM (m=2), up to 5 names a request.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import TerminalText
import WireCiphers

/// Alibaba Cloud's HTTPDNS service, v2 API (`--provider alicloud`).
///
/// Requests follow iOS SDK 3.4.2 (`HttpdnsRemoteResolver.m`) where the SDKs differ; each
/// difference is named where it matters.
public struct AliCloudV2Provider: BatchResolving {
    public let account: String
    /// Hex secret for the signature; nil sends unsigned requests.
    let secret: String?
    let mode: AliCloudV2Mode
    /// The hex-decoded AES key, for `mode` other than plain.
    let key: [UInt8]
    let sdns: [String: String]
    let servers: AliCloudServiceIPs
    let transport: HTTPDNSTransport
    /// The wall clock; the signature's expiry is read from it.
    let now: @Sendable () -> Date
    /// Chosen once per run, as the SDKs choose one per app launch (12 base62 characters).
    let sessionID: String
    /// Whose requests are sent (`--sdk`).
    let profile: SDKProfile
    /// The client address the answer is asked for (`--client-ip`, `cip`); nil for this machine's.
    let clientIP: String?
    /// At most this many names go in one request (`HTTPDNS_PRE_RESOLVE_BATCH_SIZE`).
    public static let batchLimit = 5

    public var name: String {
        var parts: [String] = []
        if secret != nil { parts.append("signed") }
        switch mode {
        case .plain: break
        case .aesCBC: parts.append("aes-cbc")
        case .aesGCM: parts.append("aes-gcm")
        }
        parts += profile.nameParts(clientIP: clientIP)
        return parts.isEmpty ? "alicloud" : "alicloud (\(parts.joined(separator: ", ")))"
    }

    /// - Throws: `.setup` for a secret or key that is not hex, a profile the provider or its
    ///   settings do not fit, a cipher v2 has not, or a malformed `sdns` key.
    init(
        servers: AliCloudServiceIPs, account: String, secret: String?, cipher: HTTPDNSCipher, key: String?,
        sdns: [String: String], transport: HTTPDNSTransport, now: @escaping @Sendable () -> Date = { Date() },
        profile: SDKProfile = .ipdirect, clientIP: String? = nil, sessionID: String? = nil
    ) throws(ResolutionError) {
        try profile.check(for: .alicloud)
        if profile == .node10, cipher != .none || !sdns.isEmpty {
            throw .setup(
                .sdkSendsNoExtras(
                    profile, cipher: cipher == .none ? nil : cipher, sdns: sdns.map { "\($0.key)=\($0.value)" }.sorted()
                ))
        }
        self.profile = profile
        self.clientIP = clientIP
        self.servers = servers
        self.account = account
        self.transport = transport
        self.now = now
        let secret = secret.flatMap { $0.isEmpty ? nil : $0 }
        if let secret, Hex.decode(secret) == nil {
            throw .setup(.notInForm(.secret, provider: .alicloud, form: "hex, copied as the console shows it"))
        }
        self.secret = secret
        switch cipher {
        case .none: mode = .plain
        case .aesCBC: mode = .aesCBC
        case .aesGCM: mode = .aesGCM
        case .des:
            throw .setup(.cipherNotSpoken(.des, provider: .alicloud, instead: [.aesCBC, .aesGCM, .none]))
        }
        if mode != .plain {
            guard let key, !key.isEmpty else {
                throw .setup(.missing(.key, provider: .alicloud, form: "\(cipher.rawValue) form"))
            }
            guard let bytes = Hex.decode(key), [16, 24, 32].contains(bytes.count) else {
                throw .setup(
                    .notInForm(.key, provider: .alicloud, form: "32 hex digits (16 bytes), as the console shows it"))
            }
            self.key = bytes
        } else {
            self.key = []
        }
        for (name, value) in sdns {
            // The Android SDK drops sdns keys and values outside these characters; we refuse them instead.
            let keyOK =
                !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }
            let valueOK =
                !value.isEmpty && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_=".contains($0)) }
            guard keyOK, valueOK else {
                throw .setup(
                    .unusable(
                        .sdns, value: "\(name)=\(value)", provider: .alicloud,
                        reason: "keys take letters, digits, '-' and '_'; values also '='"))
            }
        }
        self.sdns = sdns
        self.sessionID = sessionID ?? Self.newSessionID()
    }

    /// A session id as the SDKs make one per launch: 12 base62 characters.
    static func newSessionID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<12).map { _ in alphabet[Int.random(in: alphabet.indices)] })
    }

    static func query(_ families: Set<IPFamily>) -> String {
        // iOS 3.4.2 always sends q (4, 6 or 4,6); Android leaves it out for IPv4 only.
        families == [.v6] ? "6" : families == [.v4] ? "4" : "4,6"
    }

    /// The path and query of a request for `hosts`, exactly as the profile's SDK sends it.
    ///
    /// - Throws: `.misconfigured` when the key cannot seal.
    func target(for hosts: [String], families: Set<IPFamily>) throws(ResolutionError) -> String {
        let expiry = Int(now().timeIntervalSince1970) + profile.signatureLifetime
        switch profile {
        case .node10: return nodeTarget(for: hosts, families: families, expiry: expiry)
        case .android26: return try androidTarget(for: hosts, families: families, expiry: expiry)
        case .ipdirect, .ios34, .c22: break
        }
        // iOS 3.4.2 (HttpdnsRemoteResolver.m): `id m exp v`, then `enc` or the clear `dn q
        // sdns-*` (URL-encoded), then `s`, then the unsigned `sid net sdk`.
        var secretParameters: [(String, String)] = [("dn", hosts.joined(separator: ",")), ("q", Self.query(families))]
        secretParameters += sdns.sorted { $0.key < $1.key }.map { ("sdns-\($0.key)", $0.value) }
        // No SDK read sends `cip`; the service takes it as a signed parameter (DESIGN, v2).
        if let clientIP { secretParameters.append(("cip", clientIP)) }
        var signed: [String: String] = ["id": account, "m": String(mode.rawValue), "exp": String(expiry), "v": "1.0"]
        var query = "id=\(queryEscaped(account))&m=\(mode.rawValue)&exp=\(expiry)&v=1.0"
        if mode == .plain {
            for (name, value) in secretParameters {
                signed[name] = value
                query += "&\(name)=\(queryEscaped(value))"
            }
        } else {
            let enc = try sealed(Dictionary(secretParameters, uniquingKeysWith: { $1 }))
            signed["enc"] = enc
            query += "&enc=\(enc)"
        }
        if let secret, let signature = AliCloudV2Signing.signature(signed, secret: secret) {
            query += "&s=\(signature)"
        }
        query +=
            profile == .ios34
            ? "&sid=\(sessionID)&net=wifi&sdk=ios_\(profile.platform.version)"
            : "&sid=\(sessionID)&sdk=\(IPDirectVersion.sdkTag)"
        return "/v2/d?" + query
    }

    /// The Node.js SDK 1.0's request (src/network.ts `buildSingleResolveURL`; alibaba.json):
    /// `id dn q m`, values as they are, then only when signing `exp` (now + 300) and `s` over
    /// `id dn q m exp`; no `v`, no identity parameters. Plain mode only.
    private func nodeTarget(for hosts: [String], families: Set<IPFamily>, expiry: Int) -> String {
        var signed = [
            "id": account, "dn": hosts.joined(separator: ","), "q": Self.query(families), "m": String(mode.rawValue),
        ]
        if let clientIP { signed["cip"] = clientIP }
        var query = "id=\(account)&dn=\(signed["dn"]!)&q=\(signed["q"]!)&m=\(mode.rawValue)"
        if let clientIP { query += "&cip=\(clientIP)" }
        if let secret {
            signed["exp"] = String(expiry)
            query += "&exp=\(expiry)"
            if let signature = AliCloudV2Signing.signature(signed, secret: secret) { query += "&s=\(signature)" }
        }
        return "/v2/d?" + query
    }

    /// The Android SDK 2.6's request (ResolveHostHelper.java `getPath`, `buildQueryStr`): `id m`,
    /// then the clear `dn q sdns-*` as they are (no `q` for IPv4 alone) or `enc`, then `v exp`
    /// (always), `s` when signing, then `sdk=android_VERSION` and `sid`.
    private func androidTarget(
        for hosts: [String], families: Set<IPFamily>, expiry: Int
    ) throws(ResolutionError) -> String {
        let q = families == [.v4] ? nil : Self.query(families)
        var clear: [(String, String)] = [("dn", hosts.joined(separator: ","))]
        if let q { clear.append(("q", q)) }
        clear += sdns.sorted { $0.key < $1.key }.map { ("sdns-\($0.key)", $0.value) }
        if let clientIP { clear.append(("cip", clientIP)) }
        var signed: [String: String] = ["id": account, "m": String(mode.rawValue), "v": "1.0", "exp": String(expiry)]
        var query = "id=\(account)&m=\(mode.rawValue)"
        if mode == .plain {
            for (name, value) in clear {
                signed[name] = value
                query += "&\(name)=\(value)"
            }
        } else {
            let enc = try sealed(Dictionary(clear, uniquingKeysWith: { $1 }))
            signed["enc"] = enc
            query += "&enc=\(enc)"
        }
        query += "&v=1.0&exp=\(expiry)"
        if let secret, let signature = AliCloudV2Signing.signature(signed, secret: secret) {
            query += "&s=\(signature)"
        }
        return "/v2/d?" + query + "&sdk=android_\(profile.platform.version)&sid=\(sessionID)"
    }

    /// `enc`: hex of the sealed JSON of the parameters that travel only inside it.
    private func sealed(_ object: [String: String]) throws(ResolutionError) -> String {
        // Byte for byte what JSONSerialization wrote with .sortedKeys: the SDK vectors check it.
        let json = JSONValue.object(object.mapValues(JSONValue.string)).encoded()
        do {
            return Hex.encode(try mode.seal(json, key: key))
        } catch {
            throw .misconfigured("the AES key cannot seal the query: \(error)")
        }
    }

    /// One request for up to 5 names, tried on each service IP in turn while the failure is
    /// the service IP's (connection, timeout, HTTP 5xx, `ServiceLevelDeny`), as the SDKs rotate.
    public func request(
        _ hosts: [String], families: Set<IPFamily>
    ) async throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>] {
        let target = try target(for: hosts, families: families)
        return try await servers.ask { base throws(ResolutionError) in
            // The display form never carries the query: it holds the signature.
            let (response, ms) = try await transport.get(
                base.url + target, headers: [HeaderField(name: "User-Agent", value: profile.userAgent)],
                display: base.url, checkName: base.checkName)
            return try parse(
                status: response.status, body: response.body,
                date: response.header("Date").map { TerminalText.escaped($0, cutAt: 64) }, hosts: hosts,
                families: families, ms: ms, server: base.label)
        }
    }

    /// Reads a response (its status, body and `Date` header): errors by `code`, `mode` 1/2
    /// `data` opened with the key, then answers.
    func parse(
        status: Int, body: [UInt8], date: String?, hosts: [String], families: Set<IPFamily>, ms: Double,
        server: String
    ) throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>] {
        let object = JSONValue(parsing: body)?.object
        let code = serviceCode(in: object)
        guard (200..<300).contains(status), code == "success" else {
            if let code, code != "success" {
                throw AliCloudV2Errors.explain(
                    code: code, status: status, account: account, signed: secret != nil, serverDate: date, now: now())
            }
            if !(200..<300).contains(status) { throw .http(status: status, code: nil) }
            throw .malformed(detail: "expected {\"code\":\"success\",...}, got \(preview(body))")
        }
        let dataObject: [String: JSONValue]
        let responseMode = integer(object?["mode"]) ?? 0
        switch AliCloudV2Mode(rawValue: responseMode) {
        case .plain:
            guard let plain = object?["data"]?.object else {
                throw .malformed(detail: "no 'data' object in the answer")
            }
            dataObject = plain
        case let sealed?:
            dataObject = try open(object?["data"], mode: sealed)
        case nil:
            throw .malformed(detail: "the answer is sealed with mode \(responseMode), which ipdirect does not know")
        }
        return try Self.answers(dataObject, hosts: hosts, families: families, ms: ms, server: server)
    }

    /// Opens `data` = base64(IV ‖ ciphertext) of the data object.
    func open(_ data: JSONValue?, mode: AliCloudV2Mode) throws(ResolutionError) -> [String: JSONValue] {
        guard !key.isEmpty else {
            throw .undecryptable(
                detail:
                    "the answer is encrypted (mode \(mode.rawValue)) but no AES key is set: set IPDIRECT_HTTPDNS_KEY")
        }
        guard let text = data?.string, let sealed = Data(base64Encoded: text) else {
            throw .undecryptable(
                detail: "the encrypted answer is not base64: the service or something on the way mangled it")
        }
        let plain: [UInt8]
        do {
            plain = try mode.open(Array(sealed), key: key)
        } catch {
            throw .undecryptable(detail: "the answer could not be decrypted: check the AES key (\(error))")
        }
        guard let object = JSONValue(parsing: plain)?.object else {
            throw .undecryptable(detail: "the answer could not be decrypted: check the AES key (it opened to non-JSON)")
        }
        return object
    }

    /// `{"cip","answers":[{"dn","v4":{"ips","ttl","extra","no_ip_code"},"v6":{...}}]}`, one
    /// result per asked name.
    static func answers(
        _ data: [String: JSONValue], hosts: [String], families: Set<IPFamily>, ms: Double, server: String
    ) throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>] {
        // iOS 3.4.2 reads cip from each answer's own "data" (always absent); the service puts it
        // beside "answers", where Android and we read it.
        let clientIP = data["cip"]
        guard let answers = data["answers"]?.objects else {
            throw .malformed(detail: "no 'answers' list in the answer")
        }
        var byName: [String: [String: JSONValue]] = [:]
        var unasked: [String] = []
        let asked = Set(hosts.map { $0.lowercased() })
        for answer in answers {
            guard let name = answer["dn"]?.string?.lowercased() else { continue }
            if asked.contains(name) { byName[name] = answer } else { unasked.append(name) }
        }
        var results: [String: Result<ProviderAnswer, ResolutionError>] = [:]
        for host in hosts {
            guard let answer = byName[host.lowercased()] else {
                results[host] =
                    unasked.isEmpty
                    ? .failure(.noSuchName(host: host, families: families))
                    : .failure(
                        .malformed(
                            detail:
                                "the service answered for \(unasked.prefix(3).map { TerminalText.quoted($0) }.joined(separator: ", ")), "
                                + "which was not asked, and not for \(host)"))
                continue
            }
            do throws(ResolutionError) {
                var raw: [IPFamily: [String]] = [:]
                var ttl = FamilyTTL()
                var notes: [String] = []
                for family in families.sorted(by: { $0.rawValue < $1.rawValue }) {
                    let field = family == .v4 ? "v4" : "v6"
                    guard let part = answer[field]?.object else { continue }
                    raw[family] = try strings(part["ips"], field: "\(field).ips")
                    // TTL <= 0 means 60, as both SDKs do (Android `HostItem`).
                    let given = integer(part["ttl"]) ?? 0
                    ttl[family] = given <= 0 ? 60 : given
                    if let code = part["no_ip_code"]?.string, !code.isEmpty {
                        notes.append(
                            "no \(family == .v4 ? "A" : "AAAA") record (the service says \(TerminalText.quoted(code)))")
                    } else if raw[family]?.isEmpty ?? true {
                        notes.append("no \(family == .v4 ? "A" : "AAAA") record")
                    }
                    if let extra = part["extra"], !extra.isNull {
                        let text = extra.string ?? extra.description
                        if !text.isEmpty { notes.append("extra: \(TerminalText.quoted(text))") }
                    }
                }
                var result = try ProviderAnswer.screened(
                    host: host, rawV4: raw[.v4] ?? [], rawV6: raw[.v6] ?? [], ttl: ttl,
                    answered: families, ms: ms, clientIP: clientIP)
                result.server = server
                result.notes += notes
                results[host] = .success(result)
            } catch {
                results[host] = .failure(error)
            }
        }
        return results
    }
}

/// Every error code the v2 service returns, as a sentence with what to do.
enum AliCloudV2Errors {
    static func explain(
        code: String, status: Int, account: String, signed: Bool, serverDate: String?, now: Date
    ) -> ResolutionError {
        let shown = TerminalText.quoted(code)
        let sentence: String
        switch code {
        case "InvalidSignature":
            sentence =
                "alicloud refused the signature (InvalidSignature): check IPDIRECT_HTTPDNS_SECRET is this account's "
                + "secret, in hex as the console shows it"
        case "SignatureExpired":
            sentence =
                "alicloud says the signature had expired when it arrived (SignatureExpired): "
                + clockSkew(serverDate: serverDate, now: now)
        case "InvalidDuration":
            sentence =
                "alicloud says the signature's expiry is too far ahead (InvalidDuration): "
                + clockSkew(serverDate: serverDate, now: now)
        case "UnsignedInterfaceDisabled":
            sentence =
                "account \(account) accepts signed requests only (UnsignedInterfaceDisabled): set IPDIRECT_HTTPDNS_SECRET "
                + "(or 'secret' in the configuration file) to the account's secret"
        case "InvalidAccount":
            sentence =
                "alicloud does not serve account \(account) (InvalidAccount: unknown, or no service level): check the "
                + "account ID against the console"
        case "AccountNotExists":
            sentence =
                "account \(account) does not exist or is disabled (AccountNotExists): check the account ID, and that HTTPDNS is "
                + "enabled for it in the console"
        case "InvalidHost":
            sentence =
                "alicloud refused a name as invalid (InvalidHost): ask for host names only, no scheme, port or path"
        case "TooManyHosts":
            sentence = "alicloud takes at most 5 names a request (TooManyHosts): ask for fewer names at once"
        case "ServiceLevelDeny":
            sentence =
                "this service IP does not serve the account's service level (ServiceLevelDeny): give no endpoint so "
                + "service discovery picks the account's service IPs"
        case "MissingArgument":
            sentence =
                "alicloud says the request lacks a parameter (MissingArgument): check the account ID, and the names asked"
        default:
            sentence =
                "alicloud refused the request with code \(shown) (HTTP \(status)): see the HTTPDNS error codes in "
                + "Alibaba Cloud's documentation"
        }
        return .service(code: code, sentence: sentence)
    }

    /// How far this machine's clock is from the service's, read from the response's `Date`.
    static func clockSkew(serverDate: String?, now: Date) -> String {
        guard let serverDate, let date = httpDate(serverDate) else {
            return "check this machine's clock (the service sent no Date to compare with)"
        }
        let offset = Int(now.timeIntervalSince(date).rounded())
        if abs(offset) < 5 {
            return "this machine's clock agrees with the service's (Date: \(serverDate)); check the request's exp"
        }
        let direction = offset > 0 ? "ahead of" : "behind"
        return
            "this machine's clock is \(abs(offset)) s \(direction) the service's (its Date header says \(serverDate)): "
            + "set the clock right (NTP)"
    }

    /// An RFC 9110 IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ text: String) -> Date? {
        HTTPDate.date(from: text)
    }
}

extension AliCloudV2Provider {
    /// The v2 provider a configuration asks for.
    ///
    /// - Throws: `.setup` for a legacy endpoint path (saying what to change), a secret or key
    ///   that is not hex, or a cipher v2 has not.
    static func make(
        _ configuration: ResolverConfiguration, account: String, endpoint: String?
    ) throws(ResolutionError) -> AliCloudV2Provider {
        let transport = HTTPDNSTransport(configuration)
        if let base = endpoint {
            let path = URLComponents(string: trimmedBase(base))?.path ?? ""
            if ["/d", "/sign_d", "/resolve"].contains(where: { path.hasSuffix($0) }) {
                throw .setup(.legacyPathForV2(endpoint: base))
            }
        }
        let servers = try AliCloudServiceIPs.make(
            configuration, account: account, endpoint: endpoint, legacySecret: nil)
        return try AliCloudV2Provider(
            servers: servers, account: account, secret: configuration.secret,
            cipher: configuration.cipher, key: configuration.key, sdns: configuration.sdns,
            transport: transport, profile: configuration.sdk, clientIP: configuration.clientIP)
    }
}

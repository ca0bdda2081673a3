// Alibaba Cloud HTTPDNS v2, what the current SDKs speak: GET /v2/d, signed with HMAC-SHA256,
// optionally sealed with AES-CBC (m=1) or AES-GCM (m=2), up to 5 names a request.
import CurlTransport
import Foundation
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
        let json = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        do {
            return Hex.encode(try mode.seal(Array(json), key: key))
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
        let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        let code = serviceCode(in: object)
        guard (200..<300).contains(status), code == "success" else {
            if let code, code != "success" {
                throw AliCloudV2Errors.explain(
                    code: code, status: status, account: account, signed: secret != nil, serverDate: date, now: now())
            }
            if !(200..<300).contains(status) { throw .http(status: status, code: nil) }
            throw .malformed(detail: "expected {\"code\":\"success\",...}, got \(preview(body))")
        }
        let dataObject: [String: Any]
        let responseMode = integer(object?["mode"]) ?? 0
        switch AliCloudV2Mode(rawValue: responseMode) {
        case .plain:
            guard let plain = object?["data"] as? [String: Any] else {
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
    func open(_ data: Any?, mode: AliCloudV2Mode) throws(ResolutionError) -> [String: Any] {
        guard !key.isEmpty else {
            throw .undecryptable(
                detail:
                    "the answer is encrypted (mode \(mode.rawValue)) but no AES key is set: set IPDIRECT_HTTPDNS_KEY")
        }
        guard let text = data as? String, let sealed = Data(base64Encoded: text) else {
            throw .undecryptable(
                detail: "the encrypted answer is not base64: the service or something on the way mangled it")
        }
        let plain: [UInt8]
        do {
            plain = try mode.open(Array(sealed), key: key)
        } catch {
            throw .undecryptable(detail: "the answer could not be decrypted: check the AES key (\(error))")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(plain)) as? [String: Any] else {
            throw .undecryptable(detail: "the answer could not be decrypted: check the AES key (it opened to non-JSON)")
        }
        return object
    }

    /// `{"cip","answers":[{"dn","v4":{"ips","ttl","extra","no_ip_code"},"v6":{...}}]}`, one
    /// result per asked name.
    static func answers(
        _ data: [String: Any], hosts: [String], families: Set<IPFamily>, ms: Double, server: String
    ) throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>] {
        // iOS 3.4.2 reads cip from each answer's own "data" (always absent); the service puts it
        // beside "answers", where Android and we read it.
        let clientIP = data["cip"] as? String
        guard let answers = data["answers"] as? [[String: Any]] else {
            throw .malformed(detail: "no 'answers' list in the answer")
        }
        var byName: [String: [String: Any]] = [:]
        var unasked: [String] = []
        let asked = Set(hosts.map { $0.lowercased() })
        for answer in answers {
            guard let name = (answer["dn"] as? String)?.lowercased() else { continue }
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
                    guard let part = answer[field] as? [String: Any] else { continue }
                    raw[family] = try strings(part["ips"], field: "\(field).ips")
                    // TTL <= 0 means 60, as both SDKs do (Android `HostItem`).
                    let given = integer(part["ttl"]) ?? 0
                    ttl[family] = given <= 0 ? 60 : given
                    if let code = part["no_ip_code"] as? String, !code.isEmpty {
                        notes.append(
                            "no \(family == .v4 ? "A" : "AAAA") record (the service says \(TerminalText.quoted(code)))")
                    } else if raw[family]?.isEmpty ?? true {
                        notes.append("no \(family == .v4 ? "A" : "AAAA") record")
                    }
                    if let extra = part["extra"], !(extra is NSNull) {
                        let text = (extra as? String) ?? String(describing: extra)
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
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}

/// The service addresses alicloud queries go to: one fixed endpoint, or the service IPs
/// discovered from the region's start IPs, rotated on failure.
///
/// Discovery follows iOS SDK 3.4.2 (`Scheduler/HttpdnsScheduleCenter.m`): the service list
/// starts as the region's start IPs; `GET /{account}/ss` on a start IP replaces it with the
/// service IPs the answer names; a failing start IP is skipped for the next; a failing
/// service IP rotates to the next one. The list is asked for again in the background, the old
/// one serving meanwhile, once a day, and after a whole round of the list has failed if the last
/// asking is 30 s old (`currentActiveServiceServerV4Host` and `rotateServiceServerHost`); when
/// that asking fails, the list in use stays.
final class AliCloudServiceIPs: Sendable {
    /// A base URL (`http://203.107.1.1`), how to name it to a user, and the name its
    /// certificate must carry over HTTPS (nil: the URL's own host).
    struct Base: Sendable, Equatable {
        var url: String
        var label: String
        var checkName: String?
    }

    /// How discovery reaches the start IPs.
    struct Discovery: Sendable {
        var starts: [Base]
        var account: String
        var sessionID: String
        var transport: HTTPDNSTransport
        var serviceName: String
        /// The legacy API's signing secret: `/ss` is then signed as the C SDK signs it. The v2
        /// secret is not used (iOS SDK 3.4.2 asks `/ss` unsigned, Scheduler/HttpdnsScheduleExecutor.m).
        var legacySecret: String? = nil
        /// Whose `/ss` request is sent (`platform`, `sdk_version`, the User-Agent).
        var profile: SDKProfile = .ipdirect
        /// The clock `t` is read from, and the 12-hex nonce `n` (tests fix both).
        var now: @Sendable () -> Date = { Date() }
        var nonce: @Sendable () -> String = { AliCloudServiceIPs.newNonce() }
    }

    /// A nonce as the C SDK makes one for a signed `/ss`: 12 lowercase hex digits.
    static func newNonce() -> String {
        let digits = Array("0123456789abcdef")
        return String((0..<12).map { _ in digits[Int.random(in: digits.indices)] })
    }

    /// The `/ss` request: `region platform sdk_version sid`, then with a legacy secret `s t n`,
    /// `t` = now and `s` = md5 of `n-secret-t` (C SDK 2.2.5, src/hdns_scheduler.c; the order of
    /// its captured request in alibaba.json). iOS 3.4.2 sends region=global since 2024 (the
    /// service schedules by proximity).
    static func serviceListTarget(_ discovery: Discovery) -> String {
        let platform = discovery.profile.platform
        var target =
            "/\(queryEscaped(discovery.account))/ss?region=global&platform=\(platform.name)"
            + "&sdk_version=\(queryEscaped(platform.version))&sid=\(discovery.sessionID)"
        // iOS adds the network type (Scheduler/HttpdnsScheduleExecutor.m `urlFormatSidNetBssid`).
        if discovery.profile == .ios34 { target += "&net=wifi" }
        if let secret = discovery.legacySecret {
            let t = String(Int(discovery.now().timeIntervalSince1970))
            let n = discovery.nonce()
            let s = AliCloudLegacySigning.serviceListSignature(nonce: n, secret: secret, time: t)
            target += "&s=\(s)&t=\(t)&n=\(n)"
        }
        return target
    }

    /// Asks the service IP in use, moving on to the next while the failure is the service IP's
    /// (connection, timeout, HTTP 5xx, `ServiceLevelDeny`), as the SDKs rotate; once round the list at most.
    func ask<T>(_ attempt: (Base) async throws(ResolutionError) -> T) async throws(ResolutionError) -> T {
        var lastError = ResolutionError.misconfigured("alicloud has no service IP to ask")
        for _ in 0..<max(1, await count()) {
            let base = try await current()
            do throws(ResolutionError) {
                return try await attempt(base)
            } catch {
                lastError = error
                guard Self.shouldRotate(error) else { throw error }
                await rotate(past: base)
            }
        }
        throw lastError
    }

    static func shouldRotate(_ error: ResolutionError) -> Bool {
        switch error {
        case .timeout, .refused, .tls, .transport, .endpointUnresolvable: return true
        case .http(let status, _): return status >= 500
        case .service(let code, _): return code == "ServiceLevelDeny"
        default: return false
        }
    }

    /// How old the list may grow before it is asked for again (the SDK's 24 hours).
    static let refreshAfter: TimeInterval = 24 * 60 * 60
    /// After a whole round of failing service IPs, the list is asked for again if the last
    /// asking is at least this old.
    static let refreshAfterRoundAtLeast: TimeInterval = 30

    /// Where discovery stands.
    private struct Schedule {
        /// The first discovery, which the first queries wait for.
        var first: Task<[Base], Never>?
        /// The list in use, once the first discovery has finished.
        var list: [Base]?
        /// When discovery last started.
        var askedAt = Date.distantPast
        var refreshing = false
        /// The service IP in use, as an index into `list`.
        var index = 0

        /// Marks an asking under way, decided under the same lock, so two callers never both start one.
        mutating func startRefresh(at time: Date) {
            askedAt = time
            refreshing = true
        }
    }

    private let fixed: Base?
    private let discovery: Discovery?
    private let schedule = Locked(Schedule())
    private let now: @Sendable () -> Date
    /// Why discovery fell back to the start IPs, when it did.
    let discoveryProblem = Locked<String?>(nil)

    /// Queries go to `endpoint` only.
    init(endpoint: String) {
        let base = trimmedBase(endpoint)
        let label = URLComponents(string: base)?.host ?? base
        fixed = Base(url: base, label: label)
        discovery = nil
        now = { Date() }
    }

    /// Queries go to the service IPs discovered from `discovery.starts`.
    ///
    /// - Parameter now: the clock the refresh intervals are read on (tests move it).
    init(discovery: Discovery, now: @escaping @Sendable () -> Date = { Date() }) {
        fixed = nil
        self.discovery = discovery
        self.now = now
    }

    /// The start bases for a region (`https://IP`, checked against `serviceName`, as the SDK asks
    /// `/ss` over HTTPS), or the configured `start_ips`.
    ///
    /// - Throws: `.misconfigured` for a region the SDK does not know or a start URL that is not one.
    static func starts(
        region: String, startIPs: [String], serviceName: String
    ) throws(ResolutionError) -> [Base] {
        if !startIPs.isEmpty {
            return try startIPs.map { (text: String) throws(ResolutionError) -> Base in
                let url = trimmedBase(text)
                guard let components = URLComponents(string: url), let host = components.host,
                    ["http", "https"].contains(components.scheme ?? "")
                else {
                    throw .misconfigured(
                        "start_ips: \(TerminalText.quoted(text)) is not a base URL: write it as http://IP[:PORT] or https://IP[:PORT]"
                    )
                }
                return Base(url: url, label: host, checkName: IPAddress(host) == nil ? nil : serviceName)
            }
        }
        guard let known = AliCloudRegion.named(region) else {
            throw .misconfigured(
                "alicloud region \(TerminalText.quoted(region)) is not one the SDK knows: use one of "
                    + AliCloudRegion.all.map(\.name).joined(separator: ", "))
        }
        return known.startIPv4.map { Base(url: "https://\($0)", label: $0, checkName: serviceName) }
            + known.startIPv6.map { Base(url: "https://[\($0)]", label: $0, checkName: serviceName) }
    }

    /// The service list: the fixed endpoint, or the discovered service IPs (asked for again in
    /// the background once a day).
    func list() async -> [Base] {
        if let fixed { return [fixed] }
        guard let discovery else { return [] }
        let time = now()
        // The lock hands out the list (and whether this call refreshes it) or the first discovery to wait for.
        enum Next { case listed([Base], refresh: Bool), waiting(Task<[Base], Never>) }
        let next = schedule.withLock { s -> Next in
            if let list = s.list {
                let due = !s.refreshing && time.timeIntervalSince(s.askedAt) >= Self.refreshAfter
                if due { s.startRefresh(at: time) }
                return .listed(list, refresh: due)
            }
            if let first = s.first { return .waiting(first) }
            s.askedAt = time
            let problem = discoveryProblem
            let first = Task {
                await Self.discover(discovery, problem: problem, fallingBackTo: "asking the start IPs directly")
                    ?? discovery.starts
            }
            s.first = first
            return .waiting(first)
        }
        let first: Task<[Base], Never>
        switch next {
        case .listed(let current, let refresh):
            if refresh { refreshInBackground(discovery) }
            return current
        case .waiting(let task): first = task
        }
        let found = await first.value
        return schedule.withLock { s in
            if s.list == nil { s.list = found }
            return s.list ?? found
        }
    }

    /// Asks for the list again in the background (the caller marked it under way); the old one
    /// serves until a new one comes, and stays when none does.
    private func refreshInBackground(_ discovery: Discovery) {
        let problem = discoveryProblem
        Task {
            let found = await Self.discover(
                discovery, problem: problem, fallingBackTo: "keeping the service IPs in use")
            schedule.withLock { s in
                s.refreshing = false
                if let found {
                    s.list = found
                    s.index = 0
                }
            }
        }
    }

    func count() async -> Int { await list().count }

    func current() async throws(ResolutionError) -> Base {
        let list = await list()
        guard !list.isEmpty else { throw .misconfigured("alicloud has no service IP to ask") }
        return list[schedule.withLock { $0.index } % list.count]
    }

    /// Moves on from `base` unless someone already did; after a whole round of the list, asks
    /// for it again if the last asking is 30 s old.
    func rotate(past base: Base) async {
        let list = await list()
        let time = now()
        let refresh = schedule.withLock { s -> Bool in
            guard !list.isEmpty, list[s.index % list.count] == base else { return false }
            s.index += 1
            guard
                s.index % list.count == 0 && !s.refreshing
                    && time.timeIntervalSince(s.askedAt) >= Self.refreshAfterRoundAtLeast
            else { return false }
            s.startRefresh(at: time)
            return true
        }
        if refresh, let discovery { refreshInBackground(discovery) }
    }

    /// Asks each start IP in turn for `/{account}/ss`; the first usable answer gives the
    /// service IPs. Nil when none gives one (the first time, the start IPs themselves then
    /// serve, as the SDK's list starts out), with the reasons and `fallback` in `problem`.
    static func discover(
        _ discovery: Discovery, problem: Locked<String?>, fallingBackTo fallback: String
    ) async -> [Base]? {
        var failures: [String] = []
        for start in discovery.starts {
            let target = serviceListTarget(discovery)
            do throws(ResolutionError) {
                let (response, _) = try await discovery.transport.get(
                    start.url + target,
                    headers: [HeaderField(name: "User-Agent", value: discovery.profile.userAgent)],
                    display: start.url, checkName: start.checkName)
                guard (200..<300).contains(response.status) else {
                    throw .http(status: response.status, code: serviceCode(response.body))
                }
                let found = try serviceIPs(response.body, start: start, serviceName: discovery.serviceName)
                guard !found.isEmpty else { throw .malformed(detail: "the /ss answer names no service IP") }
                problem.withLock { $0 = nil }
                return found
            } catch {
                failures.append("\(start.label): \(error)")
            }
        }
        problem.withLock {
            $0 =
                "service discovery failed on every start IP (\(failures.joined(separator: "; "))): \(fallback)"
        }
        return nil
    }

    /// Reads `{"service_ip":[..],"service_ipv6":[..]}`: IPv4 first, then IPv6 (the SDK picks
    /// by the network's stack; we try both). The scheme is the start IP's; the port is the
    /// start IP's unless the answer gives `service_port` (the lab does: it cannot use 80/443).
    static func serviceIPs(_ body: [UInt8], start: Base, serviceName: String) throws(ResolutionError) -> [Base] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw .malformed(detail: "the /ss answer is not a JSON object: \(preview(body))")
        }
        let v4 = (object["service_ip"] as? [Any] ?? []).compactMap { $0 as? String }
        let v6 = (object["service_ipv6"] as? [Any] ?? []).compactMap { $0 as? String }
        let screened4 = IPLiteral.screen(v4, family: .v4)
        let screened6 = IPLiteral.screen(v6, family: .v6)
        let junk = screened4.rejected + screened6.rejected
        if !junk.isEmpty { throw .notAnIP(cleaning: junk) }
        guard let components = URLComponents(string: start.url), let scheme = components.scheme else { return [] }
        let port = integer(object["service_port"]) ?? components.port
        if let port, !(1...65_535).contains(port) {
            throw .malformed(detail: "the /ss answer's service_port \(port) is not a port (1 to 65535)")
        }
        func base(_ ip: IPAddress) -> Base {
            Base(
                url: "\(scheme)://\(ip.authorityForm)" + (port.map { ":\($0)" } ?? ""), label: ip.text,
                checkName: scheme == "https" ? serviceName : nil)
        }
        return (screened4.valid + screened6.valid).map(base)
    }
}

extension AliCloudServiceIPs {
    /// The service addresses a configuration asks for: its endpoint, or discovery from its
    /// region's start IPs (or `start_ips`), for v2 and the legacy API alike.
    ///
    /// - Parameter legacySecret: the legacy API's secret, which signs `/ss`.
    /// - Throws: `.misconfigured` for an unknown region or a start URL that is not one.
    static func make(
        _ configuration: ResolverConfiguration, account: String, endpoint: String?, legacySecret: String?
    ) throws(ResolutionError) -> AliCloudServiceIPs {
        if let endpoint { return AliCloudServiceIPs(endpoint: endpoint) }
        return AliCloudServiceIPs(
            discovery: .init(
                starts: try starts(
                    region: configuration.region, startIPs: configuration.startIPs,
                    serviceName: configuration.serviceName),
                account: account, sessionID: AliCloudV2Provider.newSessionID(),
                transport: HTTPDNSTransport(configuration), serviceName: configuration.serviceName,
                legacySecret: legacySecret, profile: configuration.sdk))
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

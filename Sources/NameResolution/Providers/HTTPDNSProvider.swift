// The seam between the resolver cache and an HTTPDNS service: one protocol, one small type
// per wire format, and the factory that builds one through the provider registry.
import CurlTransport
import Dispatch
import FoundationEssentials
import FoundationGaps
import TerminalText

/// What an HTTPDNS service said about one name, already screened: only IP literals remain.
public struct ProviderAnswer: Sendable, Equatable {
    public var host: String
    public var ipv4: [IPAddress]
    public var ipv6: [IPAddress]
    /// Seconds per answered family, each clamped to `ResolverConfiguration.ttlBounds`: the
    /// cache expires each family on its own, as the SDKs do. An answered family without
    /// addresses keeps the TTL the service gave it, for how long "none" is cached.
    public var ttl: FamilyTTL
    /// The families the service answered for (an empty list for an answered family means
    /// "no address of that family", which is worth caching).
    public var answered: Set<IPFamily>
    /// Wall time of the exchange, milliseconds.
    public var ms: Double
    /// The client address the service judged the query by (alicloud `cip`, tencent `clientip=1`).
    public var clientIP: IPAddress?
    /// The service address that answered (a service IP under discovery, else the endpoint's host).
    public var server: String?
    /// What the service said beside the addresses: "no AAAA record", `extra` data.
    public var notes: [String] = []
    /// The legacy API's `origin_ttl` per answered family, when it said.
    public var originTTL: FamilyTTL?
    /// The legacy API's `extra`, decoded as the C SDK does and escaped where it entered.
    public var extra: String?

    public init(
        host: String, ipv4: [IPAddress] = [], ipv6: [IPAddress] = [], ttl: FamilyTTL, answered: Set<IPFamily>,
        ms: Double = 0
    ) {
        self.host = host
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.ttl = ttl
        self.answered = answered
        self.ms = ms
    }

    /// The addresses of one family.
    public func ips(_ family: IPFamily) -> [IPAddress] { family == .v4 ? ipv4 : ipv6 }

    /// The TTLs of the families that have addresses: what the answer's readers are shown.
    public var shownTTL: FamilyTTL {
        FamilyTTL(v4: ipv4.isEmpty ? nil : ttl.v4, v6: ipv6.isEmpty ? nil : ttl.v6)
    }

    /// Builds an answer from unscreened strings, refusing the whole answer when any of them
    /// is not an IP literal: a service that sends junk is broken or tampered with, so its
    /// other addresses are not trusted either (the resolver falls back to system DNS).
    ///
    /// The client address the service says it saw is kept only when it is an IP literal: it is
    /// shown to the user, so anything else from the server is dropped rather than printed.
    ///
    /// - Parameter sent: per family, how many addresses the reply held when its parser kept fewer.
    /// - Throws: `.notAnIP` naming the junk, `.noSuchName` when there was nothing.
    static func screened(
        host: String, rawV4: [String], rawV6: [String], ttl: FamilyTTL, answered: Set<IPFamily>, ms: Double,
        clientIP: JSONValue? = nil, sent: [IPFamily: Int] = [:]
    ) throws(ResolutionError) -> ProviderAnswer {
        let v4 = IPLiteral.screen(rawV4, family: .v4)
        let v6 = IPLiteral.screen(rawV6, family: .v6)
        let rejected = v4.rejected + v6.rejected
        if !rejected.isEmpty { throw .notAnIP(cleaning: rejected) }
        var answer = try limited(
            host: host, v4: v4.valid, v6: v6.valid, ttl: ttl, answered: answered, ms: ms, sent: sent)
        answer.clientIP = shownClientIP(clientIP)
        return answer
    }

    /// Builds an answer from addresses already parsed, keeping at most `maxAddressesPerFamily`
    /// of each family (a note says when more came).
    ///
    /// - Throws: `.noSuchName` when there was nothing.
    static func limited(
        host: String, v4: [IPAddress], v6: [IPAddress], ttl: FamilyTTL, answered: Set<IPFamily>, ms: Double,
        sent: [IPFamily: Int] = [:]
    ) throws(ResolutionError) -> ProviderAnswer {
        if v4.isEmpty, v6.isEmpty { throw .noSuchName(host: host, families: answered) }
        let limit = maxAddressesPerFamily
        var ttl = ttl
        // A family the service answered without a TTL gets the SDKs' 60 s (Android `HostItem`).
        for family in answered where ttl[family] == nil { ttl[family] = 60 }
        var answer = ProviderAnswer(
            host: host, ipv4: Array(v4.prefix(limit)), ipv6: Array(v6.prefix(limit)),
            ttl: FamilyTTL(v4: ttl.v4.map(clampTTL), v6: ttl.v6.map(clampTTL)).only(answered), answered: answered,
            ms: ms)
        for (family, all) in [(IPFamily.v4, v4), (.v6, v6)] {
            // What the parser counted, when it read more than it kept; else what was screened.
            let came = max(all.count, sent[family] ?? 0)
            guard came > limit || came > all.count else { continue }
            answer.notes.append(
                "the service sent \(came) \(family == .v4 ? "IPv4" : "IPv6") addresses; only the first \(min(limit, all.count)) \(cutNoteEnd)"
            )
        }
        return answer
    }

    /// A client address from the service, when it is an IP literal (else nil: never shown raw).
    static func shownClientIP(_ value: JSONValue?) -> IPAddress? {
        value?.string.flatMap(IPAddress.init)
    }

    /// A client address from the service's text (Tencent's `|ip`), when it is an IP literal.
    static func shownClientIP(_ text: String?) -> IPAddress? {
        text.flatMap(IPAddress.init)
    }

    private static let cutNoteEnd = "are kept (ipdirect's limit per answer)"

    /// Whether a note says the answer was cut to `maxAddressesPerFamily` (`--all-ips` repeats it).
    public static func isCutNote(_ note: String) -> Bool { note.hasSuffix(cutNoteEnd) }

    /// The most addresses of one family kept from one answer: a service (or something in its
    /// place) sending thousands would otherwise become thousands of attempts under `--all-ips`.
    public static let maxAddressesPerFamily = 32

    static func clampTTL(_ ttl: Int) -> Int {
        min(max(ttl, ResolverConfiguration.ttlBounds.lowerBound), ResolverConfiguration.ttlBounds.upperBound)
    }
}

/// An HTTPDNS service speaking one wire format.
public protocol HTTPDNSProvider: Sendable {
    /// Short name shown to users, e.g. `alicloud`, `doh-json (dns.google)`.
    var name: String { get }

    /// Asks the service for the addresses of `host` in `families`.
    ///
    /// - Throws: `ResolutionError` with the reason in words.
    func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer

    /// Asks for several names; services with a batch API use it (alicloud: 5 per request).
    ///
    /// - Returns: one result per name, in any order.
    func resolveBatch(
        _ hosts: [String], families: Set<IPFamily>
    ) async -> [String: Result<ProviderAnswer, ResolutionError>]
}

extension HTTPDNSProvider {
    public func resolveBatch(
        _ hosts: [String], families: Set<IPFamily>
    ) async -> [String: Result<
        ProviderAnswer, ResolutionError
    >] {
        await withTaskGroup(of: (String, Result<ProviderAnswer, ResolutionError>).self) { group in
            for host in hosts {
                group.addTask {
                    // The result is settled before the tuple is built, on purpose: written as
                    // `do { return (host, .success(try await ...)) } catch { return (host, .failure(error)) }`,
                    // Swift 6.3.1 -O stores `host` into the task's result before the await and again
                    // in the catch, then LLVM's dead store elimination drops the first store: the
                    // success path left the tuple's String uninitialised, and the release build
                    // crashed in the task group or lost the names (a miscompile, issue 32; 30-line
                    // reproduction: scripts/compiler-bugs/async-tuple-return-dse.swift).
                    let result: Result<ProviderAnswer, ResolutionError>
                    do throws(ResolutionError) {
                        result = .success(try await self.resolve(host, families: families))
                    } catch {
                        result = .failure(error)
                    }
                    return (host, result)
                }
            }
            var results: [String: Result<ProviderAnswer, ResolutionError>] = [:]
            for await (host, result) in group { results[host] = result }
            return results
        }
    }
}

extension HTTPDNSProvider {
    /// A batch asked `limit` names a request (the services' batch APIs take 5): `request` answers one
    /// chunk, and a chunk whose request fails fails each of its names with that error.
    func resolveInChunks(
        _ hosts: [String], limit: Int,
        request: ([String]) async throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>]
    ) async -> [String: Result<ProviderAnswer, ResolutionError>] {
        var results: [String: Result<ProviderAnswer, ResolutionError>] = [:]
        var start = 0
        while start < hosts.count {
            let chunk = Array(hosts[start..<min(start + limit, hosts.count)])
            start += limit
            do throws(ResolutionError) {
                for (host, result) in try await request(chunk) { results[host] = result }
            } catch {
                for host in chunk { results[host] = .failure(error) }
            }
        }
        return results
    }

    /// What the per-family queries of one name gave (nil for a family not asked): one family
    /// failing while the other answers still gives a usable answer; with none answering, the
    /// first failure is the name's.
    func answeredFamilies<Part>(
        _ results: [Result<Part, ResolutionError>?]
    ) throws(ResolutionError) -> [Part] {
        var parts: [Part] = []
        var failures: [ResolutionError] = []
        for result in results.compactMap({ $0 }) {
            switch result {
            case .success(let part): parts.append(part)
            case .failure(let error): failures.append(error)
            }
        }
        if parts.isEmpty, let first = failures.first { throw first }
        return parts
    }

    /// The one name of a one-name request; an answer that leaves it out is malformed, not a crash.
    func single(
        _ host: String, from results: [String: Result<ProviderAnswer, ResolutionError>]
    ) throws(ResolutionError) -> ProviderAnswer {
        guard let result = results[host] else { throw .malformed(detail: "the answer did not include \(host)") }
        return try result.get()
    }
}

/// Builds the provider a configuration asks for, through its row in `ProviderRegistry`.
public enum ProviderFactory {
    /// - Throws: `ResolutionError.setup` when a required setting is missing or unusable.
    public static func make(_ configuration: ResolverConfiguration) throws(ResolutionError) -> any HTTPDNSProvider {
        let endpoint = configuration.effectiveEndpoint
        if let named = configuration.endpoint, let preset = ProviderPreset.named(named),
            preset.kind != configuration.provider, configuration.provider != .system
        {
            throw .setup(.presetOfAnotherKind(preset: preset.name, kind: preset.kind, provider: configuration.provider))
        }
        return try ProviderRegistry.entry(configuration.provider).make(configuration, endpoint)
    }
}

/// The `system` provider: no HTTPDNS at all, system DNS answers in its place, so the rest
/// of the tool (cache, probe) works the same for comparison.
public struct SystemProvider: HTTPDNSProvider {
    public var name: String { "system" }
    let timeout: Double
    let resolver = SystemResolver()
    /// getaddrinfo gives no TTL; the cache holds the answer a minute so repeated probes do not
    /// re-ask every time, and the answer's note says so rather than pass it off as a DNS TTL.
    static let ttl = 60
    static let noTTLNote =
        "answered by getaddrinfo (the system provider), which gives no TTL: ipdirect's cache keeps it \(ttl) s"

    public init(timeout: Double = 2) { self.timeout = timeout }

    public func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        let answer = await resolver.resolve(host, families: families, timeout: .seconds(timeout))
        if let error = answer.error { throw .system(detail: "getaddrinfo (the system provider): \(error.sentence)") }
        var screened = try ProviderAnswer.limited(
            host: host, v4: answer.ipv4, v6: answer.ipv6, ttl: FamilyTTL(Self.ttl, for: families),
            answered: families, ms: answer.ms)
        screened.notes.insert(Self.noTTLNote, at: 0)
        return screened
    }
}

// MARK: Transport

/// One GET to an HTTPDNS service through libcurl's shared transfer loop (no thread per request).
struct HTTPDNSTransport: Sendable {
    var timeout: Double
    var caFile: String?
    /// The loop requests wait their turn on: the shared one, or a test's own (one slot held
    /// busy, so a query waits past its deadline without a sleep).
    var loop: TransferLoop = .shared

    init(_ configuration: ResolverConfiguration) {
        timeout = configuration.timeout
        caFile = configuration.caFile
    }

    init(timeout: Double, caFile: String?, loop: TransferLoop = .shared) {
        self.timeout = timeout
        self.caFile = caFile
        self.loop = loop
    }

    /// Performs the request on the loop and maps failures.
    ///
    /// - Parameters:
    ///   - display: how to name the endpoint in messages (never carries a signature).
    ///   - checkName: the name the certificate must carry instead of the URL's host
    ///     (alicloud service IPs are checked against `service_name`).
    ///   - body: a POST body (RFC 8484 POST); nil sends a GET.
    /// - Returns: the completed exchange (any status) and its wall time in milliseconds.
    func get(
        _ url: String, headers: [HeaderField] = [], display: String, checkName: String? = nil, body: [UInt8]? = nil
    ) async throws(ResolutionError) -> (response: TransferRecord, ms: Double) {
        // Every request says who asks; a profile's requests say it as their SDK does.
        var headers = headers
        if !headers.contains(where: { $0.name.lowercased() == "user-agent" }) {
            headers.append(HeaderField(name: "User-Agent", value: SDKProfile.ipdirect.userAgent))
        }
        let spec = TransferSpec(
            url: url, method: body == nil ? "GET" : "POST", headers: headers, body: body, timeout: .seconds(timeout),
            caFile: caFile, checkName: checkName, verifyHost: checkName == nil,
            bodyLimit: .failBeyond(ResolverConfiguration.maxBodyBytes))
        let started = DispatchTime.now()
        let record = await loop.perform(spec)
        let ms = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6
        if let failure = record.failure {
            if let refused = failure.refusedCertificate {
                // What to do follows the cause: a name to set only when the name is what failed.
                switch refused.problem {
                case .untrustedIssuer?, .selfSigned?:
                    throw .tls(
                        detail:
                            "\(refused.verifyMessage) (the certificate \(display) presented does not chain to a "
                            + "trusted CA: something on the path may intercept TLS)")
                case _ where checkName != nil:
                    // The name (or address) checked is what did not match, or another problem
                    // with it: the name to check is the one setting that changes that.
                    throw .tls(
                        detail:
                            "\(refused.verifyMessage) (the certificate of \(display) was checked against the name "
                            + "\(checkName ?? ""), not its address; set service_name in the configuration to the name it carries)"
                    )
                default:
                    throw .tls(detail: refused.verifyMessage)
                }
            }
            throw .from(failure, endpoint: display, timeout: timeout)
        }
        return (record, ms)
    }
}

/// Percent-encodes a query value (host names are ASCII, but the input is the user's).
func queryEscaped(_ value: String) -> String {
    value.percentEncoded(keeping: "-._~")
}

/// Drops a trailing slash so paths can be appended.
func trimmedBase(_ endpoint: String) -> String {
    var base = endpoint
    while base.hasSuffix("/") { base.removeLast() }
    return base
}

/// Reads the `code` of a JSON error body (`{"code":"InvalidAccount"}`), if it is one, cleaned.
func serviceCode(_ body: [UInt8]) -> String? {
    serviceCode(in: JSONValue(parsing: body)?.object)
}

/// The `code` (or `Code`) of a service's JSON answer, cleaned where it enters: escaped by
/// `TerminalText` and cut, since it reaches sentences, the cache's notes and every output.
func serviceCode(in object: [String: JSONValue]?) -> String? {
    (object?["code"]?.string ?? object?["Code"]?.string).map {
        TerminalText.escaped($0, cutAt: serviceCodeLimit)
    }
}

/// The most characters of a service's code kept: the real ones are a few dozen.
let serviceCodeLimit = 120

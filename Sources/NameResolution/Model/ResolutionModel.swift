// The values resolution produces and everyone else reads: answers, their sources, the
// comparison of system DNS with HTTPDNS, cache entries and resolver events.
// Shapes follow the JSON contract of `ipdirect resolve --format json`.
import CurlTransport
import FoundationEssentials

/// Which address families to ask for.
public enum AddressFamily: String, Sendable, Codable, CaseIterable {
    /// IPv4, plus IPv6 when this machine has a global IPv6 route.
    case auto
    case v4
    case v6
    case both
}

/// One concrete family, as the cache keys entries.
public enum IPFamily: String, Sendable, Codable, Hashable, CaseIterable {
    case v4, v6
}

/// Seconds each family's answer stays fresh, kept apart as every Alibaba SDK keeps them (iOS
/// `HttpdnsHostObject` `v4ttl`/`v6ttl`, Node.js `ipv4Ttl`/`ipv6Ttl`, the C SDK one result per
/// type): an A that lives 120 s is not cut to the 60 s of its AAAA. A family without a TTL is absent.
public struct FamilyTTL: Sendable, Codable, Equatable, Hashable {
    public var v4: Int?
    public var v6: Int?

    public init(v4: Int? = nil, v6: Int? = nil) {
        self.v4 = v4
        self.v6 = v6
    }

    /// The same TTL for each of `families` (a service that gives one TTL for the whole answer).
    public init(_ seconds: Int, for families: Set<IPFamily>) {
        v4 = families.contains(.v4) ? seconds : nil
        v6 = families.contains(.v6) ? seconds : nil
    }

    public subscript(family: IPFamily) -> Int? {
        get { family == .v4 ? v4 : v6 }
        set {
            switch family {
            case .v4: v4 = newValue
            case .v6: v6 = newValue
            }
        }
    }

    /// A copy with `family`'s TTL set.
    public func setting(_ family: IPFamily, _ seconds: Int) -> FamilyTTL {
        var copy = self
        copy[family] = seconds
        return copy
    }

    /// No family has a TTL.
    public var isEmpty: Bool { v4 == nil && v6 == nil }

    /// Only the families in `families` keep theirs.
    public func only(_ families: Set<IPFamily>) -> FamilyTTL {
        FamilyTTL(v4: families.contains(.v4) ? v4 : nil, v6: families.contains(.v6) ? v6 : nil)
    }

    /// How a person reads it: `60s` for one family (or two that agree), `v4 120s, v6 60s`
    /// when they differ, `-` when there is none.
    public var shown: String {
        switch (v4, v6) {
        case (nil, nil): "-"
        case (let one?, nil), (nil, let one?): "\(one)s"
        case (let a?, let b?): a == b ? "\(a)s" : "v4 \(a)s, v6 \(b)s"
        }
    }
}

/// The HTTPDNS service flavours ipdirect speaks.
public enum ProviderKind: String, Sendable, Codable, CaseIterable {
    /// Alibaba Cloud HTTPDNS v2 (`/v2/d`), what current SDKs speak.
    case alicloud
    /// Alibaba Cloud's legacy API (`/{account}/d`, `sign_d`, `resolve`).
    case alicloudLegacy = "alicloud-legacy"
    case tencent
    case dohJSON = "doh-json"
    /// RFC 8484 DNS wire format over HTTPS (`application/dns-message`).
    case doh
    /// No HTTPDNS at all: system DNS only, for comparison.
    case system
}

/// Where an answer came from.
public enum AnswerSource: String, Sendable, Codable {
    /// Asked the HTTPDNS service just now.
    case httpdns
    /// Asked system DNS just now, standing in for HTTPDNS (`--provider system`).
    case system
    /// Served from the resolver cache, fresh.
    case cache
    /// Served from the cache after its TTL ran out (expired-IP reuse), refresh under way.
    case stale
    /// HTTPDNS failed; the answer is system DNS's.
    case systemFallback = "system-fallback"
    /// Loaded from the persistent cache file at start.
    case persisted
}

/// How system DNS and HTTPDNS compare for one name.
public enum Agreement: String, Sendable, Codable {
    case same, overlap, disjoint
    case systemFailed = "system-failed"
    case httpdnsFailed = "httpdns-failed"
    case bothFailed = "both-failed"

    /// Compares two answers; an empty list with an error counts as failed.
    public static func between(system: [IPAddress]?, httpdns: [IPAddress]?) -> Agreement {
        switch (system, httpdns) {
        case (nil, nil): return .bothFailed
        case (nil, _): return .systemFailed
        case (_, nil): return .httpdnsFailed
        case let (s?, h?):
            let a = Set(s)
            let b = Set(h)
            if a == b { return .same }
            return a.isDisjoint(with: b) ? .disjoint : .overlap
        }
    }
}

/// System DNS's answer for one name (the `system` object of `resolve --format json`).
public struct SystemAnswer: Sendable, Codable, Equatable {
    public var ipv4: [IPAddress]
    public var ipv6: [IPAddress]
    /// Wall time of the lookup, milliseconds.
    public var ms: Double
    /// Why it failed; nil on success.
    public var error: ResolutionFailure?
    /// Who answered: getaddrinfo, or the DNS server `--dns-server` names.
    public var resolver: SystemResolverKind
    /// The smallest TTL of the addresses, seconds, from a DNS server; nil from getaddrinfo,
    /// which gives none (absent from JSON then).
    public var ttl: Int?
    /// The CNAME chain a DNS server's answer led through, first alias first; nil when none.
    public var cname: [String]?

    public init(
        ipv4: [IPAddress] = [], ipv6: [IPAddress] = [], ms: Double = 0, error: ResolutionFailure? = nil,
        resolver: SystemResolverKind = .getaddrinfo, ttl: Int? = nil, cname: [String]? = nil
    ) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.ms = ms
        self.error = error
        self.resolver = resolver
        self.ttl = ttl
        self.cname = cname
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        ipv4 = try container.decode([IPAddress].self, forKey: .ipv4)
        ipv6 = try container.decode([IPAddress].self, forKey: .ipv6)
        ms = try container.decode(Double.self, forKey: .ms)
        error = try container.decodeIfPresent(ResolutionFailure.self, forKey: .error)
        // Files written before `--dns-server` existed were all getaddrinfo.
        resolver = try container.decodeIfPresent(SystemResolverKind.self, forKey: .resolver) ?? .getaddrinfo
        ttl = try container.decodeIfPresent(Int.self, forKey: .ttl)
        cname = try container.decodeIfPresent([String].self, forKey: .cname)
    }
}

/// HTTPDNS's answer for one name (the `httpdns` object of `resolve --format json`).
public struct HTTPDNSAnswer: Sendable, Codable, Equatable {
    public var provider: ProviderID
    public var ipv4: [IPAddress]
    public var ipv6: [IPAddress]
    /// Seconds each family's addresses stay fresh (JSON `"ttl": {"v4": 120, "v6": 60}`); a
    /// family with no address has none.
    public var ttl: FamilyTTL
    public var ms: Double
    public var source: AnswerSource
    public var error: ResolutionFailure?
    /// Strings the service sent as addresses that are not IP literals: refused, never
    /// cached, named here. Absent from JSON when there were none.
    public var rejected: [String]?
    /// The client address the service judged the query by (alicloud `cip`), when it said.
    public var clientIP: IPAddress?
    /// The service address that answered, when the provider knows it.
    public var server: String?
    /// What the service said beside the addresses ("no AAAA record", extra data).
    public var notes: [String]?
    /// The legacy API's `origin_ttl` per family with addresses (the TTL before the service's
    /// own), when it said; absent from JSON otherwise.
    public var originTTL: FamilyTTL?
    /// The legacy API's `extra` (data the account attached to the name), decoded as the C SDK
    /// decodes it, escaped for terminals; absent from JSON when there was none.
    public var extra: String?

    public init(
        provider: ProviderID, ipv4: [IPAddress] = [], ipv6: [IPAddress] = [], ttl: FamilyTTL = FamilyTTL(),
        ms: Double = 0, source: AnswerSource = .httpdns, error: ResolutionFailure? = nil, rejected: [String]? = nil
    ) {
        self.provider = provider
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.ttl = ttl
        self.ms = ms
        self.source = source
        self.error = error
        self.rejected = rejected
    }
}

/// One name resolved both ways: what `ipdirect resolve` prints and a probe starts from.
public struct HostResolution: Sendable, Codable, Equatable {
    public var host: String
    public var system: SystemAnswer
    public var httpdns: HTTPDNSAnswer
    public var agreement: Agreement
    /// What the cache held for the name before a fresh resolve asked the service
    /// (`ipdirect resolve`); nil when the answer came through the cache as the SDKs read it.
    public var cached: CacheComparison?

    public init(host: String, system: SystemAnswer, httpdns: HTTPDNSAnswer) {
        self.host = host
        self.system = system
        self.httpdns = httpdns
        let sys = system.error == nil ? system.ipv4 + system.ipv6 : nil
        let dns = httpdns.error == nil ? httpdns.ipv4 + httpdns.ipv6 : nil
        agreement = Agreement.between(system: sys, httpdns: dns)
    }
}

/// What the cache held for a name beside a fresh answer, and whether the two differ.
public struct CacheComparison: Sendable, Codable, Equatable {
    /// The cache held something for the name (in any asked family).
    public var held: Bool
    public var ipv4: [IPAddress]
    public var ipv6: [IPAddress]
    /// Seconds of freshness the held answer had left (negative: expired); nil when nothing was held.
    public var secondsLeft: Int?
    /// Where the held answer came from (`httpdns`, `persisted`, `system-fallback`).
    public var source: AnswerSource?
    /// The held addresses are not the fresh ones (false when nothing was held or the fresh ask failed).
    public var differs: Bool

    public init(
        held: Bool, ipv4: [IPAddress] = [], ipv6: [IPAddress] = [], secondsLeft: Int? = nil,
        source: AnswerSource? = nil,
        differs: Bool = false
    ) {
        self.held = held
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.secondsLeft = secondsLeft
        self.source = source
        self.differs = differs
    }
}

/// A resolver cache entry as front ends see it: a copy, never a reference into the cache.
public struct CacheEntrySnapshot: Sendable, Codable, Equatable, Hashable {
    public var host: String
    public var family: IPFamily
    public var ips: [IPAddress]
    public var ttl: Int
    /// When the answer was obtained.
    public var resolvedAt: Date
    public var source: AnswerSource
    public var hits: Int
    /// A background refresh is under way.
    public var refreshing: Bool
    /// The legacy API's `origin_ttl` for this family, kept as the C SDK keeps it.
    public var originTTL: Int?
    /// The legacy API's `extra`, decoded and escaped (see `HTTPDNSAnswer.extra`).
    public var extra: String?

    public init(
        host: String, family: IPFamily, ips: [IPAddress], ttl: Int, resolvedAt: Date, source: AnswerSource,
        hits: Int = 0, refreshing: Bool = false, originTTL: Int? = nil, extra: String? = nil
    ) {
        self.originTTL = originTTL
        self.extra = extra
        self.host = host
        self.family = family
        self.ips = ips
        self.ttl = ttl
        self.resolvedAt = resolvedAt
        self.source = source
        self.hits = hits
        self.refreshing = refreshing
    }

    /// When the answer stops being fresh.
    public var expiresAt: Date { resolvedAt.addingTimeInterval(TimeInterval(ttl)) }

    /// Seconds of freshness left at `now` (negative once expired).
    public func remaining(at now: Date) -> TimeInterval { expiresAt.timeIntervalSince(now) }

    /// Whole seconds of freshness left at `now`, rounded by `rule` (negative once expired), as
    /// shown to a person; held to `Int`'s range rather than trapping on a far-off time.
    public func secondsLeft(at now: Date, rounded rule: FloatingPointRoundingRule) -> Int {
        Int(seconds: remaining(at: now), rounded: rule)
    }

    /// Whole seconds since the answer was obtained, rounded down; held to `Int`'s range.
    public func age(at now: Date) -> Int {
        Int(seconds: now.timeIntervalSince(resolvedAt), rounded: .down)
    }
}

/// Something the resolver did, for the console's event view and the logs.
public struct ResolverEvent: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case hit, miss, refresh, expired, fallback, error, flush, prefetch
    }
    public var time: Date
    public var kind: Kind
    public var host: String
    public var family: IPFamily?
    /// One line a person reads: "sni-a.lab.test v4 refreshed from HTTPDNS: 127.0.0.1 (ttl 60s)".
    public var detail: String

    public init(time: Date = Date(), kind: Kind, host: String, family: IPFamily? = nil, detail: String) {
        self.time = time
        self.kind = kind
        self.host = host
        self.family = family
        self.detail = detail
    }
}

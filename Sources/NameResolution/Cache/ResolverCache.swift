// The resolver an app would embed: HTTPDNS answers cached per name and family for their TTL,
// served at once by a non-blocking lookup, refreshed one request per name, with system DNS
// as the fallback and every step told as an event.
import CurlTransport
import Dispatch
import FoundationEssentials
import FoundationGaps

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the cache reads the time; tests pass a clock they move by hand.
public protocol ResolverClock: Sendable {
    func now() -> Date
}

/// The real time, from the kernel's coarse real-time clock where there is one (Linux).
///
/// The coarse clock moves in steps of the scheduler tick (1-4 ms), far below a TTL's one second,
/// and reads in a quarter of the time of a precise one: the precise read was a fifth of a
/// cache lookup.
public struct WallClock: ResolverClock {
    public init() {}
    public func now() -> Date {
        #if os(Linux)
            var time = timespec()
            clock_gettime(CLOCK_REALTIME_COARSE, &time)
            return Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9)
        #else
            return Date()
        #endif
    }
}

/// A cache key: the normalised name and the family.
struct CacheKey: Sendable {
    let host: HostKey
    let family: IPFamily

    init(host: String, family: IPFamily) {
        self.host = HostKey(host)
        self.family = family
    }

    /// The normalised name.
    var name: String { host.name }
}

/// The cached entries: one plain dictionary per family, keyed by the normalised name.
///
/// Keyed by the name alone, `lookup` hashes the name once and compares it once: a (name, family)
/// key cost a retain, a release and a second hash input on every lookup.
struct CacheEntries {
    var v4: [HostKey: CacheEntrySnapshot] = [:]
    var v6: [HostKey: CacheEntrySnapshot] = [:]

    subscript(key: CacheKey) -> CacheEntrySnapshot? {
        get {
            switch key.family {
            case .v4: v4[key.host]
            case .v6: v6[key.host]
            }
        }
        set {
            switch key.family {
            case .v4: v4[key.host] = newValue
            case .v6: v6[key.host] = newValue
            }
        }
    }

    /// Runs `body` on the dictionary of `family`, in place.
    @inline(__always)
    mutating func withTable<T>(_ family: IPFamily, _ body: (inout [HostKey: CacheEntrySnapshot]) -> T) -> T {
        switch family {
        case .v4: body(&v4)
        case .v6: body(&v6)
        }
    }

    var all: [CacheEntrySnapshot] { Array(v4.values) + Array(v6.values) }

    var count: Int { v4.count + v6.count }

    /// Forgets `host` in both families.
    mutating func remove(_ host: HostKey) {
        v4[host] = nil
        v6[host] = nil
    }
}

/// What a cached entry is worth now: the one rule `lookup` and `resolve` both follow.
enum Freshness: Equatable {
    /// Within its TTL: served as it is.
    case fresh
    /// Expired, but expired-IP reuse is on: served (source `.stale`) while a refresh runs;
    /// `refresh` says whether one must start (none is under way yet).
    case stale(refresh: Bool)
    /// Expired and not to be served; `refreshing` says whether a request is already out.
    case expired(refreshing: Bool)

    init(of entry: CacheEntrySnapshot, now: Date, reuseExpired: Bool) {
        // `entry.expiresAt > now` in plain seconds, as `Date` computes it.
        let expiresAt = entry.resolvedAt.timeIntervalSinceReferenceDate + TimeInterval(entry.ttl)
        if expiresAt > now.timeIntervalSinceReferenceDate {
            self = .fresh
        } else if reuseExpired {
            self = .stale(refresh: !entry.refreshing)
        } else {
            self = .expired(refreshing: entry.refreshing)
        }
    }
}

/// The resolver cache: HTTPDNS through a TTL cache, system DNS beside it.
///
/// Everything (entries, configuration, requests in flight, subscribers) sits in one
/// dictionary-backed state behind one mutex, so `lookup` answers without suspending. The
/// mutex is never held across an await, an event delivery or another lock.
public final class ResolverCache: Sendable {
    public let provider: any HTTPDNSProvider
    let system: SystemResolver
    let clock: any ResolverClock
    /// Bounds the HTTPDNS queries in flight: a batch of distinct names must not open a socket each.
    private let httpdnsQueries = ResolutionGate(limit: ResolutionGate.httpdnsQueryLimit)
    private let state: Locked<State>
    /// Problems met while loading the persistent cache (a corrupt file...), for the user.
    public let loadWarnings: [String]

    typealias Outcome = Result<ProviderAnswer, ResolutionError>

    struct InFlight {
        var id: Int
        var families: Set<IPFamily>
        var task: Task<Outcome, Never>
        /// Whether the request has left ipdirect yet: a resolve that gives up before it did was
        /// kept waiting by ipdirect, not by the service.
        var departures: TransferDepartures
    }

    struct State {
        var configuration: ResolverConfiguration
        var entries = CacheEntries()
        var inflight: [String: InFlight] = [:]
        /// When a background request for a name last failed: lookups of a name the service
        /// cannot answer must not turn into a request each.
        var failedAt: [String: Date] = [:]
        var subscribers: [Int: AsyncStream<ResolverEvent>.Continuation] = [:]
        var nextID = 0
    }

    /// Creates the cache and loads the persistent file when `configuration.cachePath` is set.
    ///
    /// - Parameters:
    ///   - provider: the HTTPDNS service, e.g. `ProviderFactory.make(configuration)`.
    ///   - clock: the time source for TTLs (tests move a manual one).
    public init(
        configuration: ResolverConfiguration, provider: any HTTPDNSProvider, system: SystemResolver? = nil,
        clock: any ResolverClock = WallClock()
    ) {
        self.provider = provider
        self.system = system ?? SystemResolver(dnsServer: configuration.dnsServer)
        self.clock = clock
        var initial = State(configuration: configuration)
        var warnings: [String] = []
        if let path = configuration.cachePath {
            let loaded = CacheFile.load(
                path, identity: configuration.cacheIdentity, now: clock.now(), keepExpired: configuration.reuseExpired)
            for entry in loaded.entries { initial.entries[CacheKey(host: entry.host, family: entry.family)] = entry }
            if let warning = loaded.warning { warnings.append(warning) }
        }
        state = Locked(initial)
        loadWarnings = warnings
    }

    deinit {
        state.withLock { s in
            for continuation in s.subscribers.values { continuation.finish() }
        }
    }

    // MARK: Settings the console toggles

    /// The configuration in force (family and expired-IP reuse change at run time).
    public var configuration: ResolverConfiguration { state.withLock { $0.configuration } }

    /// Sets the address family `resolve` uses when none is given.
    public func setFamily(_ family: AddressFamily) {
        state.withLock { $0.configuration.family = family }
    }

    /// Turns expired-IP reuse on or off.
    public func setReuseExpired(_ reuse: Bool) {
        state.withLock { $0.configuration.reuseExpired = reuse }
    }

    // MARK: Non-blocking lookup

    /// The cached answer for `host` and `family`, at once, without waiting on the network.
    ///
    /// - Returns: the fresh entry; or, with expired-IP reuse on, the expired one (source
    ///   `.stale`) while a refresh runs in the background; otherwise nil, and a resolve starts
    ///   in the background so a later lookup finds it.
    public func lookup(_ host: String, family: IPFamily) -> CacheEntrySnapshot? {
        let now = clock.now()
        let key = HostKey(host)
        var follow = LookupFollow.hit
        var listening = false
        let found = probe(key, family: family, now: now, follow: &follow, listening: &listening)
        if case .hit = follow, !listening { return found }
        let name = key.name
        switch follow {
        case .hit:
            if let found {
                emit([ResolverEvent(time: now, kind: .hit, host: name, family: family, detail: Self.describe(found))])
            }
        case .waitMiss:
            if listening {
                emit([
                    ResolverEvent(
                        time: now, kind: .miss, host: name, family: family,
                        detail: "\(name) \(family.rawValue) not cached; a resolve is under way")
                ])
            }
        case .fetch(let expired):
            let started = startFetch(name, families: [family])
            guard started || listening else { break }
            let what = expired ? "expired" : "not cached"
            let next = started ? "resolving in the background" : "a resolve is under way"
            emit([
                ResolverEvent(
                    time: now, kind: expired ? .expired : .miss, host: name, family: family,
                    detail: "\(name) \(family.rawValue) \(what); \(next)")
            ])
        case .stale(let refresh):
            if let found {
                emit([
                    ResolverEvent(
                        time: now, kind: .expired, host: name, family: family,
                        detail:
                            "\(name) \(family.rawValue) served expired (\(found.ips.joined(separator: ", "))) while refreshing"
                    )
                ])
            }
            if refresh { _ = startFetch(name, families: [family]) }
        }
        return found
    }

    /// `lookup`'s one access to the state: the stored entry judged, counted and copied out in
    /// place, so it is copied (its strings and arrays retained) once, for the caller.
    @inline(__always)
    private func probe(
        _ key: HostKey, family: IPFamily, now: Date, follow: inout LookupFollow, listening: inout Bool
    ) -> CacheEntrySnapshot? {
        state.withLock { s in
            listening = !s.subscribers.isEmpty
            let reuseExpired = s.configuration.reuseExpired
            return s.entries.withTable(family) { table in
                guard let index = table.index(forKey: key) else {
                    follow = .fetch(expired: false)
                    return nil
                }
                return Self.serve(&table.values[index], now: now, reuseExpired: reuseExpired, follow: &follow)
            }
        }
    }

    private enum LookupFollow {
        case hit, waitMiss
        case fetch(expired: Bool)
        case stale(refresh: Bool)
    }

    /// What `lookup` answers from a stored entry, counting the hit, and what follows it.
    @inline(__always)
    private static func serve(
        _ entry: inout CacheEntrySnapshot, now: Date, reuseExpired: Bool, follow: inout LookupFollow
    ) -> CacheEntrySnapshot? {
        switch Freshness(of: entry, now: now, reuseExpired: reuseExpired) {
        case .fresh:
            entry.hits += 1
            return entry
        case .stale(let refresh):
            entry.hits += 1
            follow = .stale(refresh: refresh)
            var stale = entry
            stale.source = .stale
            return stale
        case .expired(let refreshing):
            follow = refreshing ? .waitMiss : .fetch(expired: true)
            return nil
        }
    }

    // MARK: Blocking resolve

    /// Resolves `host` through system DNS and HTTPDNS side by side and compares them.
    ///
    /// HTTPDNS goes through the cache: a fresh entry answers without a request; an expired
    /// one with reuse on answers stale and refreshes in the background. When HTTPDNS fails
    /// and fallback is on, the HTTPDNS side carries system DNS's addresses (source
    /// `system-fallback`) and the failure's reason in `error`.
    ///
    /// With `afresh`, HTTPDNS is asked whatever the cache holds, as `dig` would, the fresh
    /// answer is stored, and `cached` says what the cache held before and whether it differs.
    ///
    /// - Parameters:
    ///   - family: nil uses the configured family.
    ///   - timeout: for each side; nil uses the configured timeout.
    ///   - afresh: ask the service every time (`ipdirect resolve`) instead of the SDK's cached read.
    public func resolve(
        _ host: String, family: AddressFamily? = nil, timeout: Duration? = nil, afresh: Bool = false
    ) async -> HostResolution {
        await resolve(host, family: family, timeout: timeout, afresh: afresh, held: nil)
    }

    /// Resolves several names as `resolve` does each, in the order given; with `afresh`, HTTPDNS
    /// is asked for them in batches of 5 (one request each where the service has a batch API:
    /// alicloud v2, the legacy `/resolve` or, signed, `/sign_resolve`, as the SDKs pre-resolve).
    public func resolve(
        _ hosts: [String], family: AddressFamily? = nil, timeout: Duration? = nil, afresh: Bool = false
    ) async -> [HostResolution] {
        let families = (family ?? configuration.family).concrete()
        let names = hosts.map(Self.normalized)
        // What the cache held, read before the batch can store its answers.
        var held: [String: [IPFamily: CacheEntrySnapshot]] = [:]
        if afresh {
            for name in names { held[name] = heldEntries(name, families: families) }
            let asked = Array(Set(names.filter { IPAddress($0) == nil })).sorted()
            if asked.count > 1 { startBatch(asked, families: families) }
        }
        return await withTaskGroup(of: (Int, HostResolution).self) { group in
            for (index, name) in names.enumerated() {
                let before = held[name]
                group.addTask {
                    (index, await self.resolve(name, family: family, timeout: timeout, afresh: afresh, held: before))
                }
            }
            var ordered: [(Int, HostResolution)] = []
            for await result in group { ordered.append(result) }
            return ordered.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// `resolve`, with what the cache held taken before (a batch) or now (nil).
    private func resolve(
        _ host: String, family: AddressFamily?, timeout: Duration?, afresh: Bool,
        held heldBefore: [IPFamily: CacheEntrySnapshot]?
    ) async -> HostResolution {
        let name = Self.normalized(host)
        let config = configuration
        let families = (family ?? config.family).concrete()
        let limit = timeout ?? .seconds(config.timeout)
        if let literal = literalResolution(name) { return literal }
        async let systemSide = system.resolve(name, families: families, timeout: limit)
        let held = afresh ? heldBefore ?? heldEntries(name, families: families) : [:]
        let answer = await httpdnsAnswer(name, families: families, limit: limit, afresh: afresh)
        let sys = await systemSide
        return resolution(
            name, families: families, answer: answer, system: sys, held: held, afresh: afresh, config: config)
    }

    /// The resolution of an address literal: it needs no resolving, and both sides "answer" it so
    /// a probe can use it; nil for a name. Not async, so what it builds stays out of the lookup's
    /// async frame, which every probe under way holds (issue 34: /probe's peak memory).
    @inline(never)
    private func literalResolution(_ name: String) -> HostResolution? {
        guard let literal = IPAddress(name) else { return nil }
        let sys = SystemAnswer(
            ipv4: literal.family == .v4 ? [literal] : [], ipv6: literal.family == .v6 ? [literal] : [])
        return HostResolution(
            host: name, system: sys,
            httpdns: HTTPDNSAnswer(provider: ProviderID(provider.name), ipv4: sys.ipv4, ipv6: sys.ipv6, source: .cache))
    }

    /// Both columns put together, system DNS standing in for a failed HTTPDNS where the
    /// configuration says so. Not async, so what it builds lives on the thread's stack for the
    /// moment it runs, not in the lookup's async frame.
    @inline(never)
    private func resolution(
        _ name: String, families: Set<IPFamily>, answer: HTTPDNSAnswer, system sys: SystemAnswer,
        held: [IPFamily: CacheEntrySnapshot], afresh: Bool, config: ResolverConfiguration
    ) -> HostResolution {
        var answer = answer
        // With `--provider system` the column is getaddrinfo itself: standing the other column in
        // for it (with a made-up TTL) would pass off the DNS server's answer as the system's.
        if let failure = answer.error, config.fallbackToSystem, config.provider != .system {
            if sys.error == nil {
                answer.ipv4 = sys.ipv4
                answer.ipv6 = sys.ipv6
                answer.source = .systemFallback
                answer.ttl = FamilyTTL(
                    v4: sys.ipv4.isEmpty ? nil : config.fallbackTTL, v6: sys.ipv6.isEmpty ? nil : config.fallbackTTL)
                storeFallback(name, families: families, system: sys, ttl: config.fallbackTTL)
                let ips = (sys.ipv4 + sys.ipv6).joined(separator: ", ")
                emit([
                    ResolverEvent(
                        time: clock.now(), kind: .fallback, host: name,
                        detail: "\(name): HTTPDNS failed (\(failure.sentence)); using system DNS: \(ips)")
                ])
            } else {
                emit([
                    ResolverEvent(
                        time: clock.now(), kind: .error, host: name,
                        detail:
                            "\(name): HTTPDNS failed (\(failure.sentence)) and so did system DNS (\(sys.error?.sentence ?? "?"))"
                    )
                ])
            }
        }
        var resolution = HostResolution(host: name, system: sys, httpdns: answer)
        if afresh { resolution.cached = Self.compare(held: held, fresh: answer, families: families, now: clock.now()) }
        return resolution
    }

    /// What the cache holds for `name` now, without counting a hit or starting a refresh.
    func heldEntries(_ name: String, families: Set<IPFamily>) -> [IPFamily: CacheEntrySnapshot] {
        state.withLock { s in
            var held: [IPFamily: CacheEntrySnapshot] = [:]
            for family in families { held[family] = s.entries[CacheKey(host: name, family: family)] }
            return held
        }
    }

    /// The held entries beside a fresh answer.
    static func compare(
        held: [IPFamily: CacheEntrySnapshot], fresh: HTTPDNSAnswer, families: Set<IPFamily>, now: Date
    ) -> CacheComparison {
        guard !held.isEmpty else { return CacheComparison(held: false) }
        var comparison = CacheComparison(
            held: true, ipv4: held[.v4]?.ips ?? [], ipv6: held[.v6]?.ips ?? [],
            secondsLeft: held.values.map { $0.secondsLeft(at: now, rounded: .down) }.min(),
            source: held[.v4]?.source ?? held[.v6]?.source)
        if fresh.error == nil {
            comparison.differs = families.contains { family in
                held[family].map { Set($0.ips) != Set(family == .v4 ? fresh.ipv4 : fresh.ipv6) } ?? false
            }
        }
        return comparison
    }

    /// The HTTPDNS side of `resolve`, through the cache (or around it, `afresh`).
    func httpdnsAnswer(
        _ name: String, families: Set<IPFamily>, limit: Duration, afresh: Bool = false
    ) async -> HTTPDNSAnswer {
        let (held, need) = cachedAnswer(name, families: families, afresh: afresh)
        if need.isEmpty { return held }
        let started = DispatchTime.now()
        let (task, _, departures) = fetch(name, families: need)
        let outcome = await Deadline.first(within: limit) { await task.value }
        let ms = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6
        return answered(held, need: need, outcome: outcome, ms: ms, limit: limit, departures: departures)
    }

    /// What the cache holds for `name` (counted as hits, stale entries refreshed in the
    /// background), and the families it must ask HTTPDNS for. Not async (nor `answered`), so what
    /// they build lives on the thread's stack for the moment they run, not in the async frame
    /// every probe under way holds (issue 34: /probe's peak memory).
    @inline(never)
    private func cachedAnswer(
        _ name: String, families: Set<IPFamily>, afresh: Bool
    ) -> (answer: HTTPDNSAnswer, need: Set<IPFamily>) {
        let now = clock.now()
        var cached: [IPFamily: CacheEntrySnapshot] = [:]
        var need: Set<IPFamily> = []
        var staleRefresh: Set<IPFamily> = []
        var events: [ResolverEvent] = []
        state.withLock { s in
            for family in families.sorted(by: { $0.rawValue < $1.rawValue }) {
                let key = CacheKey(host: name, family: family)
                if afresh {
                    need.insert(family)
                    events.append(
                        ResolverEvent(
                            time: now, kind: .miss, host: name, family: family,
                            detail: "\(name) \(family.rawValue) asked afresh, whatever the cache holds"))
                    continue
                }
                // A system-fallback entry serves `lookup`, but `resolve` always asks HTTPDNS again.
                guard var entry = s.entries[key], entry.source != .systemFallback else {
                    need.insert(family)
                    events.append(
                        ResolverEvent(
                            time: now, kind: .miss, host: name, family: family,
                            detail: "\(name) \(family.rawValue) not cached; asking HTTPDNS"))
                    continue
                }
                switch Freshness(of: entry, now: now, reuseExpired: s.configuration.reuseExpired) {
                case .fresh:
                    entry.hits += 1
                    s.entries[key] = entry
                    cached[family] = entry
                    events.append(
                        ResolverEvent(time: now, kind: .hit, host: name, family: family, detail: Self.describe(entry)))
                case .stale(let refresh):
                    entry.hits += 1
                    s.entries[key] = entry
                    var stale = entry
                    stale.source = .stale
                    cached[family] = stale
                    if refresh { staleRefresh.insert(family) }
                    events.append(
                        ResolverEvent(
                            time: now, kind: .expired, host: name, family: family,
                            detail: "\(name) \(family.rawValue) served expired while refreshing"))
                case .expired:
                    need.insert(family)
                    events.append(
                        ResolverEvent(
                            time: now, kind: .expired, host: name, family: family,
                            detail: "\(name) \(family.rawValue) expired; asking HTTPDNS"))
                }
            }
        }
        emit(events)
        if !staleRefresh.isEmpty { startFetch(name, families: staleRefresh) }

        var answer = HTTPDNSAnswer(provider: ProviderID(provider.name))
        answer.ipv4 = cached[.v4]?.ips ?? []
        answer.ipv6 = cached[.v6]?.ips ?? []
        // Each family's own TTL, for the families that have addresses; what the legacy API said beside them.
        for (family, entry) in cached where !entry.ips.isEmpty {
            answer.ttl[family] = entry.ttl
            if let origin = entry.originTTL {
                answer.originTTL = (answer.originTTL ?? FamilyTTL()).setting(family, origin)
            }
            answer.extra = answer.extra ?? entry.extra
        }
        if need.isEmpty {
            let sources = Set(cached.values.map(\.source))
            answer.source = sources.contains(.stale) ? .stale : sources == [.persisted] ? .persisted : .cache
        }
        return (answer, need)
    }

    /// The cached part of an answer with what HTTPDNS said for the families in `need` (nil: no
    /// answer within `limit`, read by whether the request had left, `departures`), asked in `ms`.
    @inline(never)
    private func answered(
        _ held: HTTPDNSAnswer, need: Set<IPFamily>, outcome: Outcome?, ms: Double,
        limit: Duration, departures: TransferDepartures
    ) -> HTTPDNSAnswer {
        var answer = held
        answer.ms = ms
        // Who was asked, answer or failure: getaddrinfo's failure is not HTTPDNS's.
        answer.source = Self.freshSource(configuration)
        switch outcome {
        case nil:
            answer.error = .httpdns(.unanswered(within: limit, departures.reading))
        case .failure(let error)?:
            answer.error = .httpdns(error)
            if case .notAnIP(let junk) = error { answer.rejected = junk }
        case .success(let fresh)?:
            if need.contains(.v4) { answer.ipv4 = fresh.ipv4 }
            if need.contains(.v6) { answer.ipv6 = fresh.ipv6 }
            for family in need where !fresh.ips(family).isEmpty {
                answer.ttl[family] = fresh.ttl[family]
                if let origin = fresh.originTTL?[family] {
                    answer.originTTL = (answer.originTTL ?? FamilyTTL()).setting(family, origin)
                }
            }
            answer.extra = fresh.extra ?? answer.extra
            answer.source = Self.freshSource(configuration)
            answer.clientIP = fresh.clientIP
            answer.server = fresh.server
            answer.notes = fresh.notes.isEmpty ? nil : fresh.notes
        }
        return answer
    }

    /// What a fresh answer is labelled: system DNS's when it stands in for HTTPDNS. Takes the
    /// configuration as an argument: `store` asks while it holds the state lock.
    private static func freshSource(_ configuration: ResolverConfiguration) -> AnswerSource {
        configuration.provider == .system ? .system : .httpdns
    }

    // MARK: Fetching (one request in flight per name)

    /// Starts a request for `host` unless one covering `families` is in flight.
    ///
    /// - Returns: whether a new request started.
    /// A name whose background request failed is not asked again for this long.
    static let backgroundRetryDelay: TimeInterval = 5

    @discardableResult
    func startFetch(_ host: String, families: Set<IPFamily>) -> Bool {
        let now = clock.now()
        let recentlyFailed = state.withLock { c in
            c.failedAt[host].map { now.timeIntervalSince($0) < Self.backgroundRetryDelay } ?? false
        }
        if recentlyFailed { return false }
        return fetch(host, families: families).started
    }

    /// Waits until the requests under way (those a `lookup` miss started) have finished and
    /// stored their answers. A one-shot command calls it before saving the cache, so a miss's
    /// answer is there for the next read, as the SDKs' background resolve keeps it.
    public func backgroundRequestsFinished() async {
        let running = state.withLock { $0.inflight.values.map(\.task) }
        for task in running { _ = await task.value }
    }

    /// The in-flight request for `host` covering `families`, or a new one.
    func fetchTask(_ host: String, families: Set<IPFamily>) -> Task<Outcome, Never> {
        fetch(host, families: families).task
    }

    private func fetch(
        _ host: String, families: Set<IPFamily>
    ) -> (task: Task<Outcome, Never>, started: Bool, departures: TransferDepartures) {
        state.withLock { c in
            if let running = c.inflight[host], running.families.isSuperset(of: families) {
                return (running.task, false, running.departures)
            }
            c.nextID += 1
            let id = c.nextID
            let wanted = families.union(c.inflight[host]?.families ?? [])
            for family in wanted { c.entries[CacheKey(host: host, family: family)]?.refreshing = true }
            // Counted from here: the query gate's wait is ipdirect's as much as the loop's.
            let departures = TransferDepartures()
            let task = Task {
                await TransferDepartures.$current.withValue(departures) {
                    await self.performFetch(host, families: wanted, id: id)
                }
            }
            c.inflight[host] = InFlight(id: id, families: wanted, task: task, departures: departures)
            return (task, true, departures)
        }
    }

    /// Puts batch requests in flight for `hosts` (5 names each, within the query gate): each
    /// name's in-flight entry waits on its batch and stores its answer, so the resolves that
    /// follow join it rather than ask one name a request.
    private func startBatch(_ hosts: [String], families: Set<IPFamily>) {
        var start = 0
        while start < hosts.count {
            let chunk = Array(hosts[start..<min(start + Self.batchSize, hosts.count)])
            start += Self.batchSize
            let departures = TransferDepartures()
            let batch = Task { () -> [String: Outcome] in
                await TransferDepartures.$current.withValue(departures) {
                    await httpdnsQueries.enter()
                    defer { httpdnsQueries.leave() }
                    return await provider.resolveBatch(chunk, families: families)
                }
            }
            state.withLock { c in
                for host in chunk {
                    if let running = c.inflight[host], running.families.isSuperset(of: families) { continue }
                    c.nextID += 1
                    let id = c.nextID
                    for family in families { c.entries[CacheKey(host: host, family: family)]?.refreshing = true }
                    let task = Task { () -> Outcome in
                        let outcome =
                            await batch.value[host]
                            ?? .failure(.malformed(detail: "the batch answer did not include \(host)"))
                        self.store(outcome, host: host, families: families, kind: .refresh, inflightID: id)
                        return outcome
                    }
                    c.inflight[host] = InFlight(id: id, families: families, task: task, departures: departures)
                }
            }
        }
    }

    /// Names a batch asks for at once: the services' batch APIs take 5.
    static let batchSize = 5

    private func performFetch(_ host: String, families: Set<IPFamily>, id: Int) async -> Outcome {
        // A batch of distinct names queues here, not in open sockets.
        await httpdnsQueries.enter()
        defer { httpdnsQueries.leave() }
        let outcome: Outcome
        do throws(ResolutionError) {
            outcome = .success(try await provider.resolve(host, families: families))
        } catch {
            outcome = .failure(error)
        }
        store(outcome, host: host, families: families, kind: .refresh, inflightID: id)
        return outcome
    }

    /// Stores an outcome: answers replace entries; failures leave what the cache had.
    ///
    /// Entries are written before the request leaves the in-flight table, so a resolve in
    /// between finds either the request or its answer, never neither.
    private func store(
        _ outcome: Outcome, host: String, families: Set<IPFamily>, kind: ResolverEvent.Kind, inflightID: Int?
    ) {
        let now = clock.now()
        var events: [ResolverEvent] = []
        state.withLock { s in
            switch outcome {
            case .success(let answer):
                for family in families.sorted(by: { $0.rawValue < $1.rawValue }) {
                    let key = CacheKey(host: host, family: family)
                    guard answer.answered.contains(family) else {
                        s.entries[key]?.refreshing = false
                        continue
                    }
                    let entry = CacheEntrySnapshot(
                        host: key.name, family: family, ips: answer.ips(family), ttl: answer.ttl[family] ?? 60,
                        resolvedAt: now, source: Self.freshSource(s.configuration), hits: s.entries[key]?.hits ?? 0,
                        originTTL: answer.originTTL?[family], extra: answer.extra)
                    s.entries[key] = entry
                    events.append(
                        ResolverEvent(time: now, kind: kind, host: host, family: family, detail: Self.describe(entry)))
                }
                s.failedAt[host] = nil
            case .failure(let error):
                var kept = false
                for family in families {
                    let key = CacheKey(host: host, family: family)
                    if s.entries[key] != nil {
                        s.entries[key]?.refreshing = false
                        kept = true
                    }
                }
                events.append(
                    ResolverEvent(
                        time: now, kind: .error, host: host,
                        detail: "\(host): HTTPDNS failed: \(error)" + (kept ? " (keeping the cached answer)" : "")))
                s.failedAt[host] = now
            }
            if let inflightID, s.inflight[host]?.id == inflightID { s.inflight[host] = nil }
        }
        emit(events)
    }

    private func storeFallback(_ host: String, families: Set<IPFamily>, system: SystemAnswer, ttl: Int) {
        let now = clock.now()
        for family in families {
            let key = CacheKey(host: host, family: family)
            let ips = family == .v4 ? system.ipv4 : system.ipv6
            guard !ips.isEmpty else { continue }
            state.withLock { s in
                // Never displace what HTTPDNS said: the cache keeps what it had.
                guard s.entries[key] == nil else { return }
                s.entries[key] = CacheEntrySnapshot(
                    host: key.name, family: family, ips: ips, ttl: ttl, resolvedAt: now, source: .systemFallback)
            }
        }
    }

    // MARK: Maintenance

    /// Every entry, sorted by name then family: a copy, safe to keep.
    public func entries() -> [CacheEntrySnapshot] {
        state.withLock { $0.entries.all }.sorted {
            ($0.host, $0.family.rawValue) < ($1.host, $1.family.rawValue)
        }
    }

    /// Removes one name (both families), or everything when `host` is nil.
    public func flush(_ host: String? = nil) {
        let key = host.map(HostKey.init)
        let name = key?.name
        let removed = state.withLock { s -> Int in
            let before = s.entries.count
            if let key {
                s.entries.remove(key)
            } else {
                s.entries = CacheEntries()
            }
            return before - s.entries.count
        }
        emit([
            ResolverEvent(
                time: clock.now(), kind: .flush, host: name ?? "*",
                detail: name.map { "flushed \($0) (\(removed) entries)" }
                    ?? "flushed the whole cache (\(removed) entries)")
        ])
    }

    /// Asks HTTPDNS again for `host` now, for the families cached (or configured), and waits.
    public func refresh(_ host: String) async {
        let name = Self.normalized(host)
        var families: Set<IPFamily> = []
        state.withLock { s in
            for family in IPFamily.allCases where s.entries[CacheKey(host: name, family: family)] != nil {
                families.insert(family)
            }
        }
        if families.isEmpty { families = configuration.family.concrete() }
        _ = await fetchTask(name, families: families).value
    }

    /// Resolves names ahead of time (the configured `prefetch` list by default), in batches
    /// where the provider has a batch API.
    public func prefetch(_ names: [String]? = nil) async {
        let hosts = (names ?? configuration.prefetch).map(Self.normalized)
        guard !hosts.isEmpty else { return }
        let families = configuration.family.concrete()
        let results = await provider.resolveBatch(hosts, families: families)
        for host in hosts {
            guard let result = results[host] else { continue }
            store(result, host: host, families: families, kind: .prefetch, inflightID: nil)
        }
    }

    /// Puts an entry in the cache directly (tests, benchmarks, imports). Addresses of the other
    /// family are dropped, and repeats, as from any other source.
    public func insert(_ entry: CacheEntrySnapshot) {
        var clean = entry
        let key = CacheKey(host: entry.host, family: entry.family)
        clean.host = key.name
        clean.ips = entry.ips.reduce(into: []) { kept, ip in
            if ip.family == entry.family, !kept.contains(ip) { kept.append(ip) }
        }
        clean.ttl = ProviderAnswer.clampTTL(entry.ttl)
        state.withLock { $0.entries[key] = clean }
    }

    // MARK: Persistence

    /// Writes the cache to `configuration.cachePath` atomically (temporary file, then rename),
    /// filed under this provider's identity beside other providers' answers.
    ///
    /// - Throws: `ConfigurationError.io` when the file cannot be written; nothing happens
    ///   when persistence is off, or when the file is one ipdirect leaves alone (a newer
    ///   version's, or not a regular file), which `loadWarnings` said.
    public func save() throws(ConfigurationError) {
        guard let path = configuration.cachePath else { return }
        let configuration = configuration
        try CacheFile.save(entries(), identity: configuration.cacheIdentity, to: path, now: clock.now())
    }

    // MARK: Events

    /// A new stream of everything the resolver does; each call is a new subscriber.
    /// The stream keeps the newest 512 events when its reader falls behind.
    public func events() -> AsyncStream<ResolverEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ResolverEvent.self, bufferingPolicy: .bufferingNewest(512))
        let id = state.withLock { c -> Int in
            c.nextID += 1
            c.subscribers[c.nextID] = continuation
            return c.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { c in c.subscribers[id] = nil }
        }
        return stream
    }

    private func emit(_ events: [ResolverEvent]) {
        guard !events.isEmpty else { return }
        let listeners = state.withLock { Array($0.subscribers.values) }
        for listener in listeners {
            for event in events { listener.yield(event) }
        }
    }

    // MARK: Helpers

    /// Lowercase, no trailing dot: `Sni-A.Lab.Test.` and `sni-a.lab.test` are one entry.
    static func normalized(_ host: String) -> String {
        HostKey(host).name
    }

    static func describe(_ entry: CacheEntrySnapshot) -> String {
        let ips = entry.ips.isEmpty ? "no address" : entry.ips.joined(separator: ", ")
        return "\(entry.host) \(entry.family.rawValue) from \(entry.source.rawValue): \(ips) (ttl \(entry.ttl)s)"
    }
}

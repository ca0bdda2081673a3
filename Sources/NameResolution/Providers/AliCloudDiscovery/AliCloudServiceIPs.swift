// Where both Alibaba providers (v2 and legacy) send their queries: one fixed endpoint, or the service
// IPs discovered from the region's start IPs through /ss, rotated on failure, as the SDKs do.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import TerminalText
import WireCiphers

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

    /// Whether a failure is the service IP's, so the next one is asked (the SDKs' rule).
    static func shouldRotate(_ error: ResolutionError) -> Bool {
        switch error {
        case .timeout, .refused, .unreachable, .tls, .transport, .endpointUnresolvable: return true
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
        /// Whether the first discovery has left ipdirect: a query waiting on it was sent once it
        /// has (its deadline reads so), however many queries wait on the one request.
        var firstDepartures = TransferDepartures()
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
    convenience init(endpoint: String) {
        let base = trimmedBase(endpoint)
        self.init(fixed: Base(url: base, label: URLComponents(string: base)?.host ?? base))
    }

    /// Queries go to `fixed` only, its certificate checked as it says.
    init(fixed: Base) {
        self.fixed = fixed
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
                // An IPv6 start's host comes bracketed ("[2001:db8::1]"): an address all the same,
                // so its certificate is checked against the service name, as an IPv4 start's is.
                let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
                return Base(url: url, label: bare, checkName: IPAddress(bare) == nil ? nil : serviceName)
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
        enum Next { case listed([Base], refresh: Bool), waiting(Task<[Base], Never>, TransferDepartures) }
        let next = schedule.withLock { s -> Next in
            if let list = s.list {
                let due = !s.refreshing && time.timeIntervalSince(s.askedAt) >= Self.refreshAfter
                if due { s.startRefresh(at: time) }
                return .listed(list, refresh: due)
            }
            if let first = s.first { return .waiting(first, s.firstDepartures) }
            s.askedAt = time
            let problem = discoveryProblem
            let departures = s.firstDepartures
            let first = Task {
                await TransferDepartures.$current.withValue(departures) {
                    await Self.discover(discovery, problem: problem, fallingBackTo: "asking the start IPs directly")
                        ?? discovery.starts
                }
            }
            s.first = first
            return .waiting(first, departures)
        }
        let first: Task<[Base], Never>
        switch next {
        case .listed(let current, let refresh):
            if refresh { refreshInBackground(discovery) }
            return current
        case .waiting(let task, let departures):
            first = task
            TransferDepartures.current?.follow(departures)
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
            // Not the asking query's transfer: it is answered from the old list meanwhile.
            let found = await TransferDepartures.$current.withValue(nil) {
                await Self.discover(discovery, problem: problem, fallingBackTo: "keeping the service IPs in use")
            }
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
        guard let object = JSONValue(parsing: body)?.object else {
            throw .malformed(detail: "the /ss answer is not a JSON object: \(preview(body))")
        }
        let v4 = (object["service_ip"]?.array ?? []).compactMap(\.string)
        let v6 = (object["service_ipv6"]?.array ?? []).compactMap(\.string)
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
        if let pinned = configuration.pinnedServiceAddress {
            return AliCloudServiceIPs(fixed: Base(url: pinned.url, label: pinned.label, checkName: pinned.checkName))
        }
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

extension ResolutionError {
    /// Whether the failure is the service address's own (no connection, no answer, a server
    /// error), so an SDK rotates to the next address; a refusal of the query is an answer.
    public var isServiceAddressFailure: Bool { AliCloudServiceIPs.shouldRotate(self) }
}

// The probe engine: resolves a URL's host both ways, plans one attempt per scenario and IP,
// runs them over the multi loop (following redirects hop by hop) and writes the verdict.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution
import TerminalText

/// Probes URLs: every applicable scenario against the addresses HTTPDNS and system DNS give.
public final class ProbeEngine: Sendable {
    public let options: ProbeOptions
    /// Proxy variables found in the environment (names only, never their values).
    public let proxyVariables: [String]
    private let resolve: HostResolver
    /// Asked about every redirect's new host and its addresses; nil lets redirects go anywhere
    /// the other rules allow.
    private let destinations: (any DestinationPolicy)?
    /// The multi loops transfers go to, one per core up to the bound on requests at once: a loop is
    /// one thread, and every TLS handshake on one thread left the other cores idle under `/probe`'s
    /// load (issue 34). Each transfer goes to the loop with the fewest unanswered, so a slow one
    /// holds up no queue behind it while another loop is free.
    private let loops: [TransferLoop]
    /// The engine whose multi loop this one shares (`with(options:)`), kept alive with it;
    /// nil when the loop is this engine's own.
    private let parent: ProbeEngine?

    /// Creates an engine with its own libcurl multi loop.
    ///
    /// - Parameters:
    ///   - resolve: how names are resolved (system DNS and HTTPDNS side by side).
    ///   - options: what to send and how.
    ///   - environment: where proxy variables are looked for.
    public init(
        resolve: @escaping HostResolver, options: ProbeOptions = ProbeOptions(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.resolve = resolve
        destinations = nil
        self.options = options
        proxyVariables = environment.keys
            .filter { ["http_proxy", "https_proxy", "all_proxy"].contains($0.lowercased()) }
            .filter { !(environment[$0] ?? "").isEmpty }
            .sorted()
        loops = Self.loops(bound: options.concurrency)
        parent = nil
    }

    /// As many loops as cores (at most 4, at most `bound`), sharing `bound` between them so the
    /// number of requests at once stays what `--concurrency` says.
    private static func loops(bound: Int) -> [TransferLoop] {
        let bound = max(1, bound)
        let count = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4, bound))
        return (0..<count).map { index in
            TransferLoop(maxActive: bound / count + (index < bound % count ? 1 : 0))
        }
    }

    /// The loop with the fewest exchanges unanswered.
    private var nextLoop: TransferLoop {
        loops.min { $0.unfinished < $1.unfinished } ?? loops[0]
    }

    private init(
        sharing parent: ProbeEngine, resolve: HostResolver? = nil, options: ProbeOptions,
        destinations: (any DestinationPolicy)? = nil
    ) {
        self.resolve = resolve ?? parent.resolve
        self.destinations = destinations ?? parent.destinations
        self.options = options
        proxyVariables = parent.proxyVariables
        loops = parent.loops
        self.parent = parent.parent ?? parent
    }

    deinit {
        if parent == nil { for loop in loops { loop.stop() } }
    }

    /// An engine with the same resolver, environment and multi loop (so the same bound on
    /// requests under way) but other options: a target's own scenarios, method or headers.
    public func with(options: ProbeOptions) -> ProbeEngine {
        ProbeEngine(sharing: self, options: options)
    }

    /// An engine sharing this one's multi loop that resolves names another way (`/probe`'s
    /// `provider=` and `dns_server=`).
    public func with(resolve: @escaping HostResolver, options: ProbeOptions) -> ProbeEngine {
        ProbeEngine(sharing: self, resolve: resolve, options: options)
    }

    /// An engine like this one whose redirects go only where `destinations` allows (a prober on
    /// others' word); the engines `with` makes from it keep the policy.
    public func with(destinations: any DestinationPolicy) -> ProbeEngine {
        ProbeEngine(sharing: self, options: options, destinations: destinations)
    }

    /// Probes one URL, reporting as it goes.
    ///
    /// - Parameter url: the URL as the user wrote it (no scheme means https).
    /// - Returns: events ending with `.finished` (or `.rejected` for an unusable URL).
    public func probe(_ url: String) -> AsyncStream<ProbeEvent> {
        AsyncStream { continuation in
            let task = Task {
                _ = await self.report(url) { continuation.yield($0) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Probes one URL.
    ///
    /// - Parameters:
    ///   - text: the URL as written.
    ///   - emit: receives each event as it happens.
    /// - Returns: the report, nil when the URL cannot be probed.
    public func report(_ text: String, emit: @escaping @Sendable (ProbeEvent) -> Void) async -> URLReport? {
        await report(text, memo: ResolutionMemo(), emit: emit)
    }

    func report(
        _ text: String, memo: ResolutionMemo, emit: @escaping @Sendable (ProbeEvent) -> Void
    ) async
        -> URLReport?
    {
        guard let url = Self.parsed(text, emit: emit) else { return nil }
        let resolution = await memo.resolution(of: url.host) { _ in await self.resolution(of: url) }
        let plans = planned(url, resolution, emit: emit)
        let finished = await withTaskGroup(of: (Int, Attempt, [String]).self) { group in
            for (index, plan) in plans.enumerated() {
                Self.started(plan, url: url, emit: emit)
                group.addTask {
                    let (attempt, notes) = await self.run(plan, url: url, memo: memo)
                    emit(.attemptFinished(attempt))
                    return (index, attempt, notes)
                }
            }
            var done: [(Int, Attempt, [String])] = []
            for await item in group { done.append(item) }
            return done.sorted { $0.0 < $1.0 }
        }
        return reported(url, resolution: resolution, finished: finished, emit: emit)
    }

    // What `report` does between its awaits. Not async, so what they build lives on the thread's
    // stack for the moment they run, not in the async frame every probe under way holds (issue
    // 34: /probe's peak memory).

    /// The URL `text` names, nil (and said) when it cannot be probed.
    @inline(never)
    private static func parsed(_ text: String, emit: @Sendable (ProbeEvent) -> Void) -> ProbeURL? {
        do {
            return try ProbeURL.parse(text)
        } catch {
            emit(.rejected(error))
            return nil
        }
    }

    /// The attempts to make for `url` resolved as `resolution`, which is said first.
    @inline(never)
    private func planned(
        _ url: ProbeURL, _ resolution: HostResolution, emit: @Sendable (ProbeEvent) -> Void
    ) -> [Plan] {
        emit(.resolved(resolution))
        return plan(url, resolution)
    }

    /// Says an attempt is starting.
    @inline(never)
    private static func started(_ plan: Plan, url: ProbeURL, emit: @Sendable (ProbeEvent) -> Void) {
        emit(
            .attemptStarted(
                PlannedAttempt(id: plan.id, url: url.text, scenario: plan.scenario, ip: plan.ip, ipSource: plan.source))
        )
    }

    /// The report of the finished attempts, said.
    @inline(never)
    private func reported(
        _ url: ProbeURL, resolution: HostResolution, finished: [(Int, Attempt, [String])],
        emit: @Sendable (ProbeEvent) -> Void
    ) -> URLReport {
        let report = report(url, resolution: resolution, finished: finished)
        emit(.finished(report))
        return report
    }

    /// The report of finished attempts, with their verdict. Not async, so what it builds lives on
    /// the thread's stack for the moment it runs, not in the probe's async frame.
    @inline(never)
    private func report(
        _ url: ProbeURL, resolution: HostResolution, finished: [(Int, Attempt, [String])]
    ) -> URLReport {
        let attempts = finished.map(\.1)
        var verdict = VerdictWriting.verdict(
            url: url, resolution: resolution, attempts: attempts, proxyVariables: proxyVariables)
        // What the attempts' redirects did that a person should hear of (a link-local address), once.
        for note in finished.flatMap(\.2) where !verdict.notes.contains(note) { verdict.notes.append(note) }
        // --all-ips promises every address: say when the answer held more than were kept.
        if options.allIPs { verdict.notes += (resolution.httpdns.notes ?? []).filter(ProviderAnswer.isCutNote) }
        return URLReport(
            url: shown(url), host: url.host, resolution: resolution,
            attempts: attempts, verdict: verdict)
    }

    // MARK: Planning

    /// One attempt to make: a scenario against one address, or a reason it cannot be made.
    struct Plan: Sendable {
        var id = UUID.random()
        var scenario: Scenario
        var ip: IPAddress?
        var source: IPSource?
        /// For system-dns: every address system DNS gave, pinned together as an app would see them.
        var pins: [IPAddress] = []
        /// For system-dns: the DNS server asked instead of getaddrinfo, when one was chosen.
        var dnsServer: DNSServer?
        /// Set when the attempt is not made: the outcome and why.
        var settled: Settlement?
    }

    /// An attempt settled without an exchange: what became of it and why.
    struct Settlement: Sendable, Equatable {
        var outcome: Outcome
        var reason: AttemptFailure
    }

    private func resolution(of url: ProbeURL) async -> HostResolution {
        let host = url.host
        if let literal = url.literalHost {
            let v4 = literal.family == .v4 ? [literal] : []
            let v6 = v4.isEmpty ? [literal] : []
            return HostResolution(
                host: host, system: SystemAnswer(ipv4: v4, ipv6: v6),
                httpdns: HTTPDNSAnswer(provider: "literal", ipv4: v4, ipv6: v6))
        }
        return await resolve(host)
    }

    func plan(_ url: ProbeURL, _ resolution: HostResolution) -> [Plan] {
        let httpdns = resolution.httpdns
        let system = resolution.system
        let httpdnsIPs = httpdns.error == nil ? httpdns.ipv4 + httpdns.ipv6 : []
        let systemIPs = system.error == nil ? system.ipv4 + system.ipv6 : []

        var targets: [(ip: IPAddress, source: IPSource)] = []
        if !httpdnsIPs.isEmpty {
            let source = Self.ipSource(of: httpdns)
            targets = (options.allIPs ? httpdnsIPs : [httpdnsIPs[0]]).map { ($0, source) }
            // When the two disagree, the system IP too, so a user sees whether the address
            // or the technique is at fault.
            if resolution.agreement == .disjoint || resolution.agreement == .overlap,
                let other = systemIPs.first(where: { ip in !targets.contains { $0.ip == ip } })
            {
                targets.append((other, .system))
            }
        } else if let first = systemIPs.first {
            targets = [(first, .system)]
        }
        let noAddress = AttemptFailure.noAddress(host: url.host, httpdns: httpdns.error, system: system.error)

        var plans: [Plan] = []
        for scenario in Scenario.allCases where options.scenarios.contains(scenario) {
            switch scenario {
            case .systemDNS:
                let server: DNSServer? = if case .dns(let server) = system.resolver { server } else { nil }
                if let first = systemIPs.first {
                    plans.append(
                        Plan(scenario: scenario, ip: first, source: .system, pins: systemIPs, dnsServer: server))
                } else {
                    plans.append(
                        Plan(
                            scenario: scenario, dnsServer: server,
                            settled: Settlement(
                                outcome: .dnsFailed, reason: .noSystemAddress(host: url.host, system.error))))
                }
                continue
            case .directHTTP where url.isHTTPS, .directHTTPS where !url.isHTTPS, .directSNI where !url.isHTTPS:
                plans.append(
                    Plan(scenario: scenario, settled: Settlement(outcome: .skipped, reason: .notApplicable(scenario))))
                continue
            default:
                break
            }
            if targets.isEmpty {
                plans.append(Plan(scenario: scenario, settled: Settlement(outcome: .dnsFailed, reason: noAddress)))
            }
            for target in targets {
                plans.append(Plan(scenario: scenario, ip: target.ip, source: target.source))
            }
        }
        return plans
    }

    /// Where an HTTPDNS-side answer's addresses came from; with `--provider system` (no
    /// HTTPDNS at all) they are system DNS's, fresh or cached.
    static func ipSource(of answer: HTTPDNSAnswer) -> IPSource {
        answer.provider == .system ? .system : ipSource(answer.source)
    }

    static func ipSource(_ source: AnswerSource) -> IPSource {
        switch source {
        case .httpdns: .httpdns
        case .cache, .stale, .persisted: .cache
        case .systemFallback, .system: .system
        }
    }

    // MARK: Running

    /// Makes one planned attempt, following redirects hop by hop.
    ///
    /// - Returns: the attempt, and notes for the verdict (a redirect to a link-local address).
    private func run(_ plan: Plan, url: ProbeURL, memo: ResolutionMemo) async -> (Attempt, [String]) {
        guard let firstIP = plan.ip, plan.settled == nil else { return (settledAttempt(plan, url: url), []) }
        var walk = AttemptWalk(
            chain: RedirectChain(start: url, options: options), ip: firstIP, pins: plan.pins,
            resolver: plan.source ?? .system)
        // Ends when a hop is no redirect to follow: the chain stops at its limit.
        walking: while true {
            let request = walk.chain.request
            if options.reproduceCommands {
                walk.exchanges.append(
                    reproduction(
                        plan.scenario, url: request.url, ip: walk.ip, pins: walk.pins, method: request.method,
                        body: request.body, dnsServer: plan.dnsServer))
            }
            // The Location followed is the one received, not the hop's cleaned and redacted copy.
            let (hop, location) = await exchange(
                plan.scenario, url: request.url, ip: walk.ip, pins: walk.pins, resolver: walk.resolver,
                method: request.method, body: request.body, headers: request.headers, notes: walk.notes)
            switch after(hop, location: location, from: request, walk: &walk) {
            case .finished:
                break walking
            case .again:
                continue
            case .resolve(let next):
                // A new host is resolved again, with the technique of this attempt.
                let found = await address(of: next, scenario: plan.scenario, memo: memo)
                if !arrive(at: next, found, walk: &walk) { break walking }
            }
        }
        return (attempt(plan, url: url, hops: walk.hops, exchanges: walk.exchanges), walk.verdictNotes)
    }

    /// Where an attempt stands between its exchanges: what `run` carries across its awaits.
    private struct AttemptWalk {
        var chain: RedirectChain
        var exchanges: [ReproduceCommand.Exchange] = []
        var hops: [Hop] = []
        var ip: IPAddress
        var pins: [IPAddress]
        var resolver: IPSource
        var notes: [String] = []
        var verdictNotes: [String] = []

        init(chain: RedirectChain, ip: IPAddress, pins: [IPAddress], resolver: IPSource) {
            self.chain = chain
            self.ip = ip
            self.pins = pins
            self.resolver = resolver
        }
    }

    /// What an attempt does after a hop.
    private enum AfterHop {
        /// The attempt ends with its hops as they are.
        case finished
        /// The next request goes to the same host, at the same address.
        case again
        /// The next request goes to another host, resolved first.
        case resolve(RedirectChain.Request)
    }

    // What `run` does between its awaits. Not async, and not inlined (nor `arrive`, `attempt`,
    // `settledAttempt`, `reproduction`), so what they build lives on the thread's stack for the
    // moment they run, not in the async frame every attempt under way holds (issue 34: /probe's
    // peak memory).

    /// Records `hop`, made for `request`, and says what follows it.
    @inline(never)
    private func after(
        _ hop: Hop, location: String?, from request: RedirectChain.Request, walk: inout AttemptWalk
    ) -> AfterHop {
        walk.hops.append(hop)
        let next: RedirectChain.Request
        switch walk.chain.next(status: hop.outcome.reachedServer ? hop.status : nil, location: location) {
        case .done:
            return .finished
        case .stop(let outcome, let error):
            walk.hops[walk.hops.count - 1].outcome = outcome ?? hop.outcome
            walk.hops[walk.hops.count - 1].error = error
            return .finished
        case .follow(let request, let followNotes):
            next = request
            walk.notes = followNotes
        }
        guard next.url.host != request.url.host else { return .again }
        // A name the policy refuses is not even resolved.
        if let error = walk.chain.refusal(of: next.url, by: destinations) {
            walk.hops[walk.hops.count - 1].outcome = .redirectRefused
            walk.hops[walk.hops.count - 1].error = error
            return .finished
        }
        return .resolve(next)
    }

    /// Takes the address `next`'s host resolved to; false when the attempt ends instead (no
    /// address, or one the policy refuses).
    @inline(never)
    private func arrive(
        at next: RedirectChain.Request, _ found: RedirectResolution, walk: inout AttemptWalk
    ) -> Bool {
        switch found {
        case .none(let failed):
            walk.hops.append(failed)
            return false
        case .found(let found):
            // Judged by the addresses the hop would connect to, whatever Location named.
            switch walk.chain.judge(
                connectingTo: found.pins.isEmpty ? [found.ip] : found.pins, for: next.url, by: destinations)
            {
            case .connect:
                break
            case .connectNoting(let note):
                walk.notes.append("ipdirect: " + note)
                walk.verdictNotes.append(note)
            case .refuse(let error):
                walk.hops[walk.hops.count - 1].outcome = .redirectRefused
                walk.hops[walk.hops.count - 1].error = error
                return false
            }
            (walk.ip, walk.pins, walk.resolver) = (found.ip, found.pins, found.source)
            return true
        }
    }

    /// An attempt made without an exchange (skipped, or no address): its plan's settlement.
    @inline(never)
    private func settledAttempt(_ plan: Plan, url: ProbeURL) -> Attempt {
        let settled =
            plan.settled
            ?? Settlement(outcome: .dnsFailed, reason: .noAddress(host: url.host, httpdns: nil, system: nil))
        // A system-dns attempt that found no address is repeated by asking system DNS again.
        let reproduce =
            options.reproduceCommands && plan.scenario == .systemDNS && settled.outcome == .dnsFailed
            ? ReproduceCommand.command(
                for: reproduction(
                    .systemDNS, url: url, ip: nil, method: options.method, body: options.body,
                    dnsServer: plan.dnsServer))
            : nil
        return Attempt(
            id: plan.id, url: shown(url), scenario: plan.scenario, ip: plan.ip, ipSource: plan.source,
            outcome: settled.outcome, error: settled.reason, reproduce: reproduce)
    }

    /// Where a redirect to a new host connects, asked the way the attempt's scenario asks.
    private struct RedirectAddress: Sendable {
        var ip: IPAddress
        /// For system-dns: every address system DNS gave (pinned together); empty otherwise.
        var pins: [IPAddress]
        var source: IPSource
    }

    /// A redirect's new host resolved: an address, or the hop that says none came.
    private enum RedirectResolution: Sendable {
        case found(RedirectAddress)
        case none(Hop)
    }

    /// The address a redirect's new host resolves to with `scenario`'s technique (system DNS for
    /// system-dns, HTTPDNS for the others), or the hop that says none came.
    private func address(
        of next: RedirectChain.Request, scenario: Scenario, memo: ResolutionMemo
    ) async -> RedirectResolution {
        let host = next.url.host
        let answer = await memo.resolution(of: host) { _ in await self.resolution(of: next.url) }
        if scenario == .systemDNS {
            let pins = answer.system.error == nil ? (answer.system.ipv4 + answer.system.ipv6) : []
            if let first = pins.first { return .found(RedirectAddress(ip: first, pins: pins, source: .system)) }
        } else {
            let ips = answer.httpdns.error == nil ? (answer.httpdns.ipv4 + answer.httpdns.ipv6) : []
            if let first = ips.first {
                return .found(RedirectAddress(ip: first, pins: [], source: Self.ipSource(of: answer.httpdns)))
            }
        }
        let resolver: IPSource = scenario == .systemDNS ? .system : .httpdns
        let reason = scenario == .systemDNS ? answer.system.error : answer.httpdns.error
        return .none(
            Hop(
                url: next.url.text, originalURL: next.url.text, method: next.method.rawValue,
                resolver: resolver, outcome: .dnsFailed,
                error: .redirectUnresolved(host: host, resolver: resolver, reason)))
    }

    /// The attempt its hops make: the first hop's address and certificate, the last hop's outcome.
    @inline(never)
    private func attempt(
        _ plan: Plan, url: ProbeURL, hops: [Hop], exchanges: [ReproduceCommand.Exchange]
    ) -> Attempt {
        let last = hops[hops.count - 1]
        let first = hops[0]
        return Attempt(
            id: plan.id, url: shown(url), scenario: plan.scenario, ip: first.remoteIP ?? plan.ip,
            ipSource: plan.source, sni: first.sni,
            checkedName: url.isHTTPS && plan.scenario != .directHTTP ? url.host : nil, outcome: last.outcome,
            status: last.status, httpVersion: last.httpVersion, timings: last.timings,
            certificate: last.certificate ?? first.certificate, error: last.error, hops: hops,
            reproduce: options.reproduceCommands ? ReproduceCommand.command(for: exchanges) : nil,
            shortage: last.shortage)
    }

    /// A URL as traces show it: redacted unless `--no-redact`.
    private func shown(_ url: ProbeURL) -> String { options.shown(url) }

    /// A server's header as it is kept: name and value cleaned where they enter.
    static func cleaned(_ field: HeaderField) -> HeaderField {
        HeaderField(name: TerminalText.escaped(field.name), value: TerminalText.escaped(field.value))
    }

    /// What `exchange` asks libcurl for, as `ReproduceCommand` needs it.
    @inline(never)
    private func reproduction(
        _ scenario: Scenario, url: ProbeURL, ip: IPAddress?, pins: [IPAddress] = [], method: RequestMethod,
        body: [UInt8]? = nil, dnsServer: DNSServer? = nil
    ) -> ReproduceCommand.Exchange {
        ReproduceCommand.Exchange(
            scenario: scenario, url: url, ip: ip, pins: pins, method: method, headers: options.headers,
            body: body,
            bodyFile: body != nil && body == options.body ? options.bodyFile : nil, caFile: options.caFile,
            timeout: options.timeout, dnsServer: dnsServer, secretNames: options.secretNames)
    }

    /// One HTTP exchange with the technique of `scenario` (adapted to the hop's scheme).
    ///
    /// - Returns: the hop as traces keep it (redacted unless `--no-redact`), and the `Location`
    ///   the server sent, unredacted, for the redirect to follow.
    private func exchange(
        _ scenario: Scenario, url: ProbeURL, ip: IPAddress, pins: [IPAddress], resolver: IPSource,
        method: RequestMethod,
        body: [UInt8]?, headers extra: [HeaderField], notes: [String]
    ) async -> (Hop, location: String?) {
        let ipInURL = scenario == .directHTTP || scenario == .directHTTPS
        let requestURL: String
        do {
            requestURL = ipInURL ? try url.replacingHost(with: ip) : url.text
        } catch {
            // Not made at all: the host name in its place would have gone through system DNS.
            let hop = Hop(
                url: url.text, originalURL: url.text, method: method.rawValue, resolver: resolver,
                outcome: .connectFailed, error: .notRewritable(error))
            return (hop, nil)
        }
        var headers = extra.filter { $0.name.lowercased() != "host" }
        if ipInURL { headers.insert(HeaderField(name: "Host", value: url.hostHeader), at: 0) }
        let resolvePins: [String]
        switch scenario {
        case .systemDNS: resolvePins = url.hostIsIPLiteral ? [] : [url.resolvePin(toAll: pins.isEmpty ? [ip] : pins)]
        case .directSNI: resolvePins = url.hostIsIPLiteral ? [] : [url.resolvePin(to: ip)]
        default: resolvePins = []
        }
        let checkedName = url.isHTTPS ? url.host : nil
        let spec = TransferSpec(
            url: requestURL, method: method.rawValue, headers: headers, body: body, timeout: options.timeout,
            caFile: options.caFileAddsToSystem ? options.caFile.map { CABundle.path(adding: $0) } : options.caFile,
            resolve: resolvePins, checkName: checkedName, verifyHost: !ipInURL, trace: options.curlLog)
        let record = await nextLoop.perform(spec)
        return hop(
            record, scenario: scenario, url: url, ip: ip, requestURL: requestURL, ipInURL: ipInURL, resolver: resolver,
            method: method, headers: headers, checkedName: checkedName, notes: notes)
    }

    /// The hop a finished transfer makes, and the Location it names. Not async, so what it builds
    /// lives on the thread's stack for the moment it runs, not in the probe's async frames.
    @inline(never)
    private func hop(
        _ record: TransferRecord, scenario: Scenario, url: ProbeURL, ip: IPAddress, requestURL: String, ipInURL: Bool,
        resolver: IPSource, method: RequestMethod, headers: [HeaderField], checkedName: String?, notes: [String]
    ) -> (Hop, location: String?) {
        // SNI as OpenSSL had it when the handshake reached the certificate; before that,
        // what libcurl sends by rule (none for an IP literal).
        let expectedSNI = url.isHTTPS && !ipInURL && !url.hostIsIPLiteral ? url.host : nil
        let sni = record.tls.map { $0.sni } ?? expectedSNI
        let port = url.port
        let target = ip.hostPort(port)
        let shortage = OutcomeReading.shortage(record)
        let (outcome, error) =
            shortage.map { (Outcome.skipped, AttemptFailure.resourceShortage($0, target: target)) }
            ?? OutcomeReading.read(
                record, target: target, checkedName: checkedName, sni: sni, timeout: options.timeout,
                usesTLS: url.isHTTPS)
        let reached = outcome.reachedServer
        let log = record.log.lines
        var hop = Hop(
            url: requestURL, originalURL: url.text, method: method.rawValue,
            requestHeaders: record.requestLine == nil ? headers : record.requestHeaders,
            requestBodyBytes: record.requestBodyBytes, remoteIP: record.remoteIP.flatMap(IPAddress.init),
            remotePort: record.remotePort,
            resolver: resolver, sni: sni, checkedName: checkedName, outcome: outcome,
            status: reached ? record.status : nil, httpVersion: reached ? record.httpVersion : nil,
            responseHeaders: record.responseHeaders.map(Self.cleaned), responseBytes: record.responseBytes,
            bodyPreview: String(decoding: record.body.prefix(4096), as: UTF8.self),
            timings: Self.timings(record, ipInURL: ipInURL || url.hostIsIPLiteral, usesTLS: url.isHTTPS),
            certificate: record.tls.map(CertificateReading.report), tlsVersion: record.tlsVersion,
            error: error,
            // curl's log holds the server's status line and headers: cleaned as the headers are.
            log: notes.map { CurlLogLine(atMs: 0, kind: .info, text: $0) }
                + log.map { CurlLogLine(atMs: $0.atMs, kind: $0.kind, text: TerminalText.escaped($0.text)) },
            startedAt: record.startedAt, shortage: shortage)
        // The redirect follows the Location as the server sent it; the hop keeps it cleaned for
        // the screen (and redacted), which would be another URL wherever the two differ.
        let location = record.responseHeaders.first { $0.name.lowercased() == "location" }?.value
        if options.redact {
            let names = options.secretNames
            hop = Redaction.hop(
                hop, secrets: Redaction.secrets(headers: options.headers, url: url, names: names), names: names)
        }
        return (hop, location)
    }

    /// curl's cumulative timings in milliseconds; nil for phases that did not happen.
    static func timings(_ record: TransferRecord, ipInURL: Bool, usesTLS: Bool) -> PhaseTimings {
        func ms(_ us: Int64) -> Double? { us > 0 ? Double(us) / 1000 : nil }
        // libcurl 7.88 stamps the connect time only once TLS is done too; when the handshake
        // fails, the moment it began, the connection made, is the best measure there is.
        let connected = ms(record.connectUs) ?? ms(record.tlsStartUs)
        return PhaseTimings(
            nameLookup: ipInURL ? nil : ms(record.nameLookupUs), connect: connected,
            tlsDone: usesTLS ? ms(record.appConnectUs) : nil, preTransfer: ms(record.preTransferUs),
            firstByte: ms(record.startTransferUs), total: Double(record.totalUs) / 1000)
    }
}

extension ProbeURL {
    /// A `CURLOPT_RESOLVE` entry pinning the host to several addresses (libcurl tries them in order).
    func resolvePin(toAll ips: [IPAddress]) -> String {
        "\(host):\(port):" + ips.map(\.authorityForm).joined(separator: ",")
    }
}

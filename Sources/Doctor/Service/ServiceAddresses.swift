// Which addresses the configured provider's HTTPDNS service is reached at: Alibaba's start IPs
// (or endpoint) and the service IPs their `/ss` names; Tencent's and DoH's endpoint's addresses.

import CurlTransport
import FoundationEssentials
import NameResolution

/// One address of the service and the URLs it is tried at.
struct ServiceAddress: Sendable, Equatable {
    /// Why the provider would use it.
    enum Role: String, Sendable {
        case endpoint = "the configured endpoint"
        case start = "a start IP"
        case serviceList = "named by /ss"
        case endpointAddress = "an address of the endpoint's name"
    }

    /// The address as a person reads it (`127.0.0.2`, `2401:b180:7001::31d`).
    var label: String
    var role: Role
    /// One URL per scheme it is tried over: HTTP, then HTTPS.
    var tries: [Try]
    /// The base URL the provider itself would send its queries to at this address.
    var own: Try

    /// One URL and how its certificate is checked.
    struct Try: Sendable, Equatable {
        var url: String
        /// The name the certificate must carry; nil: the URL's own host.
        var checkName: String?
        /// `host:port:address`, when the URL names the host and the request must go to this address.
        var resolve: [String] = []
    }
}

/// What looking for the service's addresses found, and how.
struct ServiceAddressList: Sendable {
    var addresses: [ServiceAddress]
    /// The `/ss` exchanges (Alibaba) or nothing.
    var exchanges: [ServiceExchange]
    /// Lines for the trace: what was asked, what it gave.
    var notes: [DoctorTraceLine]
    /// The path a service address is asked for (the `/ss` request, or the endpoint's own path).
    var path: String
}

enum ServiceAddresses {
    /// The addresses the configured provider would use; nil (with why) for a provider that has
    /// no HTTPDNS service (`system`) or a configuration that names none.
    static func find(_ context: DoctorContext) async -> Result<ServiceAddressList, DoctorSkip> {
        // The provider's row says how its addresses are found: no kind falls through to a guess.
        switch ProviderRegistry.entry(context.resolver.provider).doctor.addresses {
        case .none(let why): return .failure(DoctorSkip(why))
        case .serviceDiscovery: return await alibaba(context)
        case .endpoint: return await endpointAddresses(context)
        }
    }

    /// The start addresses (or the endpoint) and every service IP the first `/ss` answer names.
    private static func alibaba(_ context: DoctorContext) async -> Result<ServiceAddressList, DoctorSkip> {
        let configuration = context.resolver
        let starts: (addresses: [AliCloudServiceRequests.Address], fixed: Bool)
        do {
            starts = try AliCloudServiceRequests.starts(configuration)
        } catch {
            return .failure(DoctorSkip("The service's addresses cannot be worked out: \(error)."))
        }
        let path = AliCloudServiceRequests.serviceListTarget(configuration)
        // Every start at once: a silent one must not hold the others up.
        let exchanges = await withTaskGroup(of: (Int, ServiceExchange).self) { group in
            for (index, start) in starts.addresses.enumerated() {
                group.addTask {
                    (index, await ServiceExchange.send(start.url + path, checkName: start.checkName, context: context))
                }
            }
            var all: [(Int, ServiceExchange)] = []
            for await result in group { all.append(result) }
            return all.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var notes: [DoctorTraceLine] = []
        var listed: [AliCloudServiceRequests.Address] = []
        for (start, exchange) in zip(starts.addresses, exchanges) where listed.isEmpty {
            guard exchange.block == nil, (200..<300).contains(exchange.record.status) else { continue }
            do {
                listed = try AliCloudServiceRequests.serviceList(
                    exchange.record.body, from: start, serviceName: configuration.serviceName)
                notes.append(
                    DoctorTraceLine(
                        .note, "/ss at \(start.label) names \(listed.map(\.label).joined(separator: ", "))"))
            } catch {
                notes.append(DoctorTraceLine(.note, "/ss at \(start.label) gave no usable list: \(error)"))
            }
        }
        if listed.isEmpty { notes.append(DoctorTraceLine(.note, "no start address gave a service list")) }
        let role: ServiceAddress.Role = starts.fixed ? .endpoint : .start
        var addresses: [ServiceAddress] = []
        for (address, role) in starts.addresses.map({ ($0, role) }) + listed.map({ ($0, .serviceList) })
        where !addresses.contains(where: { $0.label == address.label }) {
            addresses.append(
                ServiceAddress(
                    label: address.label, role: role,
                    tries: tries(address, serviceName: configuration.serviceName, context: context),
                    own: .init(url: address.url, checkName: address.checkName)))
        }
        return .success(ServiceAddressList(addresses: addresses, exchanges: exchanges, notes: notes, path: path))
    }

    /// An Alibaba address over HTTP and over HTTPS: the lab's ports where it runs, else the
    /// address's own port for its scheme and 80 or 443 for the other.
    private static func tries(
        _ address: AliCloudServiceRequests.Address, serviceName: String, context: DoctorContext
    ) -> [ServiceAddress.Try] {
        let components = URLComponents(string: address.url)
        let scheme = components?.scheme ?? "https"
        let host = IPAddress(address.label)?.authorityForm ?? address.label
        func port(_ wanted: String) -> Int {
            if let lab = context.lab?.servicePorts { return wanted == "http" ? lab.http : lab.https }
            return wanted == scheme ? components?.port ?? (wanted == "http" ? 80 : 443) : (wanted == "http" ? 80 : 443)
        }
        // Over HTTPS the certificate is checked as the provider checks this address's.
        let checkName = scheme == "https" ? address.checkName : (IPAddress(address.label) == nil ? nil : serviceName)
        return [
            ServiceAddress.Try(url: "http://\(host):\(port("http"))", checkName: nil),
            ServiceAddress.Try(url: "https://\(host):\(port("https"))", checkName: checkName),
        ]
    }

    /// Tencent's and DoH's endpoint: its address, or every address its name resolves to, on
    /// the endpoint's own scheme and port.
    private static func endpointAddresses(_ context: DoctorContext) async -> Result<ServiceAddressList, DoctorSkip> {
        guard let endpoint = context.resolver.effectiveEndpoint, let components = URLComponents(string: endpoint),
            let host = components.host, let scheme = components.scheme
        else {
            return .failure(DoctorSkip("No endpoint is configured for \(context.resolver.provider.rawValue)."))
        }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let ip = IPAddress(host) {
            let url = ServiceAddress.Try(url: "\(scheme)://\(ip.hostPort(port))\(path)")
            let only = ServiceAddress(label: ip.text, role: .endpoint, tries: [url], own: url)
            return .success(ServiceAddressList(addresses: [only], exchanges: [], notes: [], path: path))
        }
        // The system resolver, as the SDKs resolve an endpoint's name (with the lab, its DNS server).
        let answer = await context.systemResolve(host, families: [.v4, .v6])
        let found = answer.ipv4 + answer.ipv6
        guard !found.isEmpty else {
            let why = answer.error.map { "\($0)" } ?? "no address"
            return .failure(
                DoctorSkip(
                    "The endpoint's name \(host) did not resolve (\(why)), so the service cannot be reached.",
                    unreachable: "Fix name resolution on this network (the DNS paths check says which path is "
                        + "closed), or point \(Setting.endpoint.named(context.voice)) at the service by address."))
        }
        let addresses = found.map { ip in
            let pinned = ServiceAddress.Try(url: endpoint, resolve: ["\(host):\(port):\(ip.text)"])
            return ServiceAddress(label: ip.text, role: .endpointAddress, tries: [pinned], own: pinned)
        }
        let note = DoctorTraceLine(.note, "\(host) resolves to \(found.map(\.text).joined(separator: ", "))")
        return .success(ServiceAddressList(addresses: addresses, exchanges: [], notes: [note], path: path))
    }

    /// The addresses a check's queries go to, in the order the provider tries them: the
    /// endpoint when one is set, else the service addresses `/ss` named, then the start addresses.
    static func queryOrder(_ list: ServiceAddressList) -> [ServiceAddress] {
        let roles: [ServiceAddress.Role] = [.endpoint, .serviceList, .endpointAddress, .start]
        return roles.flatMap { role in list.addresses.filter { $0.role == role } }
    }

    /// The addresses a check asks, in the provider's order; a skip when there are none.
    static func toAsk(_ context: DoctorContext) async -> Result<[ServiceAddress], DoctorSkip> {
        switch await find(context) {
        case .failure(let skip): return .failure(skip)
        case .success(let list):
            let ordered = queryOrder(list)
            return ordered.isEmpty ? .failure(DoctorSkip("The service has no address to ask.")) : .success(ordered)
        }
    }

    /// Asks every address at once and keeps the first, in the provider's order, that answered:
    /// as the SDKs rotate past an address that does not answer, so does a check. The one way the
    /// service checks (clock, account, client address) choose the address they read.
    ///
    /// - Parameters:
    ///   - ask: what the check asks one address (a request, or the canary pinned to it); each
    ///     ask bounds its own wait by the step timeout, so the slowest address costs one step.
    ///   - missed: how an answer shows its address did not answer; nil when it answered.
    static func firstAnswering<Answer: Sendable>(
        _ ordered: [ServiceAddress], ask: @escaping @Sendable (ServiceAddress) async -> Answer,
        missed: (Answer) -> Rotation<Answer>.Missed?
    ) async -> Rotation<Answer> {
        let answers = await withTaskGroup(of: (Int, Answer).self) { group in
            for (index, address) in ordered.enumerated() {
                group.addTask { (index, await ask(address)) }
            }
            var all: [(Int, Answer)] = []
            for await result in group { all.append(result) }
            return all.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let chosen = answers.firstIndex { missed($0) == nil }
        let passed = ordered.indices.prefix(upTo: chosen ?? ordered.count).compactMap { index in
            missed(answers[index]).map { (label: ordered[index].label, missed: $0) }
        }
        return Rotation(address: chosen.map { ordered[$0] }, answer: chosen.map { answers[$0] }, passedOver: passed)
    }

    /// A check's query sent to every address at once, keeping the first that answered
    /// (`firstAnswering` with one request per address).
    ///
    /// - Parameter query: the URL to send at an address's base (its signature made per address).
    /// - Returns: the answer and the addresses passed over; a skip when none can be asked.
    static func rotate(
        _ context: DoctorContext, query: @Sendable (ServiceAddress.Try) throws -> String
    ) async -> Result<Rotation<ServiceExchange>, DoctorSkip> {
        let ordered: [ServiceAddress]
        switch await toAsk(context) {
        case .failure(let skip): return .failure(skip)
        case .success(let found): ordered = found
        }
        var urls: [String: String] = [:]
        do {
            for address in ordered { urls[address.label] = try query(address.own) }
        } catch {
            return .failure(DoctorSkip("No query can be built: \(error)."))
        }
        let built = urls
        return .success(
            await firstAnswering(
                ordered,
                ask: { address in
                    await ServiceExchange.send(
                        built[address.label] ?? address.own.url, checkName: address.own.checkName,
                        resolve: address.own.resolve, context: context)
                },
                missed: { exchange in
                    exchange.block.map {
                        .init(sentence: $0.sentence, trace: exchange.trace, reproduce: [exchange.reproduce])
                    }
                }))
    }
}

/// What asking the service addresses in turn came to: the first that answered and those before it.
struct Rotation<Answer: Sendable>: Sendable {
    /// How one address failed to answer: the clause naming it, what was sent and seen, the command
    /// that repeats it.
    struct Missed: Sendable {
        var sentence: String
        var trace: [DoctorTraceLine]
        var reproduce: [String]
    }

    /// The address that answered, nil when none did.
    var address: ServiceAddress?
    var answer: Answer?
    /// The addresses tried before it, in order, each with how it failed.
    var passedOver: [(label: String, missed: Missed)]

    /// "127.0.0.2 timed out (2 s)", one clause per address passed over.
    var passedOverClauses: [String] {
        passedOver.map { "\($0.label) \($0.missed.sentence)" }
    }

    /// The sentence added to a finding when addresses were passed over: which answered, which did not.
    var note: String {
        guard let address, !passedOver.isEmpty else { return "" }
        let them = passedOver.count == 1 ? "it" : "them"
        return " Asked at \(address.label), the first service address that answered: "
            + passedOverClauses.joined(separator: "; ") + " (the SDKs rotate past \(them) too)."
    }

    /// The check's skipped finding when no address answered: each one and how it failed.
    func noneAnswered(_ check: DoctorCheckID, so consequence: String) -> DoctorFinding {
        DoctorFinding(
            check: check, status: .skipped,
            seen: "No service address answered (\(passedOverClauses.joined(separator: "; "))), so \(consequence).",
            advice: "The service reachability check says why the service cannot be reached.",
            trace: passedOver.flatMap(\.missed.trace), reproduce: passedOver.flatMap(\.missed.reproduce))
    }
}

extension Rotation where Answer == ServiceExchange {
    /// The exchange with the address that answered.
    var exchange: ServiceExchange? { answer }
}

/// Why a check could not look, as its `skipped` sentence.
struct DoctorSkip: Error, Sendable {
    var reason: String
    /// What to do when the reason is itself the service being out of reach (its name does not
    /// resolve): the reachability check fails with it, where the others skip.
    var unreachable: String?

    init(_ reason: String, unreachable: String? = nil) {
        self.reason = reason
        self.unreachable = unreachable
    }
}

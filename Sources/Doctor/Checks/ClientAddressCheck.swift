// The doctor's client address check: the address the HTTPDNS service says it saw (`cip`,
// `client_ip`) against this machine's own, and whether `ip=` with either changes a `--host` answer.

import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe

/// Asks the service for the canary, reads the client address it reports, and for each `--host`
/// compares the answers for that address and for this machine's own.
struct ClientAddressCheck: DoctorCheck {
    let id = DoctorCheckID.clientAddress

    func run(_ context: DoctorContext) async -> DoctorFinding {
        // The provider's row says whether its answers carry the client address.
        if let why = ProviderRegistry.entry(context.resolver.provider).doctor.clientAddressAbsent {
            return DoctorFinding(check: id, status: .skipped, seen: why)
        }
        // Alibaba's service addresses all at once, the canary pinned to each: the first that
        // answered, in the provider's order, is read, as the clock and account checks read theirs.
        guard ProviderRegistry.entry(context.resolver.provider).doctor.addresses == .serviceDiscovery,
            case .success(let ordered) = await ServiceAddresses.toAsk(context)
        else {
            return await read(context, canary: Canary.resolve(context), at: nil)
        }
        let name = context.canaryName
        let rotation = await ServiceAddresses.firstAnswering(
            ordered, ask: { await Canary.resolve(context, at: $0) },
            missed: { canary in
                guard case .failure(let error) = canary.result, error.isServiceAddressFailure else { return nil }
                return .init(sentence: "did not answer \(name) (\(error))", trace: canary.trace, reproduce: [])
            })
        guard let canary = rotation.answer else {
            return rotation.noneAnswered(id, so: "it reported no client address")
        }
        var finding = await read(context, canary: canary, at: rotation.address)
        finding.seen += rotation.note
        return finding
    }

    /// The finding from the canary's answer; `address` is the service address it was pinned to,
    /// which the `ip=` comparisons ask too.
    private func read(_ context: DoctorContext, canary: Canary, at address: ServiceAddress?) async -> DoctorFinding {
        let name = context.canaryName
        var trace: [DoctorTraceLine] = []
        // The commands read the secret from the environment, as ipdirect always does.
        let reproduce =
            (context.resolver.secret == nil ? [] : [Self.secretComment])
            + [Self.resolveCommand(name, context.resolver, clientIP: nil)]
        trace += canary.trace
        let answer: ProviderAnswer
        switch canary.result {
        case .success(let answered):
            answer = answered
        case .failure(let error):
            return DoctorFinding(
                check: id, status: .skipped,
                seen:
                    "The service did not answer \(name) (\(error)), so it reported no client address; the reachability, clock and account checks say why.",
                trace: trace, reproduce: reproduce)
        }
        trace.append(
            DoctorTraceLine(
                .seen,
                "client address \(answer.clientIP?.text ?? "(none)")"
                    + (answer.server.map { ", answered by \($0)" } ?? "")))
        let own = MachineAddresses.current()
        trace.append(DoctorTraceLine(.note, "this machine's addresses: \(own.joined(separator: ", "))"))
        guard let reported = answer.clientIP else {
            return DoctorFinding(
                check: id, status: .warn,
                seen: "The service answered \(name) without saying which client address it saw.",
                advice:
                    "Without it the answer's choice cannot be explained: check the provider's endpoint is the service itself, not something answering in its place.",
                trace: trace, reproduce: reproduce)
        }
        let local = Self.localAddress(own, like: reported)
        var finding = Self.reading(
            reported: reported, own: own, local: local, service: Self.serviceAddress(answer, context))
        finding.check = id
        finding.trace = trace
        finding.reproduce = reproduce

        // ip=/cip: the answer for the address the service sees against the one an app would send.
        guard let local, local != reported, !context.hosts.isEmpty else {
            if !context.hosts.isEmpty {
                finding.trace.append(
                    DoctorTraceLine(
                        .note,
                        "ip= not compared: this machine has no address of its own other than the one the service sees"))
            }
            return finding
        }
        let comparisons = await Self.compare(
            context.hosts, reported: reported, local: local, context: context, at: address)
        finding.trace += comparisons.flatMap(\.trace)
        for host in context.hosts {
            finding.reproduce += [reported, local].map { Self.resolveCommand(host, context.resolver, clientIP: $0) }
        }
        let changed = comparisons.filter(\.differs)
        if changed.isEmpty {
            finding.seen +=
                " ip= would not change the answer for \(context.hosts.joined(separator: ", ")) (asked for \(reported) and for \(local))."
        } else {
            finding.status = max(finding.status, .warn)
            finding.seen +=
                " ip= changes the answer: "
                + changed.map { "\($0.host) for \(reported) \($0.forReported), for \(local) \($0.forLocal)" }
                .joined(separator: "; ") + "."
            finding.advice =
                finding.advice
                ?? "An app that sends its own address \(local) with ip= gets answers chosen for it, not for where the service sees it: send no ip= unless that address is the one the internet sees."
        }
        return finding
    }

    /// The address an app would send as its own with `ip=`: one of this machine's, of the
    /// reported address's family if it has one, neither loopback nor link-local.
    static func localAddress(_ own: [IPAddress], like reported: IPAddress) -> IPAddress? {
        let usable = own.filter { ![.loopback, .linkLocal].contains(AddressScope($0)) }
        return usable.first { $0.family == reported.family } ?? usable.first
    }

    /// The service's address, when known: the one that answered, else the endpoint's host.
    static func serviceAddress(_ answer: ProviderAnswer, _ context: DoctorContext) -> IPAddress? {
        if let server = answer.server, let address = IPAddress(server) { return address }
        guard let endpoint = context.resolver.endpoint, let host = URLComponents(string: endpoint)?.host else {
            return nil
        }
        return IPAddress(host.trimming(charactersIn: "[]"))
    }

    /// The verdict on the reported address alone. NAT and a carrier's egress are how most devices
    /// reach the internet, so a public address that is not this machine's passes; a private or
    /// shared one seen by a service on the internet means a forwarder in between asks for us.
    static func reading(
        reported: IPAddress, own: [IPAddress], local: IPAddress?, service: IPAddress?
    )
        -> DoctorFinding
    {
        if own.contains(reported) {
            return DoctorFinding(
                check: .clientAddress, status: .pass,
                seen: "The service sees this machine's own address \(reported): no NAT between here and the service.")
        }
        let mine = local.map { "this machine's \($0)" } ?? "any of this machine's addresses"
        let scope = AddressScope(reported)
        let serviceIsPublic = service.map { AddressScope($0).isPublic } ?? true
        if scope.isPublic || !serviceIsPublic {
            return DoctorFinding(
                check: .clientAddress, status: .pass,
                seen:
                    "The service sees \(reported), not \(mine): NAT or a carrier's egress, as on most networks, and answers are chosen for \(reported)."
            )
        }
        return DoctorFinding(
            check: .clientAddress, status: .warn,
            seen:
                "The service on the internet sees \(reported), a \(scope.rawValue) address that is not \(mine): something inside the network forwards the queries.",
            advice:
                "Answers are chosen for where that forwarder sits: look for a transparent proxy (the interception check) or a DNS forwarder, or set client_ip to this network's public address."
        )
    }

    /// One `--host` name asked for two client addresses.
    struct Comparison: Sendable {
        var host: String
        var forReported: String
        var forLocal: String
        var trace: [DoctorTraceLine]
        /// Whether the service answered the two client addresses differently.
        var differs: Bool { forReported != forLocal }
    }

    /// Asks for each host with `ip=`/`cip` set to the reported address and to the local one, all at once.
    static func compare(
        _ hosts: [String], reported: IPAddress, local: IPAddress, context: DoctorContext,
        at address: ServiceAddress? = nil
    ) async
        -> [Comparison]
    {
        func ask(_ host: String, for client: IPAddress) async -> String {
            // The canary's bounded resolution, for this name as this client.
            var asked = context
            asked.canaryName = host
            asked.resolver.clientIP = client.text
            switch await Canary.resolve(asked, at: address).result {
            case .success(let answer): return answer.ipv4.sorted().joined(separator: ", ")
            case .failure(let error): return "no answer (\(error))"
            }
        }
        return await withTaskGroup(of: Comparison.self) { group in
            for host in hosts {
                group.addTask {
                    async let forReported = ask(host, for: reported)
                    async let forLocal = ask(host, for: local)
                    let (a, b) = await (forReported, forLocal)
                    return Comparison(
                        host: host, forReported: a, forLocal: b,
                        trace: [
                            DoctorTraceLine(.sent, "A \(host) with ip=\(reported)"), DoctorTraceLine(.seen, a),
                            DoctorTraceLine(.sent, "A \(host) with ip=\(local)"), DoctorTraceLine(.seen, b),
                        ])
                }
            }
            var comparisons: [Comparison] = []
            for await comparison in group { comparisons.append(comparison) }
            return hosts.compactMap { host in comparisons.first { $0.host == host } }
        }
    }

    /// The line on top of commands that sign: where the secret comes from.
    static let secretComment = "# IPDIRECT_HTTPDNS_SECRET: the signing secret (set it first; never written here)"

    /// `ipdirect resolve` asking as the check did; the secret stays in `$IPDIRECT_HTTPDNS_SECRET`.
    static func resolveCommand(_ host: String, _ resolver: ResolverConfiguration, clientIP: IPAddress?) -> String {
        var words = ["ipdirect", "resolve", ReproduceCommand.quoted(host)]
        words += ["--provider", resolver.provider.rawValue]
        if let endpoint = resolver.endpoint { words += ["--endpoint", ReproduceCommand.quoted(endpoint)] }
        if let account = resolver.account { words += ["--account", ReproduceCommand.quoted(account)] }
        if let caFile = resolver.caFile { words += ["--httpdns-ca", ReproduceCommand.quoted(caFile)] }
        if let clientIP { words += ["--client-ip", clientIP.text] }
        return words.joined(separator: " ")
    }
}

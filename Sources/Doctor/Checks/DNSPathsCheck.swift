// The doctor's DNS paths check: UDP and TCP 53 to the system resolver and to `--dns-server`, DoH
// where it is the provider, and whether they answer the canary alike (a filtered UDP 53, a hijack).

import CurlTransport
import FoundationEssentials
import NameResolution
import Probe

/// Asks each DNS path for the canary name at once and sets the answers side by side.
struct DNSPathsCheck: DoctorCheck {
    let id = DoctorCheckID.dnsPaths

    /// A DNS server the check asks over both transports, as the finding names it.
    struct Server {
        var name: String
        var server: DNSServer
    }

    func run(_ context: DoctorContext) async -> DoctorFinding {
        var trace: [DoctorTraceLine] = []
        let servers = Self.servers(context, trace: &trace)
        let doh: (any HTTPDNSProvider)?
        if [.doh, .dohJSON].contains(context.resolver.provider) {
            do throws(ResolutionError) {
                doh = try ProviderFactory.make(context.resolver)
            } catch {
                doh = nil
                trace.append(DoctorTraceLine(.note, "DoH is the provider but cannot be asked: \(error)"))
            }
        } else {
            doh = nil
        }
        if servers.isEmpty && doh == nil {
            return DoctorFinding(
                check: id, status: .skipped,
                seen:
                    "No DNS server to ask: \(context.resolvConfPath) names none, no \(Setting.dnsServer.named(context.voice)) is set and the provider is not DoH.",
                trace: trace)
        }
        let name = context.canaryName
        let timeout = context.stepTimeout
        // The local answers against HTTPDNS's, for the canary and every --host, beside the paths.
        let compared = Self.comparedNames(context)
        async let comparisons = LocalAnswerComparison.run(compared, servers: servers, context: context)
        // A records only, as the canary is asked of HTTPDNS: answers compared like for like.
        let families: Set<IPFamily> = [.v4]
        // Every path at once: a filtered one costs its timeout once, not once per path.
        async let dohOutcome: DNSPathOutcome? =
            if doh != nil { DNSPathOutcome(await Canary.resolve(context).result) } else { nil }
        let byServer = await withTaskGroup(of: (Int, DNSTransport, DNSPathOutcome).self) { group in
            for (index, entry) in servers.enumerated() {
                for transport in DNSTransport.allCases {
                    group.addTask {
                        let answer = await DNSServerResolver(server: entry.server, transport: transport)
                            .resolve(name, families: families, timeout: timeout)
                        return (index, transport, DNSPathOutcome(answer))
                    }
                }
            }
            var outcomes: [Int: [DNSTransport: DNSPathOutcome]] = [:]
            for await (index, transport, outcome) in group { outcomes[index, default: [:]][transport] = outcome }
            return outcomes
        }

        var reading = DNSPathsReading(voice: context.voice)
        var reproduce: [String] = []
        for (index, entry) in servers.enumerated() {
            let udp = byServer[index]?[.udp] ?? .blocked("not asked")
            let tcp = byServer[index]?[.tcp] ?? .blocked("not asked")
            for (transport, outcome) in [(DNSTransport.udp, udp), (.tcp, tcp)] {
                trace.append(
                    DoctorTraceLine(.sent, "\(transport.rawValue.uppercased()) \(entry.server): A \(name)"))
                trace.append(DoctorTraceLine(.seen, outcome.words))
                reproduce.append(Self.dig(name, at: entry.server, over: transport, timeout: timeout))
            }
            reading.add(entry.name, udp: udp, tcp: tcp, timeout: timeout)
        }
        if let doh, let outcome = await dohOutcome {
            let label = "DoH \(context.resolver.effectiveEndpoint ?? doh.name)"
            trace.append(DoctorTraceLine(.sent, "\(label): A \(name)"))
            trace.append(DoctorTraceLine(.seen, outcome.words))
            reproduce += Self.curl(doh, name: name, caFile: context.resolver.caFile, timeout: timeout)
            reading.add(label, doh: outcome)
        }
        var finding = reading.finding(name: name)
        finding.check = id
        finding.trace = trace
        finding.reproduce = reproduce
        Self.add(await comparisons, to: &finding)
        return finding
    }

    /// The names whose local answer is held against HTTPDNS's: the canary and each --host, once;
    /// none for a provider that asks no HTTPDNS service.
    static func comparedNames(_ context: DoctorContext) -> [String] {
        if case .none = ProviderRegistry.entry(context.resolver.provider).doctor.addresses { return [] }
        return ([context.canaryName] + context.hosts).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    }

    /// A local answer HTTPDNS contradicts fails the check when its address fails where HTTPDNS's
    /// works (a hijack, as the probe reads it), and warns when both work; its sentence leads.
    static func add(_ comparisons: [LocalAnswerComparison], to finding: inout DoctorFinding) {
        for comparison in comparisons {
            finding.trace.append(
                DoctorTraceLine(
                    .note,
                    "\(comparison.name): HTTPDNS said "
                        + (comparison.httpdns.isEmpty
                            ? "nothing" : comparison.httpdns.map(\.text).joined(separator: ", "))
                        + "; "
                        + comparison.local.map {
                            "\($0.resolver) said \($0.addresses.isEmpty ? "nothing" : $0.addresses.map(\.text).joined(separator: ", "))"
                        }.joined(separator: "; ")))
            for attempt in [comparison.localTry, comparison.httpdnsTry].compactMap({ $0 }) {
                finding.trace += attempt.trace
                finding.reproduce.append(attempt.reproduce)
            }
        }
        let differing = comparisons.filter { $0.sentence != nil }
        guard !differing.isEmpty else { return }
        let sentences = differing.compactMap(\.sentence).joined(separator: " ")
        let hijacked = differing.filter(\.hijacked)
        finding.seen = sentences + (finding.status == .pass ? "" : " " + finding.seen)
        if let first = hijacked.first {
            finding.status = .fail
            finding.advice =
                "Resolve \(hijacked.map(\.name).joined(separator: ", ")) through HTTPDNS (IP-direct) rather than the local "
                + "resolver, and ask its operator why it answers otherwise; `ipdirect probe \(first.name)` tries every way."
        } else {
            finding.status = max(finding.status, .warn)
            finding.advice =
                finding.advice
                ?? "Both answers work: nothing to change unless the local one is slower or wrong for your users."
        }
    }

    /// The system resolver (the lab's DNS server in its place with `--lab`) and `--dns-server`
    /// when it is another, with notes on the trace saying which stands for what.
    static func servers(_ context: DoctorContext, trace: inout [DoctorTraceLine]) -> [Server] {
        var servers: [Server] = []
        if let lab = context.lab {
            if let server = try? DNSServer.parse(lab.dnsServer) {
                servers.append(Server(name: "the lab's DNS server \(server)", server: server))
                trace.append(
                    DoctorTraceLine(
                        .note,
                        "with \(Setting.lab.named(context.voice)), the lab's DNS server \(server) stands for the system resolver"
                    ))
            }
        } else {
            do throws(TextFileError) {
                if let first = try ResolvConf.read(context.resolvConfPath).nameservers.first {
                    let server = DNSServer(address: first)
                    servers.append(Server(name: "the system resolver \(server)", server: server))
                    trace.append(
                        DoctorTraceLine(.note, "the system resolver: the first nameserver of \(context.resolvConfPath)")
                    )
                } else {
                    trace.append(DoctorTraceLine(.note, "\(context.resolvConfPath) names no nameserver"))
                }
            } catch {
                trace.append(DoctorTraceLine(.note, "no system resolver to ask: \(error)"))
            }
        }
        if let chosen = context.resolver.dnsServer {
            if servers.contains(where: { $0.server == chosen }) {
                trace.append(
                    DoctorTraceLine(
                        .note, "\(Setting.dnsServer.named(context.voice, value: "\(chosen)")) is that same server"))
            } else {
                servers.append(Server(name: Setting.dnsServer.named(context.voice, value: "\(chosen)"), server: chosen))
            }
        }
        return servers
    }

    /// `dig` asking as the check did: one transport, one try, the same wait.
    static func dig(_ name: String, at server: DNSServer, over transport: DNSTransport, timeout: Duration) -> String {
        var words = ["dig", "@" + server.address.text]
        if server.port != 53 { words += ["-p", String(server.port)] }
        words += [
            transport == .tcp ? "+tcp" : "+notcp", "+tries=1", "+time=\(max(1, Int(timeout.inSeconds.rounded(.up))))",
            ReproduceCommand.quoted(name), "A",
        ]
        return words.joined(separator: " ")
    }

    /// `curl` asking the DoH server for A records as the provider did.
    static func curl(_ provider: any HTTPDNSProvider, name: String, caFile: String?, timeout: Duration) -> [String] {
        var words = ["curl", "-sS", "--max-time", String(max(1, Int(timeout.inSeconds.rounded(.up))))]
        if let caFile { words += ["--cacert", ReproduceCommand.quoted(caFile)] }
        let urls: [(String, String)]
        if let json = provider as? DoHJSONProvider {
            urls = [("application/dns-json", json.url(for: name, family: .v4))]
        } else if let wire = provider as? DoHWireProvider {
            urls = wire.queryURL(for: name, family: .v4).map { [("application/dns-message", $0)] } ?? []
        } else {
            urls = []
        }
        return urls.map { accept, url in
            (words + ["-H", ReproduceCommand.quoted("Accept: \(accept)"), ReproduceCommand.quoted(url)])
                .joined(separator: " ") + (accept == "application/dns-message" ? " | od -An -tx1" : "")
        }
    }
}

/// What one way of asking for a name gave.
enum DNSPathOutcome: Sendable, Equatable {
    /// The addresses, sorted.
    case addresses([IPAddress])
    /// No address: no such name, or none of the families asked (NXDOMAIN, NODATA).
    case noAddress(String)
    /// A reply that said something else (SERVFAIL, REFUSED, junk), in words.
    case failed(String)
    /// No reply at all (timed out, refused), in words: the path is closed.
    case blocked(String)
    /// No query left this machine (a local firewall, no route), in words: closed here, at once.
    case stoppedHere(String, reason: String)

    /// What a DNS server's lookup came to.
    init(_ answer: SystemAnswer) {
        switch answer.error {
        case nil:
            self = .addresses((answer.ipv4 + answer.ipv6).sorted())
        case .dnsServer(_, .noSuchName)?:
            self = .noAddress("no such name (NXDOMAIN)")
        case .dnsServer(_, .noData)?:
            self = .noAddress("no address (NODATA)")
        case .dnsServer(_, .unanswered)?:
            self = .blocked(answer.error?.sentence ?? "no reply")
        case .dnsServer(_, .stoppedHere(let how, _))?:
            self = .stoppedHere(answer.error?.sentence ?? "never sent", reason: how.reason)
        case let error?:
            self = .failed(error.sentence)
        }
    }

    /// What an HTTPDNS provider (DoH here) answered.
    init(_ result: Result<ProviderAnswer, ResolutionError>) {
        switch result {
        case .success(let answer):
            self = .addresses((answer.ipv4 + answer.ipv6).sorted())
        case .failure(let error):
            switch error {
            case .noSuchName, .noData: self = .noAddress("no address (\(error))")
            case .timeout, .refused, .unreachable, .endpointUnresolvable, .tls, .transport:
                self = .blocked(error.description)
            default: self = .failed(error.description)
            }
        }
    }

    /// The outcome as a trace line and a sentence show it.
    var words: String {
        switch self {
        case .addresses(let addresses): addresses.isEmpty ? "no address" : addresses.joined(separator: ", ")
        case .noAddress(let words), .failed(let words): words
        case .blocked(let words): "no reply: " + words
        case .stoppedHere(let words, _): "not sent: " + words
        }
    }

    /// Whether any reply came.
    var replied: Bool {
        switch self {
        case .blocked, .stoppedHere: false
        default: true
        }
    }

    /// What two resolvers are compared by: the addresses, or "none"; nil for an error reply,
    /// which says nothing about the name.
    var comparable: String? {
        switch self {
        case .addresses(let addresses): addresses.joined(separator: ", ")
        case .noAddress: "none"
        case .failed, .blocked, .stoppedHere: nil
        }
    }
}

/// The check's reading of every path: which are closed, which answered what.
struct DNSPathsReading {
    /// Servers that answered over neither transport, and DoH that did not answer: fail.
    private var closed: [String] = []
    /// Servers whose UDP got no reply while TCP answered: warn.
    private var udpFiltered: [String] = []
    /// Servers whose UDP query never left this machine while TCP answered, with what stopped it: warn.
    private var udpStoppedHere: [(name: String, reason: String)] = []
    /// Servers whose TCP got no reply while UDP answered: said, not held against them.
    private var tcpClosed: [String] = []
    /// Each path that answered something comparable, with its answer.
    private var answers: [(name: String, outcome: DNSPathOutcome)] = []
    private var timeout: Duration = .zero
    /// Whose words the advice names the DNS server setting in.
    let voice: SettingVoice

    init(voice: SettingVoice) { self.voice = voice }

    mutating func add(_ name: String, udp: DNSPathOutcome, tcp: DNSPathOutcome, timeout: Duration) {
        self.timeout = timeout
        switch (udp.replied, tcp.replied) {
        case (false, false):
            if case .stoppedHere(_, let reason) = udp {
                closed.append("no query to \(name) left this machine over UDP or TCP 53: \(reason)")
            } else {
                closed.append("\(name) answered neither UDP nor TCP 53")
            }
        case (false, true):
            if case .stoppedHere(_, let reason) = udp {
                udpStoppedHere.append((name, reason))
            } else {
                udpFiltered.append(name)
            }
        case (true, false): tcpClosed.append(name)
        case (true, true): break
        }
        // UDP's answer first: what a resolver gets before any fallback.
        if let answered = [udp, tcp].first(where: \.replied) { answers.append((name, answered)) }
    }

    mutating func add(_ name: String, doh outcome: DNSPathOutcome) {
        if outcome.replied {
            answers.append((name, outcome))
        } else {
            closed.append("\(name) did not answer (\(outcome.words))")
        }
    }

    /// The finding: fail for a closed path, warn for filtered UDP, a reply that cannot be used or
    /// answers that differ, else pass.
    func finding(name: String) -> DoctorFinding {
        let seconds = ResolutionError.format(timeout.inSeconds)
        let compared = answers.filter { $0.outcome.comparable != nil }
        let differ = Set(compared.compactMap(\.outcome.comparable)).count > 1
        let answered = answers.map { "\($0.name) said \($0.outcome.words)" }.joined(separator: "; ")
        let tcpNote =
            tcpClosed.isEmpty
            ? "" : " (\(tcpClosed.joined(separator: " and ")) gave no reply over TCP, which only large answers need)"
        if !closed.isEmpty {
            // Every path in the sentence, the closed ones first: which path still answers is the way out.
            let others = answered.isEmpty ? "" : "; \(answered)"
            return DoctorFinding(
                check: .dnsPaths, status: .fail,
                seen: "A DNS path is closed for \(name): \(closed.joined(separator: "; "))\(others)\(tcpNote).",
                advice:
                    "Check that address and port, and any firewall between; point \(Setting.dnsServer.named(voice)) at a resolver that answers, or use DoH or HTTPDNS, which need no port 53."
            )
        }
        if let stopped = udpStoppedHere.first {
            // At once and on this machine: not silence on the way, and not the server's refusal.
            return DoctorFinding(
                check: .dnsPaths, status: .warn,
                seen:
                    "UDP 53 is blocked on this machine: the query over UDP to \(stopped.name) never left, \(stopped.reason), "
                    + "while TCP answered; resolvers fall back to TCP slowly, or not at all.",
                advice:
                    "Let UDP 53 out in this machine's firewall (nft list ruleset shows the rules), or resolve over DoH or HTTPDNS, which do not use port 53."
            )
        }
        if !udpFiltered.isEmpty {
            return DoctorFinding(
                check: .dnsPaths, status: .warn,
                seen:
                    "UDP 53 is filtered: \(udpFiltered.joined(separator: " and ")) gave no reply over UDP within \(seconds) s but answered over TCP; resolvers fall back to TCP slowly, or not at all.",
                advice:
                    "Ask the network's administrator to let UDP 53 through, or resolve over DoH or HTTPDNS, which do not use port 53."
            )
        }
        // A reply that cannot be used (SERVFAIL, REFUSED, a message that does not parse) says
        // nothing about the name: it is its own outcome, never part of "answered alike".
        let unusable = answers.filter { if case .failed = $0.outcome { true } else { false } }
        if !unusable.isEmpty {
            let named = unusable.map { "\($0.name) said \($0.outcome.words)" }.joined(separator: "; ")
            return DoctorFinding(
                check: .dnsPaths, status: .warn,
                seen:
                    "A DNS path gave \(name) a reply that cannot be used: \(named); all paths: \(answered)\(tcpNote).",
                advice:
                    "Ask that server with dig to see its reply; point \(Setting.dnsServer.named(voice)) at a resolver that answers, or use DoH or HTTPDNS."
            )
        }
        if differ {
            return DoctorFinding(
                check: .dnsPaths, status: .warn,
                seen: "The DNS paths answer \(name) differently: \(answered).",
                advice:
                    "One of them is hijacked, filtered or serves another view of the name: trust the HTTPDNS or DoH answer, and ask the operator of the other why it differs."
            )
        }
        return DoctorFinding(
            check: .dnsPaths, status: .pass,
            seen: "Every DNS path answered \(name) alike: \(answered)\(tcpNote).")
    }
}

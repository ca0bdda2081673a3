// `ipdirect resolve`: each name through system DNS and HTTPDNS side by side, asked afresh as dig
// would, beside what the cache held; `--cached` reads the cache as the SDKs do. Table or JSON.
import ArgumentParser
import Composition
import ConfigurationSources
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe
import TerminalText

struct ResolveCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "resolve", abstract: "Resolve names through system DNS and HTTPDNS, side by side.",
        discussion: """
            HTTPDNS is asked every time, as dig would; the CACHE HELD column shows what the cache held \
            for the name before (and whether it differs). --cached reads the cache instead, as the SDKs' \
            non-blocking read does: the cached answer, or a miss (which starts a background resolve, \
            finished and cached before the command ends, so the next read finds it).

            As dig: @SERVER asks that DNS server for the system column (HOST[:PORT]), or, given a URL or \
            a preset name, that HTTPDNS service; +short (or --short) prints only the addresses, one a \
            line (the server's with @SERVER, else HTTPDNS's); -4, -6 and --type A|AAAA choose the family.

            Exit status: 0 when every name got addresses from at least one side (with --cached: from the \
            cache), 1 when some got none, 2 for bad usage (the table: ipdirect --help).
            """)

    static let examples: [(command: String, shows: String)] = [
        ("ipdirect resolve --lab hijacked.lab.test", "The lab's LocalDNS lies about this name; HTTPDNS does not."),
        ("ipdirect resolve --lab --all-providers dual.lab.test", "Every provider the lab serves, compared."),
        ("ipdirect resolve --lab -6 +short dual.lab.test", "Only the IPv6 addresses HTTPDNS gives, as dig +short."),
        ("ipdirect resolve @1.1.1.1 example.com", "Ask that DNS server for the system column, as dig @1.1.1.1."),
    ]

    @Argument(
        help: ArgumentHelp(
            "Host names to resolve; @SERVER (a DNS server, an HTTPDNS URL or preset) and +short as dig.",
            valueName: "NAME"))
    var words: [String] = []

    @OptionGroup var family: FamilyOption

    @OptionGroup var formatting: OutputOptions<TableOrJSON>

    @Flag(help: "Only the addresses, one a line, as dig +short.")
    var short = false

    @Flag(help: "Read the cache as the SDKs do (cached answer or miss) instead of asking the service.")
    var cached = false

    @Option(
        name: .long,
        help: ArgumentHelp("Also rank every address by TCP connect time to PORT, as the SDKs do.", valueName: "PORT"))
    var rank: Int?

    @Flag(
        help:
            "Ask every provider of the configuration's [[providers]] (with --lab, the lab's four) and compare their answers."
    )
    var allProviders = false

    @OptionGroup(title: "Provider options")
    var providerOptions: ProviderOptions

    /// The names among the words (dig's `@SERVER` and `+short` taken out).
    var hosts: [String] { words.filter { !$0.hasPrefix("@") && $0 != "+short" } }

    /// `@SERVER` as dig: nil when none is given.
    var server: String? { words.last { $0.hasPrefix("@") }.map { String($0.dropFirst()) } }

    /// `@SERVER` names an HTTPDNS service (a URL or a preset), not a DNS server.
    var serverIsHTTPDNS: Bool { server.map { $0.contains("://") || ProviderPreset.named($0) != nil } ?? false }

    /// Whether only the addresses are printed (`+short` or `--short`).
    var onlyAddresses: Bool { short || words.contains("+short") }

    /// The provider options with `@SERVER` applied: a URL or a preset names the HTTPDNS service,
    /// anything else the DNS server the system column asks.
    var providerOptionsWithServer: ProviderOptions {
        var options = providerOptions
        guard let server else { return options }
        if !serverIsHTTPDNS {
            options.dnsServer = server
        } else if ProviderPreset.named(server) != nil {
            options.preset = server
        } else {
            options.endpoint = server
        }
        return options
    }

    func validate() throws {
        if hosts.isEmpty { throw ValidationError("give at least one host name") }
        if words.filter({ $0.hasPrefix("@") }).count > 1 { throw ValidationError("give one @SERVER") }
        if let server, server.isEmpty { throw ValidationError("@ needs a server after it: @127.0.0.1, @https://…") }
        if onlyAddresses && (formatting.format == .json || cached || rank != nil || allProviders) {
            throw ValidationError(
                "+short prints addresses alone; leave out --format json, --cached, --rank and --all-providers")
        }
        if let server, providerOptions.lab, serverIsHTTPDNS {
            throw ValidationError("@\(server) names an HTTPDNS service, and --lab is one: give one of them")
        }
        try providerOptionsWithServer.validate()
        if let rank, !(1...65_535).contains(rank) { throw ValidationError("--rank takes a port, 1 to 65535") }
        if rank != nil && cached { throw ValidationError("--rank measures a fresh answer; leave out --cached") }
        if allProviders && (cached || rank != nil) {
            throw ValidationError("--all-providers asks every provider afresh; leave out --cached and --rank")
        }
        for host in hosts where host.isEmpty || host.contains("/") || host.contains(" ") {
            throw ValidationError("'\(host)' is not a host name (give names, not URLs)")
        }
    }

    func run() async throws {
        let session: ResolverSession
        do {
            session = try await providerOptionsWithServer.start()
        } catch let error as ValidationError {
            throw UsageError(error.message)
        }
        let wanted = family.chosen
        if allProviders {
            guard !session.configuration.providers.isEmpty else {
                await session.close()
                throw UsageError(
                    "no providers to compare: add [[providers]] tables to the configuration file (ipdirect config init writes an example), or use --lab"
                )
            }
            let answered: Bool
            do {
                answered = try await CompareProviders.run(
                    hosts: hosts, family: wanted, format: formatting.format, pretty: formatting.pretty, session: session
                )
            } catch {
                await session.close()
                throw error
            }
            await session.close()
            if !answered { throw ExitCode(ExitStatus.failed) }
            return
        }
        if cached {
            let reads = CachedRead.read(hosts, family: wanted, cache: session.cache)
            // A miss started a background request, as in the SDKs; it finishes and is saved
            // before the command ends, so the next read finds its answer.
            let misses = reads.filter { $0.entry == nil }.count
            if misses > 0 { await session.cache.backgroundRequestsFinished() }
            await session.close()
            try CachedRead.print(
                reads, format: formatting.format, pretty: formatting.pretty, provider: session.providerDescription,
                misses: misses)
            if reads.contains(where: { $0.entry == nil }) { throw ExitCode(ExitStatus.failed) }
            return
        }
        // Names resolve side by side, HTTPDNS asked in batches; the output keeps the order they were given in.
        let results = await session.cache.resolve(hosts, family: wanted, afresh: true)
        await session.close()
        var rankings: [IPRanking] = []
        if let rank {
            for result in results { rankings.append(await IPRanking.rank(result, port: rank)) }
        }
        if onlyAddresses {
            // dig +short: the server's answer when one was named, else what HTTPDNS gave.
            let asked = server != nil && !serverIsHTTPDNS
            for result in results {
                let addresses =
                    asked ? result.system.ipv4 + result.system.ipv6 : result.httpdns.ipv4 + result.httpdns.ipv6
                for address in addresses { print(address) }
            }
        } else if formatting.format == .json {
            let encoder = JSONOutput.encoder(pretty: formatting.pretty)
            let data =
                rank == nil
                ? try encoder.encode(results)
                : try encoder.encode(zip(results, rankings).map { RankedResolution(resolution: $0, ranking: $1) })
            print(String(decoding: ProbeJSON.escapingSeparators(data), as: UTF8.self))
        } else {
            print(ProbeTable.heading(provider: session.providerDescription), terminator: "")
            print(ResolutionTable.render(results))
            for ranking in rankings { print(([""] + ranking.tableLines()).joined(separator: "\n")) }
        }
        let unanswered = results.filter {
            $0.system.ipv4.isEmpty && $0.system.ipv6.isEmpty && $0.httpdns.ipv4.isEmpty && $0.httpdns.ipv6.isEmpty
        }
        if !unanswered.isEmpty { throw ExitCode(ExitStatus.failed) }
    }
}

/// `resolve --rank --format json`: a resolution with its ranking beside it (`ranking` key).
struct RankedResolution: Encodable {
    var resolution: HostResolution
    var ranking: IPRanking

    private enum CodingKeys: String, CodingKey { case ranking }

    func encode(to encoder: any Encoder) throws {
        try resolution.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ranking, forKey: .ranking)
    }
}

/// The `resolve` table: one aligned row per name, then notes for failures and refused junk.
enum ResolutionTable {
    static func render(_ results: [HostResolution]) -> String {
        let header = ["HOST", "SYSTEM DNS", "MS", "HTTPDNS", "TTL", "MS", "SOURCE", "AGREEMENT", "CACHE HELD"]
        var rows: [[String]] = []
        var notes: [String] = []
        for r in results {
            // A DNS server gives a TTL (getaddrinfo none): shown beside its addresses.
            let systemTTL = r.system.ttl.map { " (ttl \($0)s)" } ?? ""
            let system = r.system.error == nil ? addresses(r.system.ipv4 + r.system.ipv6) + systemTTL : "failed"
            let httpdnsIPs = r.httpdns.ipv4 + r.httpdns.ipv6
            let httpdns =
                r.httpdns.error == nil || r.httpdns.source == .systemFallback ? addresses(httpdnsIPs) : "failed"
            rows.append(
                [
                    r.host, system, milliseconds(r.system.ms), httpdns,
                    // getaddrinfo (`--provider system`) gives no TTL: none is shown.
                    (r.httpdns.error == nil || r.httpdns.source == .systemFallback) && r.httpdns.source != .system
                        ? r.httpdns.ttl.shown : "-",
                    milliseconds(r.httpdns.ms), r.httpdns.source.rawValue, r.agreement.rawValue, held(r.cached),
                ].map(TerminalText.escaped))
            if let error = r.system.error { notes.append("\(r.host): \(error.sentence)") }
            if let chain = r.system.cname {
                notes.append(
                    "\(r.host): \(r.system.resolver.label): CNAME \(([r.host] + chain).joined(separator: " -> "))")
            }
            if r.httpdns.error == nil,
                r.httpdns.server != nil || r.httpdns.clientIP != nil || r.httpdns.notes != nil
                    || r.httpdns.originTTL != nil || r.httpdns.extra != nil
            {
                var said: [String] = []
                if let server = r.httpdns.server { said.append("answered by service IP \(server)") }
                if let clientIP = r.httpdns.clientIP { said.append("it judged this client as \(clientIP)") }
                if let origin = r.httpdns.originTTL { said.append("origin_ttl \(origin.shown)") }
                if let extra = r.httpdns.extra { said.append("extra: \(extra)") }
                said += r.httpdns.notes ?? []
                notes.append("\(r.host): HTTPDNS \(said.joined(separator: "; "))")
            }
            if let error = r.httpdns.error {
                let fallback = r.httpdns.source == .systemFallback ? " (answered by system DNS instead)" : ""
                notes.append("\(r.host): HTTPDNS: \(error.sentence)\(fallback)")
            }
        }
        // Numbers right-aligned, text left-aligned.
        var out = TextTable.lines(header: header, rows: rows, rightAligned: [2, 4, 5])
        // Notes carry server text (errors, CNAME targets), cleaned where it entered: escaped again, as the rows are.
        if !notes.isEmpty { out += [""] + notes.map(TerminalText.escaped) }
        return out.joined(separator: "\n")
    }

    static func addresses(_ ips: [IPAddress]) -> String { ips.isEmpty ? "(none)" : ips.joined(separator: ", ") }

    /// What the cache held beside the fresh answer: "(nothing)", "IPs (same)", "IPs (differs)".
    static func held(_ comparison: CacheComparison?) -> String {
        guard let comparison else { return "-" }
        guard comparison.held else { return "(nothing)" }
        let left = comparison.secondsLeft.map { $0 >= 0 ? ", \($0)s left" : ", expired" } ?? ""
        return addresses(comparison.ipv4 + comparison.ipv6) + " (" + (comparison.differs ? "differs" : "same") + left
            + ")"
    }

    static func milliseconds(_ ms: Double) -> String { String(cFormat: "%.1f", ms) }
}

/// `resolve --cached`: the SDKs' non-blocking read, one row per name and family.
enum CachedRead {
    /// One read: the cached answer, or nil for a miss.
    struct Read: Encodable {
        var host: String
        var family: IPFamily
        var entry: CacheEntrySnapshot?
        var secondsLeft: Int?
    }

    static func read(_ hosts: [String], family: AddressFamily?, cache: ResolverCache) -> [Read] {
        let families = (family ?? cache.configuration.family).concrete().sorted { $0.rawValue < $1.rawValue }
        let now = Date()
        return hosts.flatMap { host in
            families.map { f in
                let entry = cache.lookup(host, family: f)
                return Read(
                    host: host, family: f, entry: entry,
                    secondsLeft: entry.map { Int($0.remaining(at: now).rounded(.down)) })
            }
        }
    }

    static func print(_ reads: [Read], format: TableOrJSON, pretty: Bool?, provider: String, misses: Int) throws {
        if format == .json {
            let encoder = JSONOutput.encoder(pretty: pretty)
            encoder.dateEncodingStrategy = .iso8601
            Swift.print(String(decoding: ProbeJSON.escapingSeparators(try encoder.encode(reads)), as: UTF8.self))
            return
        }
        let requests =
            misses == 0
            ? "no request"
            : "\(misses == 1 ? "the miss" : "each miss") asked the service in the background, as the SDKs do;"
                + " what it answered is cached for the next read"
        Swift.print(ProbeTable.heading(provider: "\(provider) (cache read, \(requests))"), terminator: "")
        let rows = reads.map { read -> [String] in
            guard let entry = read.entry else { return [read.host, read.family.rawValue, "miss", "-", "-"] }
            let left = read.secondsLeft.map { $0 >= 0 ? "\($0)s" : "expired" } ?? "-"
            return [
                read.host, read.family.rawValue, ResolutionTable.addresses(entry.ips), left, entry.source.rawValue,
            ].map(TerminalText.escaped)
        }
        for line in TextTable.lines(header: ["HOST", "FAMILY", "CACHED", "LEFT", "SOURCE"], rows: rows) {
            Swift.print(line)
        }
    }
}

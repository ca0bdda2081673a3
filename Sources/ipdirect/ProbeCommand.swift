// `ipdirect probe`: requests URLs each IP-direct way and says which works; batch input and
// exports (table, JSON, JSON Lines, HAR) written as each URL finishes. Exit 0 all work, 1 one has
// no direct way, 2 bad input, 130 interrupted (the table: ExitStatus).
import ArgumentParser
import Composition
import ConfigurationSources
import FoundationEssentials
import FoundationGaps
import Lab
import NameResolution
import Probe
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

struct ProbeCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "Request URLs each IP-direct way and say which works.",
        discussion: """
            Scenarios: system-dns (the baseline), direct-http, direct-https (no SNI, certificate checked \
            against the original name in the handshake), direct-sni (the name pinned to the IP).
            --timeout bounds name resolution (default: the configuration's timeout, \
            \(ResolutionError.format(ResolverConfiguration.defaults.timeout)) s) and, when --probe-timeout is \
            not given, each request too; --probe-timeout bounds each request (default \
            \(ResolutionError.format(ProbeTimeoutOption.defaultSeconds)) s). --lab resolves through the lab's \
            HTTPDNS service and trusts its CA.
            Results are written as each URL finishes (--order input keeps the input's order); on a \
            terminal, stderr shows a progress line. Ctrl-C stops starting URLs, gives those under way \
            the request timeout to finish, and leaves complete files; a second Ctrl-C stops at once. \
            --resume FILE skips the URLs an earlier run's JSON Lines already has.
            As curl: --resolve HOST:PORT:ADDRESS probes through that address, -H adds a header, -o FILE \
            writes the output there, -v traces every request on stderr, -4 and -6 choose the family. \
            -k is refused: whether the certificate checks out against the name is what probe finds out.
            Exit status: 0 when every URL has a working direct scenario, 1 when one has none, 2 for bad \
            usage or input (an unparsable URL is named and the rest still run), \
            \(ExitStatus.stopped(by: SIGINT)) when interrupted (the table: ipdirect --help).
            """)

    static let examples: [(command: String, shows: String)] = [
        (
            "ipdirect probe --lab https://hijacked.lab.test/",
            "The lab's hijacked name: system DNS is lied to, the direct techniques still work."
        ),
        ("ipdirect probe --lab --format json https://sni-a.lab.test/ | jq .", "The whole trace as JSON."),
        (
            "ipdirect probe --lab --resolve sni-a.lab.test:443:127.0.0.1 -v https://sni-a.lab.test/",
            "Probe through an address you choose, with curl's trace on stderr."
        ),
        ("ipdirect probe --input urls.txt --jsonl out.jsonl --har out.har", "A batch, written as each URL finishes."),
    ]

    @Argument(help: RequestOptionHelp.urls)
    var urls: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Read URLs from FILE, one a line ('#' starts a comment); - reads standard input.", valueName: "FILE"))
    var input: String?

    @Option(name: .long, help: RequestOptionHelp.scenario)
    var scenario: [Scenario] = []

    @Flag(name: .customLong("all-ips"), help: "Direct attempts to every HTTPDNS IP, not only the first.")
    var allIPs = false

    @Option(
        name: .customLong("resolve"),
        help: ArgumentHelp(
            "Probe HOST through ADDRESS (comma-separated for several), as curl --resolve: neither system DNS "
                + "nor HTTPDNS is asked for it (repeatable; PORT * for any).",
            valueName: "HOST:PORT:ADDRESS"))
    var pins: [String] = []

    @Option(name: .long, help: ArgumentHelp("GET, HEAD or POST (POST when --data is given).", valueName: "METHOD"))
    var method: RequestMethod?

    @Option(name: .long, help: ArgumentHelp("Request body: TEXT, or @FILE to read it from a file.", valueName: "DATA"))
    var data: String?

    @Option(name: [.customShort("H"), .long], help: RequestOptionHelp.header)
    var header: [String] = []

    @OptionGroup var family: FamilyOption

    @OptionGroup var formatting: OutputOptions<ProbeFormat>

    @OptionGroup var colour: ColorOption

    @Option(
        name: [.customShort("o"), .long],
        help: ArgumentHelp("Write the output to FILE instead of standard output.", valueName: "FILE"))
    var output: String?

    @Option(name: .long, help: ArgumentHelp("Also write a HAR 1.2 file.", valueName: "FILE"))
    var har: String?

    @Option(name: .long, help: ArgumentHelp("Also write JSON Lines to FILE.", valueName: "FILE"))
    var jsonl: String?

    @Option(name: .long, help: RequestOptionHelp.cacert)
    var cacert: String?

    @Flag(
        name: [.customShort("k"), .customLong("insecure")],
        help: "Refused, with the reason: the certificate check is what probe looks at.")
    var insecure = false

    @Flag(name: [.customShort("v"), .long], help: "Trace every request on stderr, as curl -v does.")
    var verbose = false

    @Option(name: .long, help: ArgumentHelp("How many requests may run at once.", valueName: "N"))
    var concurrency: Int = ProbeOptions().concurrency

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Re-probe the URL every N seconds, one JSON line per round (what changed included).",
            valueName: "SECONDS"))
    var watch: Double?

    @Option(
        name: .long,
        help: ArgumentHelp("With --watch: stop after N rounds (default: run until interrupted).", valueName: "N"))
    var count: Int?

    @Flag(
        name: .long,
        help: "Also rank every address of each host by TCP connect time to the URL's port, as the SDKs do (`ranking`).")
    var rank = false

    @Flag(name: .long, help: "Keep Authorization, Cookie, Set-Cookie and other secrets in the output.")
    var noRedact = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Write results as each URL finishes (completion) or in input order (input).", valueName: "ORDER"))
    var order: ProbeOrder = .completion

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Skip the URLs already in FILE, the JSON Lines output of an earlier run.", valueName: "FILE"))
    var resume: String?

    @Flag(name: .long, help: "No progress line on stderr.")
    var quiet = false

    @Flag(name: .long, help: "Send credential headers to every host a redirect names (dropped by default).")
    var locationTrusted = false

    @Flag(name: .long, help: "Follow redirects from https to plain http (refused by default).")
    var allowDowngrade = false

    @OptionGroup var requestTimeout: ProbeTimeoutOption

    /// `--timeout` also bounds each probe request unless `--probe-timeout` is given; `--lab`
    /// probes the lab with its CA trusted.
    @OptionGroup(title: "Provider options")
    var providerOptions: ProviderOptions

    func validate() throws {
        if insecure {
            throw ValidationError(
                "-k (--insecure) is refused: probe's answer is whether each technique passes the certificate check "
                    + "against the name (direct-https fails it where SNI is needed); without the check every technique "
                    + "would look as if it worked. To trust a private CA, give --cacert FILE")
        }
        if watch != nil && formatting.given == .table {
            throw ValidationError(
                "--watch prints one JSON line per round, not a table; leave out --format table (the console's "
                    + "w key draws the rounds live)")
        }
    }

    /// A URL to probe as the user gave it, with the --input line it came from.
    private typealias Wanted = (text: String, line: Int?)

    func run() async throws {
        var badInput = false
        var wanted: [Wanted] = urls.map { ($0, nil) }
        if let input { wanted += try readInput(input, badInput: &badInput) }
        guard !wanted.isEmpty || providerOptions.lab else {
            throw UsageError("no URL given (arguments or --input FILE)")
        }
        var parsed: [(text: String, url: ProbeURL)] = []
        for (url, line) in wanted {
            do {
                parsed.append((url, try ProbeURL.parse(url)))
            } catch {
                ErrorVoice.say("\(line.map { "line \($0): " } ?? "")cannot probe \(error.quotedURL): \(error.reason)")
                badInput = true
            }
        }
        let pinned = try pinnedAddresses(matching: parsed.map(\.url))
        var options = try requestOptions()
        try checkCombinations(urlCount: parsed.count)
        let originCA = try CAFileOption.origin(cacert: cacert)

        // Where names come from: the configured provider, or the lab's HTTPDNS service.
        let session: ResolverSession
        do {
            session = try await providerOptions.start()
        } catch let error as ValidationError {
            throw UsageError(error.message)
        }
        if let chosen = family.chosen { session.cache.setFamily(chosen) }
        options.secretNames = RedactionNames(adding: session.configuration.redact)
        let temporaryCA = trust(originCA, lab: session.lab?.endpoints.ca, in: &options)
        defer { if let temporaryCA { try? FileManager.default.removeItem(atPath: temporaryCA) } }

        var targets = parsed.map { session.labTarget($0.text) }
        if wanted.isEmpty, let labURLs = session.labURLs { targets = labURLs }
        if let resume {
            do {
                targets = try skipDone(targets, resume: resume, options: options)
            } catch {
                await session.close()
                throw error
            }
        }

        let engine = session.probeEngine(options, pinning: pinned, by: "--resolve")
        if let watch, let url = targets.first {
            let works = await watchRounds(url, every: watch, engine: engine)
            await session.close()
            if !works { throw ExitCode(ExitStatus.failed) }
            return
        }
        let appendJSONL: Bool
        if let jsonl, let resume { appendJSONL = Self.samePath(jsonl, resume) } else { appendJSONL = false }
        let outcome: ProbeBatch.Outcome
        do {
            outcome = try await ProbeBatch.run(
                targets, engine: engine,
                outputs: ProbeBatch.Outputs(
                    format: formatting.format, file: output, har: har, jsonl: jsonl,
                    appendJSONL: appendJSONL, rank: rank,
                    verbose: verbose, pretty: formatting.pretty ?? (output == nil && isatty(STDOUT_FILENO) == 1),
                    tableStyle: TerminalSize.tableStyle(color: colour.color, toFile: output != nil),
                    heading: ProbeTable.heading(provider: session.providerDescription)),
                order: order, progress: ProgressLine.stderrIsTerminal && !quiet)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
        if let signal = outcome.interruptedBy { throw ExitCode(ExitStatus.stopped(by: signal)) }
        if badInput { throw UsageError.alreadyReported }
        if outcome.writeFailed || outcome.failed > 0 { throw ExitCode(ExitStatus.failed) }
    }

    /// The URLs of `--input FILE`, each with its line; a line with the agent's own settings is
    /// named on stderr and `badInput` set.
    private func readInput(_ input: String, badInput: inout Bool) throws -> [Wanted] {
        let text: String
        do {
            text = try TextFile.contents(of: input)
        } catch {
            throw UsageError("cannot read --input \(input): \(error.reason)")
        }
        var wanted: [Wanted] = []
        for (line, trimmed) in TargetLine.entries(text) {
            // The agent's list format: a URL may carry its own settings, which probe does not apply.
            switch Result(catching: { () throws(TargetSettingError) in try TargetLine.parse(trimmed) }) {
            case .success(let parsed) where parsed.settings.isEmpty:
                wanted.append((parsed.url, line))
            case .success(let parsed):
                ErrorVoice.say(
                    "line \(line): cannot probe \(InputQuote.quoted(parsed.url)) as written: its own settings "
                        + "(scenario=, method=, header=) are read by ipdirect agent; give probe --scenario, "
                        + "--method and --header instead")
                badInput = true
            case .failure:
                wanted.append((trimmed, line))
            }
        }
        return wanted
    }

    /// `--resolve`'s addresses by host name; each must name a host and port some URL has, as in
    /// curl, where a pin for another port does nothing (here it is said at once).
    private func pinnedAddresses(matching urls: [ProbeURL]) throws -> [String: [IPAddress]] {
        var pinned: [String: [IPAddress]] = [:]
        for text in pins {
            let pin = try PinnedAddress(parsing: text)
            let hosts = urls.filter { $0.host.lowercased() == pin.host }
            if !urls.isEmpty && !hosts.contains(where: { pin.port == nil || $0.port == pin.port }) {
                let ports = hosts.map { "\($0.host):\($0.port)" }
                throw UsageError(
                    "--resolve \(text) matches no URL given"
                        + (ports.isEmpty ? "" : " (they have \(ports.joined(separator: ", ")))"))
            }
            pinned[pin.host, default: []] += pin.addresses
        }
        return pinned
    }

    /// How to make each request: scenarios, method, body, headers, limits.
    private func requestOptions() throws -> ProbeOptions {
        var options = ProbeOptions()
        if !scenario.isEmpty { options.scenarios = scenario }
        options.allIPs = allIPs
        if let data {
            if data.hasPrefix("@") {
                let path = String(data.dropFirst())
                // As curl's --data @FILE: a pipe or /dev/fd/N is fine; a directory or a device
                // that never ends gets a sentence.
                do {
                    options.body = try TextFile.bytes(of: path)
                } catch {
                    throw UsageError("cannot read --data file \(path): \(error.reason)")
                }
                options.bodyFile = path
            } else {
                options.body = Array(data.utf8)
            }
        }
        let chosen = method ?? (options.body == nil ? .get : .post)
        options.method = chosen
        if chosen == .head && options.body != nil { throw UsageError("--data goes with POST") }
        do {
            options.headers = try header.map { line throws(TargetSettingError) in try HeaderField(parsing: line) }
        } catch {
            throw UsageError(error.reason)
        }
        guard concurrency > 0 else { throw UsageError("--concurrency must be at least 1") }
        options.timeout = requestTimeout.timeout(orResolutionTimeout: providerOptions.timeout)
        options.concurrency = concurrency
        options.redact = !noRedact
        options.locationTrusted = locationTrusted
        options.allowDowngrade = allowDowngrade
        return options
    }

    /// The options that go together only in some ways (--watch with one URL, --count with --watch).
    private func checkCombinations(urlCount: Int) throws {
        // A day at most, as the agent's --interval: past that the wait is no wait a person means, and
        // far past it the nanoseconds to sleep cannot be counted.
        if let watch, !(watch > 0 && watch <= 86_400) {
            throw UsageError("--watch takes the seconds between rounds, more than 0 and at most 86400")
        }
        if let count, count < 1 { throw UsageError("--count must be at least 1") }
        if count != nil && watch == nil { throw UsageError("--count goes with --watch N") }
        if watch != nil && urlCount != 1 { throw UsageError("--watch watches one URL; give exactly one") }
        if rank && watch != nil {
            throw UsageError("--rank goes with a probe, not --watch; rank once with probe --rank URL")
        }
        if output != nil && watch != nil {
            throw UsageError("--watch writes its rounds to standard output; leave out -o")
        }
    }

    /// Sets the CA file the requests trust: the origin CA chosen (`--cacert` or the environment's),
    /// the lab's, or both joined in a temporary file, whose path is returned for removal.
    private func trust(
        _ originCA: (path: String, addsToSystem: Bool)?, lab labCA: String?, in options: inout ProbeOptions
    ) -> String? {
        options.caFile = originCA?.path
        // --cacert adds to the system's CAs, so public names in the same batch still verify.
        options.caFileAddsToSystem = originCA?.addsToSystem ?? false
        guard let labCA else { return nil }
        // With the lab, a bundle from the environment (often the system's own, set for every tool) is
        // not joined in: only a --cacert the user gave for this run is.
        guard let originCA, originCA.addsToSystem else {
            options.caFile = labCA
            return nil
        }
        // libcurl takes one CA file: the user's and the lab's together.
        let path = FileManager.default.temporaryDirectory.path.appendingPathComponent(
            "ipdirect-ca-\(UUID().uuidString).pem")
        let joined =
            (FileManager.default.contents(atPath: originCA.path) ?? Data()) + Data("\n".utf8)
            + (FileManager.default.contents(atPath: labCA) ?? Data())
        try? PrivateFile.write(joined, to: path)
        options.caFile = path
        return path
    }

    /// `targets` without those an earlier run's JSON Lines (`--resume FILE`) already has.
    private func skipDone(_ targets: [String], resume: String, options: ProbeOptions) throws -> [String] {
        let done: Set<String>
        do {
            done = try ProbeExport.urlsDone(inJSONLines: resume)
        } catch {
            throw UsageError("cannot read --resume \(resume): \(SystemReason.words(for: error))")
        }
        // Reports carry the URL as parsed (and redacted): compare like with like.
        let left = targets.filter { text in
            guard let url = try? ProbeURL.parse(text) else { return true }
            return !done.contains(options.redact ? Redaction.url(url.text, options.secretNames) : url.text)
        }
        ErrorVoice.say("--resume: \(targets.count - left.count) URLs already in \(resume), \(left.count) to go")
        return left
    }

    /// Headless watch: one JSON line per round as it happens. Returns whether the last round
    /// found a working direct technique.
    private func watchRounds(_ url: String, every seconds: Double, engine: ProbeEngine) async -> Bool {
        var last: URLReport?
        for await (round, report) in Watch(engine: engine, url: url).rounds(every: { seconds }, count: count) {
            StandardStream.output.write(round.jsonLine())
            last = report
        }
        return !(last?.verdict.works.isEmpty ?? true)
    }

    /// Whether two paths name the same file (so --resume and --jsonl can share one).
    static func samePath(_ a: String, _ b: String) -> Bool {
        URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath()
            == URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath()
    }
}

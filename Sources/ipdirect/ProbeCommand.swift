// `ipdirect probe`: requests URLs each IP-direct way and says which works; batch input and
// exports (table, JSON, JSON Lines, HAR) written as each URL finishes. Exit 0 all work, 1 one has
// no direct way, 2 bad input, 130 interrupted.
import ArgumentParser
import ConfigurationSources
import Foundation
import Lab
import NameResolution
import Probe
import TerminalText

struct ProbeCommand: AsyncParsableCommand {
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
            Exit status: 0 when every URL has a working direct scenario, 1 when one has none, 2 for bad \
            usage or input (an unparsable URL is named and the rest still run), \
            \(ExitStatus.stopped(by: SIGINT)) when interrupted.
            """)

    @Argument(help: RequestOptionHelp.urls)
    var urls: [String] = []

    @Option(name: .long, help: "Read URLs from FILE, one a line ('#' starts a comment); - reads standard input.")
    var input: String?

    @Option(name: .long, help: RequestOptionHelp.scenario)
    var scenario: [Scenario] = []

    @Flag(name: .customLong("all-ips"), help: "Direct attempts to every HTTPDNS IP, not only the first.")
    var allIPs = false

    @Option(name: .long, help: "GET, HEAD or POST (POST when --data is given).")
    var method: RequestMethod?

    @Option(name: .long, help: "Request body: TEXT, or @FILE to read it from a file.")
    var data: String?

    @Option(name: .long, help: RequestOptionHelp.header)
    var header: [String] = []

    @Option(name: .long, help: "Output: table, json or jsonl.")
    var format: ProbeFormat = .table

    @Option(name: .long, help: "Also write a HAR 1.2 file.")
    var har: String?

    @Option(name: .long, help: "Also write JSON Lines to FILE.")
    var jsonl: String?

    @Option(name: .long, help: RequestOptionHelp.cacert)
    var cacert: String?

    @Option(name: .long, help: "How many requests may run at once.")
    var concurrency: Int = ProbeOptions().concurrency

    @Option(name: .long, help: "Re-probe the URL every N seconds, one JSON line per round (what changed included).")
    var watch: Double?

    @Option(name: .long, help: "With --watch: stop after M rounds (default: run until interrupted).")
    var count: Int?

    @Flag(
        name: .long,
        help: "Also rank every address of each host by TCP connect time to the URL's port, as the SDKs do (`ranking`).")
    var rank = false

    @Flag(name: .long, help: "Keep Authorization, Cookie, Set-Cookie and other secrets in the output.")
    var noRedact = false

    @Option(name: .long, help: "Write results as each URL finishes (completion) or in input order (input).")
    var order: ProbeOrder = .completion

    @Option(name: .long, help: "Skip the URLs already in FILE, the JSON Lines output of an earlier run.")
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

    func run() async throws {
        var badInput = false
        func complain(_ message: String) {
            FileHandle.standardError.write(Data("ipdirect probe: \(TerminalText.escapedLines(message))\n".utf8))
        }
        func usage(_ message: String) -> UsageError { UsageError(message) }

        // What to probe, each URL from --input with its line, which an error about it names.
        var wanted: [(text: String, line: Int?)] = urls.map { ($0, nil) }
        if let input {
            let text: String
            do {
                text = try TextFile.contents(of: input)
            } catch {
                throw usage("cannot read --input \(input): \(error.reason)")
            }
            for (line, trimmed) in TargetLine.entries(text) {
                // The agent's list format: a URL may carry its own settings, which probe does not apply.
                switch Result(catching: { () throws(TargetSettingError) in try TargetLine.parse(trimmed) }) {
                case .success(let parsed) where parsed.settings.isEmpty:
                    wanted.append((parsed.url, line))
                case .success(let parsed):
                    complain(
                        "line \(line): cannot probe \(InputQuote.quoted(parsed.url)) as written: its own settings "
                            + "(scenario=, method=, header=) are read by ipdirect agent; give probe --scenario, "
                            + "--method and --header instead")
                    badInput = true
                case .failure:
                    wanted.append((trimmed, line))
                }
            }
        }
        guard !wanted.isEmpty || providerOptions.lab else { throw usage("no URL given (arguments or --input FILE)") }
        var parsed: [(text: String, url: ProbeURL)] = []
        for (url, line) in wanted {
            do {
                parsed.append((url, try ProbeURL.parse(url)))
            } catch {
                complain("\(line.map { "line \($0): " } ?? "")cannot probe \(error.quotedURL): \(error.reason)")
                badInput = true
            }
        }

        // How to probe.
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
                    throw usage("cannot read --data file \(path): \(error.reason)")
                }
                options.bodyFile = path
            } else {
                options.body = Array(data.utf8)
            }
        }
        let chosen = method ?? (options.body == nil ? .get : .post)
        options.method = chosen
        if chosen == .head && options.body != nil { throw usage("--data goes with POST") }
        do {
            options.headers = try header.map { line throws(TargetSettingError) in try HeaderField(parsing: line) }
        } catch {
            throw usage(error.reason)
        }
        if let watch, !(watch > 0) { throw usage("--watch takes the seconds between rounds, more than 0") }
        if let count, count < 1 { throw usage("--count must be at least 1") }
        if count != nil && watch == nil { throw usage("--count goes with --watch N") }
        if watch != nil && parsed.count != 1 { throw usage("--watch watches one URL; give exactly one") }
        if rank && watch != nil {
            throw usage("--rank goes with a probe, not --watch; rank once with probe --rank URL")
        }
        guard concurrency > 0 else { throw usage("--concurrency must be at least 1") }
        options.timeout = requestTimeout.timeout(orResolutionTimeout: providerOptions.timeout)
        options.concurrency = concurrency
        options.redact = !noRedact
        options.locationTrusted = locationTrusted
        options.allowDowngrade = allowDowngrade
        if let cacert, let problem = CAFileOption.problem(cacert, named: "--cacert") { throw usage(problem) }

        // Where names come from: the configured provider, or the lab's HTTPDNS service.
        let session: ResolverSession
        do {
            session = try await providerOptions.start()
        } catch let error as ValidationError {
            throw usage(error.message)
        }
        var temporaryCA: String?
        defer { if let temporaryCA { try? FileManager.default.removeItem(atPath: temporaryCA) } }
        options.secretNames = RedactionNames(adding: session.configuration.redact)
        options.caFile = cacert
        // --cacert adds to the system's CAs, so public names in the same batch still verify.
        options.caFileAddsToSystem = cacert != nil
        if let labCA = session.lab?.endpoints.ca {
            if let cacert {
                // libcurl takes one CA file: the user's and the lab's together.
                let path = NSTemporaryDirectory() + "ipdirect-ca-\(UUID().uuidString).pem"
                let joined =
                    (FileManager.default.contents(atPath: cacert) ?? Data()) + Data("\n".utf8)
                    + (FileManager.default.contents(atPath: labCA) ?? Data())
                try? PrivateFile.write(joined, to: path)
                temporaryCA = path
                options.caFile = path
            } else {
                options.caFile = labCA
            }
        }

        var usable = parsed.map { session.labTarget($0.text) }
        if wanted.isEmpty, let hosts = session.lab?.endpoints.hosts {
            usable = hosts.keys.sorted().compactMap { hosts[$0] }
        }
        if let resume {
            let done: Set<String>
            do {
                done = try ProbeExport.urlsDone(inJSONLines: resume)
            } catch {
                await session.close()
                throw usage("cannot read --resume \(resume): \(error.localizedDescription)")
            }
            // Reports carry the URL as parsed (and redacted): compare like with like.
            let before = usable.count
            usable.removeAll { text in
                guard let url = try? ProbeURL.parse(text) else { return false }
                return done.contains(options.redact ? Redaction.url(url.text, options.secretNames) : url.text)
            }
            complain("--resume: \(before - usable.count) URLs already in \(resume), \(usable.count) to go")
        }

        let cache = session.cache
        let engine = ProbeEngine(resolve: { await cache.resolve($0) }, options: options)
        if let watch, let url = usable.first {
            // Headless watch: one JSON line per round as it happens.
            var last: URLReport?
            for await (round, report) in Watch(engine: engine, url: url).rounds(every: { watch }, count: count) {
                FileHandle.standardOutput.write(round.jsonLine())
                last = report
            }
            await session.close()
            if last?.verdict.works.isEmpty ?? true { throw ExitCode(ExitStatus.failed) }
            return
        }
        let outcome: ProbeBatch.Outcome
        do {
            outcome = try await ProbeBatch.run(
                usable, engine: engine,
                outputs: ProbeBatch.Outputs(
                    format: format, har: har, jsonl: jsonl,
                    appendJSONL: jsonl != nil && resume != nil && Self.samePath(jsonl!, resume!), rank: rank),
                order: order, progress: ProgressLine.stderrIsTerminal && !quiet, complain: complain)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
        if let signal = outcome.interruptedBy { throw ExitCode(ExitStatus.stopped(by: signal)) }
        if badInput || outcome.writeFailed { throw UsageError.alreadyReported }
        if outcome.failed > 0 { throw ExitCode(ExitStatus.failed) }
    }

    /// Whether two paths name the same file (so --resume and --jsonl can share one).
    static func samePath(_ a: String, _ b: String) -> Bool {
        URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath()
            == URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath()
    }
}

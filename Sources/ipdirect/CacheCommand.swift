// `ipdirect cache list|clear|path`: the persistent resolver cache seen from outside the console:
// what it holds, with TTLs left, emptying it, and where it lives.
import ArgumentParser
import ConfigurationSources
import FoundationEssentials
import NameResolution
import Probe
import TerminalText

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache", abstract: "Show, clear or locate the persistent resolver cache.",
        subcommands: [List.self, Clear.self, Path.self])

    /// Options every cache subcommand shares: which configuration file names the cache.
    struct Location: ParsableArguments {
        @Option(help: ProviderOptions.configFileHelp)
        var config: String?

        /// The configured cache file, or nil when persistence is off.
        func cachePath() throws -> String? {
            do {
                let (configuration, warnings) = try ConfigurationLoader.load(file: config)
                for warning in warnings { ResolutionOutput.warn("warning: \(warning)") }
                return configuration.cachePath
            } catch {
                throw UsageError("\(error)")
            }
        }

        /// The cache as stored, every provider's answers, expired ones included (listing shows them
        /// as expired); how many could not be read, and why, goes to standard error.
        func stored(_ path: String) -> [PersistentCache.Entry] {
            let listing = PersistentCache.entries(at: path)
            if let warning = listing.warning { ResolutionOutput.warn("warning: \(warning)") }
            if let sentence = Self.skippedSentence(listing, path: path) {
                ResolutionOutput.warn("warning: \(sentence)")
            }
            return listing.entries
        }

        /// "skipped 1 of 50 entries in PATH that cannot be read (kept in the file as they were): ...",
        /// naming at most three; nil when none was skipped.
        static func skippedSentence(_ listing: PersistentCache.Listing, path: String) -> String? {
            guard !listing.skipped.isEmpty else { return nil }
            let total = listing.entries.count + listing.skipped.count
            // The identity is the file's text: escaped, as anything from outside.
            let named = listing.skipped.prefix(3).map { skipped in
                "entry \(skipped.position) of \(TerminalText.escaped(skipped.provider)): \(skipped.reason)"
            }
            let more = listing.skipped.count > 3 ? "; and \(listing.skipped.count - 3) more" : ""
            return "skipped \(listing.skipped.count) of \(total) entries in \(path) that cannot be read (kept in the "
                + "file as they were): " + named.joined(separator: "; ") + more
        }
    }

    struct List: ParsableCommand, CommandExamples {
        static let configuration = CommandConfiguration(abstract: "List the cached answers with their TTLs.")

        static let examples: [(command: String, shows: String)] = [
            ("ipdirect cache list", "Every cached answer, its TTL left and the provider that gave it."),
            ("ipdirect cache list --format json | jq length", "How many answers are cached, for a script."),
        ]

        @OptionGroup var formatting: OutputOptions<TableOrJSON>

        @OptionGroup var location: Location

        func run() throws {
            guard let path = try location.cachePath() else {
                print("the resolver cache is not persisted (persist_cache = false)")
                return
            }
            let entries = location.stored(path)
            if formatting.format == .json {
                let encoder = JSONOutput.encoder(pretty: formatting.pretty)
                encoder.dateEncodingStrategy = .iso8601
                print(String(decoding: ProbeJSON.escapingSeparators(try encoder.encode(entries)), as: UTF8.self))
                return
            }
            if entries.isEmpty {
                print("the cache at \(path) is empty")
                return
            }
            let now = Date()
            let header = ["HOST", "FAMILY", "ADDRESSES", "TTL", "LEFT", "RESOLVED", "PROVIDER"]
            let rows = entries.map { stored -> [String] in
                let e = stored.entry
                let left = e.secondsLeft(at: now, rounded: .down)
                return [
                    e.host, e.family.rawValue, e.ips.isEmpty ? "(none)" : e.ips.joined(separator: ", "), "\(e.ttl)s",
                    e.remaining(at: now) > 0 ? "\(left)s" : "expired", ProbeJSON.timestampToTheSecond(e.resolvedAt),
                    stored.provider,
                ].map(TerminalText.escaped)
            }
            for line in TextTable.lines(header: header, rows: rows) { print(line) }
        }
    }

    struct Clear: ParsableCommand, CommandExamples {
        static let configuration = CommandConfiguration(abstract: "Empty the cache (one name, or all of it).")

        static let examples: [(command: String, shows: String)] = [
            ("ipdirect cache clear api.example.com", "Forget one name (both families); the next lookup asks afresh."),
            ("ipdirect cache clear", "Empty the whole cache."),
        ]

        @Argument(help: ArgumentHelp("Only this name (both families).", valueName: "NAME"))
        var host: String?

        @OptionGroup var location: Location

        func run() throws {
            guard let path = try location.cachePath() else {
                print("the resolver cache is not persisted (persist_cache = false)")
                return
            }
            let removed: Int
            do {
                removed = try PersistentCache.remove(host: host, at: path)
            } catch {
                throw CommandFailure("\(error)")
            }
            print("removed \(removed) entries from \(path)")
        }
    }

    struct Path: ParsableCommand, CommandExamples {
        static let configuration = CommandConfiguration(abstract: "Print where the cache file lives.")

        static let examples: [(command: String, shows: String)] = [
            ("ipdirect cache path", "Where the cache file is."),
            ("ipdirect cache path --config ./config.toml", "Where that configuration file keeps it."),
        ]

        @OptionGroup var location: Location

        func run() throws {
            print(try location.cachePath() ?? "(not persisted: persist_cache = false)")
        }
    }
}

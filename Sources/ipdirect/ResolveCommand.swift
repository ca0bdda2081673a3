// `ipdirect resolve`: each name through system DNS and HTTPDNS side by side, with times, the
// TTL and where the answer came from, and how the two compare; as a table or as JSON.
import ArgumentParser
import Foundation
import NameResolution
import TerminalText

struct ResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve", abstract: "Resolve names through system DNS and HTTPDNS, side by side.",
        discussion: """
            Exit status: 0 when every name got addresses from at least one side, 1 when some got none,
            2 for bad usage.
            """)

    @Argument(help: "Host names to resolve.")
    var hosts: [String] = []

    @Option(name: .customLong("type"), help: "Address families: auto, v4, v6 or both (default: configured, auto).")
    var family: String?

    @Option(help: "Output: table or json.")
    var format: String = "table"

    @OptionGroup(title: "Provider options")
    var providerOptions: ProviderOptions

    /// Bad usage exits 2, as the design's command line promises (ArgumentParser's own is 64).
    func validate() throws {
        func usage(_ message: String) -> ExitCode {
            ResolutionOutput.warn(
                "error: \(message)\nusage: ipdirect " + Self.usageString() + "\nsee: ipdirect resolve --help")
            return ExitCode(2)
        }
        if hosts.isEmpty { throw usage("give at least one host name") }
        if let family, AddressFamily(rawValue: family) == nil {
            throw usage("--type must be one of auto, v4, v6, both (not '\(family)')")
        }
        if !["table", "json"].contains(format) { throw usage("--format must be table or json (not '\(format)')") }
        for host in hosts where host.isEmpty || host.contains("/") || host.contains(" ") {
            throw usage("'\(host)' is not a host name (give names, not URLs)")
        }
        do {
            try providerOptions.validate()
        } catch let error as ValidationError {
            throw usage(error.message)
        }
    }

    func run() async throws {
        let session: ResolverSession
        do {
            session = try await providerOptions.start()
        } catch let error as ValidationError {
            ResolutionOutput.warn("error: \(error.message)")
            throw ExitCode(2)
        }
        let wanted = family.flatMap(AddressFamily.init(rawValue:))
        // Names resolve side by side; the output keeps the order they were given in.
        let results = await withTaskGroup(of: (Int, HostResolution).self) { group in
            for (index, host) in hosts.enumerated() {
                group.addTask { (index, await session.cache.resolve(host, family: wanted)) }
            }
            var ordered: [(Int, HostResolution)] = []
            for await result in group { ordered.append(result) }
            return ordered.sorted { $0.0 < $1.0 }.map(\.1)
        }
        await session.close()
        if format == "json" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(results), as: UTF8.self))
        } else {
            print("HTTPDNS: \(TerminalText.escaped(session.providerDescription))")
            print(ResolutionTable.render(results))
        }
        let unanswered = results.filter {
            $0.system.ipv4.isEmpty && $0.system.ipv6.isEmpty && $0.httpdns.ipv4.isEmpty && $0.httpdns.ipv6.isEmpty
        }
        if !unanswered.isEmpty { throw ExitCode(1) }
    }
}

/// The `resolve` table: one aligned row per name, then notes for failures and refused junk.
enum ResolutionTable {
    static func render(_ results: [HostResolution]) -> String {
        let header = ["HOST", "SYSTEM DNS", "MS", "HTTPDNS", "TTL", "MS", "SOURCE", "AGREEMENT"]
        var rows: [[String]] = []
        var notes: [String] = []
        for r in results {
            let system = r.system.error == nil ? addresses(r.system.ipv4 + r.system.ipv6) : "failed"
            let httpdnsIPs = r.httpdns.ipv4 + r.httpdns.ipv6
            let httpdns =
                r.httpdns.error == nil || r.httpdns.source == .systemFallback ? addresses(httpdnsIPs) : "failed"
            rows.append(
                [
                    r.host, system, milliseconds(r.system.ms), httpdns,
                    r.httpdns.error == nil || r.httpdns.source == .systemFallback ? "\(r.httpdns.ttl)s" : "-",
                    milliseconds(r.httpdns.ms), r.httpdns.source.rawValue, r.agreement.rawValue,
                ].map(TerminalText.escaped))
            if let error = r.system.error { notes.append("\(r.host): \(error)") }
            if let error = r.httpdns.error {
                let fallback = r.httpdns.source == .systemFallback ? " (answered by system DNS instead)" : ""
                notes.append("\(r.host): HTTPDNS: \(error)\(fallback)")
            }
        }
        // Answers and errors come from outside: escaped above, measured in cells.
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], TerminalText.width(cell)) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                // Numbers right-aligned, text left-aligned.
                let pad = String(repeating: " ", count: widths[i] - TerminalText.width(cell))
                return [2, 4, 5].contains(i) ? pad + cell : cell + pad
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        var out = [line(header)] + rows.map(line)
        if !notes.isEmpty { out += [""] + notes.map(TerminalText.escaped) }
        return out.joined(separator: "\n")
    }

    static func addresses(_ ips: [String]) -> String { ips.isEmpty ? "(none)" : ips.joined(separator: ", ") }

    static func milliseconds(_ ms: Double) -> String { String(format: "%.1f", ms) }
}

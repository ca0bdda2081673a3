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
    var family: AddressFamily?

    @Option(help: "Output: table or json.")
    var format: TableOrJSON = .table

    @OptionGroup(title: "Provider options")
    var providerOptions: ProviderOptions

    func validate() throws {
        if hosts.isEmpty { throw ValidationError("give at least one host name") }
        for host in hosts where host.isEmpty || host.contains("/") || host.contains(" ") {
            throw ValidationError("'\(host)' is not a host name (give names, not URLs)")
        }
    }

    func run() async throws {
        let session: ResolverSession
        do {
            session = try await providerOptions.start()
        } catch let error as ValidationError {
            throw UsageError(error.message)
        }
        let wanted = family
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
        if format == .json {
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
            if r.httpdns.error == nil, r.httpdns.server != nil || r.httpdns.clientIP != nil || r.httpdns.notes != nil {
                var said: [String] = []
                if let server = r.httpdns.server { said.append("answered by service IP \(server)") }
                if let clientIP = r.httpdns.clientIP { said.append("it judged this client as \(clientIP)") }
                said += r.httpdns.notes ?? []
                notes.append("\(r.host): HTTPDNS \(said.joined(separator: "; "))")
            }
            if let error = r.httpdns.error {
                let fallback = r.httpdns.source == .systemFallback ? " (answered by system DNS instead)" : ""
                notes.append("\(r.host): HTTPDNS: \(error)\(fallback)")
            }
        }
        // Numbers right-aligned, text left-aligned.
        var out = TextTable.lines(header: header, rows: rows, rightAligned: [2, 4, 5])
        if !notes.isEmpty { out += [""] + notes }
        return out.joined(separator: "\n")
    }

    static func addresses(_ ips: [String]) -> String { ips.isEmpty ? "(none)" : ips.joined(separator: ", ") }

    static func milliseconds(_ ms: Double) -> String { String(format: "%.1f", ms) }
}

// `resolve --all-providers`: every provider of `[[providers]]` (with --lab, the lab's four) asked
// for each name at once, beside the system column, as a table or JSON, with agreements marked.
import Composition
import ConfigurationSources
import FoundationEssentials
import NameResolution
import Probe
import TerminalText

enum CompareProviders {
    /// Compares the providers for each host and prints the result.
    ///
    /// - Returns: whether every host got an answer from at least one provider.
    static func run(
        hosts: [String], family: AddressFamily?, format: TableOrJSON, pretty: Bool?, session: ResolverSession
    ) async throws -> Bool {
        let configuration = session.configuration.resolver
        let providers = ComparedProvider.build(configuration.providers, base: configuration)
        let families = (family ?? configuration.family).concrete()
        let system = SystemResolver(dnsServer: configuration.dnsServer)
        var results: [ProviderComparison] = []
        for host in hosts {
            results.append(
                await ProviderComparison.run(
                    host, providers: providers, system: system, families: families,
                    timeout: .seconds(configuration.timeout)))
        }
        if format == .json {
            print(
                String(
                    decoding: ProbeJSON.escapingSeparators(try JSONOutput.encoder(pretty: pretty).encode(results)),
                    as: UTF8.self))
        } else {
            print(results.map { tableLines($0).joined(separator: "\n") }.joined(separator: "\n\n"))
        }
        return results.allSatisfy { $0.providers.contains { $0.error == nil } }
    }

    /// The table of one comparison: a row per provider and one for the system column, then the
    /// summary and each failure's reason. Agreement is in letters and words, never colour alone.
    static func tableLines(_ comparison: ProviderComparison) -> [String] {
        let header = ["PROVIDER", "KIND", "ANSWER", "TTL", "MS", "CIP", "AGREE", "VS SYSTEM"]
        var rows: [[String]] = []
        var notes: [String] = []
        for row in comparison.providers {
            rows.append(
                [
                    row.name, row.kind.rawValue, row.error == nil ? ResolutionTable.addresses(row.addresses) : "failed",
                    row.ttl?.shown ?? "-", ResolutionTable.milliseconds(row.ms), row.clientIP?.text ?? "-",
                    row.group ?? "-", row.vsSystem.rawValue,
                ].map(TerminalText.escaped))
            if let error = row.error { notes.append("\(row.name) (\(row.endpoint)): \(error.sentence)") }
        }
        let system = comparison.system
        rows.append(
            [
                "system", system.resolver.label,
                system.error == nil ? ResolutionTable.addresses(system.ipv4 + system.ipv6) : "failed",
                "-", ResolutionTable.milliseconds(system.ms), "-", comparison.systemGroup ?? "-", "-",
            ].map(TerminalText.escaped))
        if let error = system.error { notes.append("system: \(error)") }
        var lines = ["\(TerminalText.escaped(comparison.host)): \(TerminalText.escaped(comparison.summary))"]
        lines += TextTable.lines(header: header, rows: rows, rightAligned: [3, 4], indent: "  ")
        lines += notes.map { "  " + TerminalText.escaped($0) }
        return lines
    }
}

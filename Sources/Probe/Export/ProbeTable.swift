// The human table `probe` prints: per scenario the phases as httpstat shows them (DNS, connect,
// TLS, first byte, total), colour on a terminal, sentences wrapped to its width, skips on one line.
import FoundationEssentials
import FoundationGaps
import TerminalText

/// How the table is laid out: for a terminal (its width, colour) or for a file (neither).
public struct TableStyle: Sendable, Equatable {
    /// Cells to wrap sentences at; nil writes each sentence on one line (a file, a pipe).
    public var width: Int?
    /// ANSI colours for the outcomes and the verdict.
    public var color: Bool

    public init(width: Int? = nil, color: Bool = false) {
        self.width = width
        self.color = color
    }

    /// No wrapping, no colour: what a file or a pipe gets.
    public static let plain = TableStyle()
}

/// Writes reports as the table.
public enum ProbeTable {
    /// The line above a table that names what answered: the provider with its profile and cipher
    /// (the provider's name carries them: `alicloud (signed, aes-cbc, sdk ios-3.4)`) and where it
    /// points, so a table read later still says which service and which wire it came from.
    ///
    /// - Parameter provider: the provider and its endpoint, as the session describes them.
    public static func heading(provider: String) -> String {
        "provider: " + TerminalText.escaped(provider) + "\n"
    }

    /// One report as its table block (its URL, resolution, one row per attempt made, the skipped
    /// scenarios on one line, the verdict), ending with an empty line.
    public static func render(_ report: URLReport, style: TableStyle = .plain) -> String {
        var out = TerminalText.escaped(report.url) + "\n"
        out += sentence("resolution: ", VerdictWriting.agreementNote(report.resolution), style)
        let made = report.attempts.filter { $0.outcome != .skipped }
        // No scenario got an address: the resolution line above says why, once; a row and the same
        // sentence per scenario said it three or four times more.
        let noAddress = !made.isEmpty && made.allSatisfy { $0.outcome == .dnsFailed }
        if noAddress {
            let scenarios = made.map(\.scenario.rawValue).joined(separator: ", ")
            out += sentence("dns-failed: ", "\(scenarios): no address to connect to", style)
        } else if !made.isEmpty {
            out += attemptTable(made, style)
        }
        let skipped = report.attempts.filter { $0.outcome == .skipped }
        if !skipped.isEmpty {
            // One line for all of them: a quarter of the rows were scenarios not tried.
            let reasons = skipped.map { "\($0.scenario.rawValue)" + ($0.error.map { " (\($0.sentence))" } ?? "") }
            let line = sentence("skipped: ", Self.unique(reasons).joined(separator: "; "), style)
            out += style.color ? dim(line) : line
        }
        let summary =
            noAddress
            ? "no direct technique works: no scenario got an address for \(report.host)" : report.verdict.summary
        let verdict = sentence("verdict: ", summary, style)
        out += style.color ? (report.verdict.works.isEmpty ? red(verdict) : green(verdict)) : verdict
        for note in report.verdict.notes.dropFirst() { out += sentence("note: ", note, style) }
        if let ranking = report.ranking {
            out += ranking.tableLines().map { "  " + $0 + "\n" }.joined()
        }
        return out + "\n"
    }

    /// One row per attempt made, each failure's sentence under its row. The phases sit in the same
    /// rows when the terminal is wide enough, else in a second table under the first.
    private static func attemptTable(_ made: [Attempt], _ style: TableStyle) -> String {
        let rows = made.map { attempt -> [String] in
            let ip = attempt.ip.map { "\($0) (\(attempt.ipSource?.rawValue ?? "?"))" } ?? "-"
            let sni =
                attempt.hops.isEmpty || !attempt.url.lowercased().hasPrefix("https:") ? "-" : (attempt.sni ?? "none")
            let hops = attempt.hops.count > 1 ? "\(attempt.hops.count) hops" : ""
            return [
                attempt.scenario.rawValue, ip, sni, attempt.outcome.rawValue, attempt.status.map(String.init) ?? "-",
            ]
            .map(TerminalText.escaped) + phases(attempt) + [hops]
        }
        var painter: ((Int, Int, String) -> String)?
        if style.color { painter = { row, column, cell in column == 3 ? paint(cell, made[row].outcome) : cell } }
        let header = ["scenario", "ip", "sni", "outcome", "status"]
        let phaseHeader = ["dns", "connect", "tls", "1st byte", "total"]
        var lines = TextTable.lines(
            header: header + phaseHeader + [""], rows: rows, rightAligned: [5, 6, 7, 8, 9], indent: "  ",
            paint: painter)
        var phaseTable: [String] = []
        if let width = style.width, lines.contains(where: { TerminalText.width($0) > width }) {
            // Narrow: who answered and how it ended first, then the phases, a row per scenario.
            lines = TextTable.lines(
                header: header + [""], rows: rows.map { Array($0.prefix(5)) + [$0[10]] }, indent: "  ",
                paint: painter)
            phaseTable = TextTable.lines(
                header: ["phases (ms)"] + phaseHeader, rows: rows.map { [$0[0]] + $0[5..<10] },
                rightAligned: [1, 2, 3, 4, 5], indent: "  ")
        }
        var out = lines[0] + "\n"
        for (attempt, line) in zip(made, lines.dropFirst()) {
            out += line + "\n"
            if let error = attempt.error { out += sentence("", error.sentence, style, indent: "      ") }
        }
        return out + phaseTable.map { $0 + "\n" }.joined()
    }

    /// The phases as httpstat shows them, each its own duration in milliseconds: DNS, TCP
    /// connect, TLS handshake, first byte (the server's wait after the request), and the total
    /// of every hop; "-" for a phase that did not happen.
    static func phases(_ attempt: Attempt) -> [String] {
        let t = attempt.timings
        func span(_ end: Double?, after start: Double?) -> String {
            guard let end else { return "-" }
            return String(cFormat: "%.1f", max(0, end - (start ?? 0)))
        }
        let total =
            attempt.hops.isEmpty ? "-" : String(cFormat: "%.1f ms", attempt.hops.map(\.timings.total).reduce(0, +))
        return [
            span(t.nameLookup, after: nil), span(t.connect, after: t.nameLookup), span(t.tlsDone, after: t.connect),
            span(t.firstByte, after: t.preTransfer ?? t.tlsDone ?? t.connect), total,
        ]
    }

    /// `label` and `text` (escaped) after `indent`, wrapped to the style's width, the lines after
    /// the first two cells further in.
    private static func sentence(
        _ label: String, _ text: String, _ style: TableStyle, indent: String = "  "
    ) -> String {
        let safe = TerminalText.escaped(text)
        guard let width = style.width else { return indent + label + safe + "\n" }
        let lines = TerminalText.wrapped(label + safe, width: max(20, width - indent.count - 2))
        return lines.enumerated().map { index, line in indent + (index == 0 ? "" : "  ") + line + "\n" }.joined()
    }

    private static func unique(_ items: [String]) -> [String] {
        var seen = Set<String>()
        return items.filter { seen.insert($0).inserted }
    }

    private static func paint(_ cell: String, _ outcome: Outcome) -> String {
        switch outcome {
        case .ok: green(cell)
        case .httpStatus: yellow(cell)
        default: red(cell)
        }
    }

    private static func green(_ text: String) -> String { colored(text, "1;32") }
    private static func yellow(_ text: String) -> String { colored(text, "1;33") }
    private static func red(_ text: String) -> String { colored(text, "1;31") }
    private static func dim(_ text: String) -> String { colored(text, "2") }

    /// `text` in an SGR style (`1;32` bold green), each line on its own; a trailing newline stays
    /// outside the codes. The doctor's table colours its statuses with it too.
    public static func colored(_ text: String, _ code: String) -> String {
        let body = text.hasSuffix("\n") ? String(text.dropLast()) : text
        let colored = body.split(separator: "\n", omittingEmptySubsequences: false).map {
            "\u{1b}[\(code)m" + $0 + "\u{1b}[0m"
        }
        return colored.joined(separator: "\n") + (text.hasSuffix("\n") ? "\n" : "")
    }
}

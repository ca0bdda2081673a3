// The doctor's report as `ipdirect doctor` prints it: a row per check (status, title, what was
// seen, what to do under it), a verdict line per `--host`, and the tally; colours only on a terminal.

import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe
import TerminalText

// Absent values are null in the report's JSON, as in probe's: `"advice": null` on a pass.
extension DoctorFinding: AbsentAsNull {}

/// Writes a doctor report as text.
public enum DoctorTable {
    /// The whole report: a heading, one block per check, the hosts, the tally.
    ///
    /// - Parameters:
    ///   - report: the run's report.
    ///   - style: the width to wrap sentences at and whether to colour the statuses.
    /// - Returns: the text, ending with a newline. Every sentence is escaped: checks quote servers.
    public static func render(_ report: DoctorReport, style: TableStyle = .plain) -> String {
        var out = "ipdirect doctor: " + TerminalText.escaped(report.provider) + "\n"
        // A row per check, its advice a row under it (status and title blank) hanging past "→ ".
        var rows: [[String]] = []
        var statuses: [DoctorStatus?] = []
        for finding in report.findings {
            rows.append([statusWidthCell(finding.status), finding.check.title, TerminalText.escaped(finding.seen)])
            statuses.append(finding.status)
            if let advice = finding.advice, finding.status != .pass {
                rows.append(["", "", TerminalText.escaped("→ " + advice)])
                statuses.append(nil)
            }
        }
        // The sentences start in a column of their own, after the status and the longest title.
        let titleWidth = DoctorCheckID.allCases.map { $0.title.count }.max() ?? 0
        out += table(rows, statuses, minimumTitle: titleWidth, style)
        if !report.hosts.isEmpty {
            out += "hosts (every IP-direct way):\n"
            out += table(
                report.hosts.map {
                    [statusWidthCell($0.status), TerminalText.escaped($0.host), TerminalText.escaped($0.verdict)]
                },
                report.hosts.map(\.status), minimumTitle: 0, style)
        }
        out += tally(report) + "\n"
        return out
    }

    /// The rows through `TextTable`: statuses coloured after measuring, the last column wrapped
    /// (hanging 2 cells on a row without a status: advice and evidence). The audit's report too.
    ///
    /// - Parameters:
    ///   - rows: status, title, sentence; a nil status marks a row under the one before.
    ///   - minimumTitle: the title column's width, so the sentences start in one column.
    public static func table(
        _ rows: [[String]], _ statuses: [DoctorStatus?], minimumTitle: Int, _ style: TableStyle
    ) -> String {
        TextTable.lines(
            header: nil, rows: rows, indent: "  ",
            paint: { row, column, cell in
                guard column == 0, let status = statuses[row] else { return cell }
                return colored(cell, status, style)
            },
            minimumWidths: [0: statusWidth, 1: minimumTitle],
            wrap: TextTable.LastColumnWrap(width: style.width) { row in statuses[row] == nil ? 2 : 0 }
        ).map { $0 + "\n" }.joined()
    }

    /// `3 pass, 1 warn, 1 fail, 3 skipped in 2.4 s: exit 3`.
    static func tally(_ report: DoctorReport) -> String {
        let statuses = report.findings.map(\.status) + report.hosts.map(\.status)
        let counts = DoctorStatus.allCases.compactMap { status -> String? in
            let count = statuses.filter { $0 == status }.count
            return count == 0 ? nil : "\(count) \(status.rawValue)"
        }
        return counts.joined(separator: ", ") + " in \(elapsed(report.durationMs)): exit \(report.exitCode)"
    }

    /// A duration as a person reads it: `12 ms` under a second, `1.4 s` from there.
    public static func elapsed(_ milliseconds: Double) -> String {
        milliseconds < 1000 ? String(cFormat: "%.0f ms", milliseconds) : String(cFormat: "%.1f s", milliseconds / 1000)
    }

    /// The cells a status takes: the longest status's width.
    static let statusWidth = DoctorStatus.allCases.map(\.rawValue.count).max() ?? 0

    /// A status padded to one width and coloured when the style says so (green pass, dim skipped,
    /// yellow warn, red fail), for the table and the progress lines alike.
    public static func statusCell(_ status: DoctorStatus, _ style: TableStyle) -> String {
        colored(statusWidthCell(status), status, style)
    }

    /// A status padded to the longest status's width.
    private static func statusWidthCell(_ status: DoctorStatus) -> String {
        TerminalText.padded(status.rawValue, to: statusWidth)
    }

    /// `cell` in its status's colour when the style says so.
    private static func colored(_ cell: String, _ status: DoctorStatus, _ style: TableStyle) -> String {
        guard style.color else { return cell }
        switch status {
        case .pass: return ProbeTable.colored(cell, "1;32")
        case .skipped: return ProbeTable.colored(cell, "2")
        case .warn: return ProbeTable.colored(cell, "1;33")
        case .fail: return ProbeTable.colored(cell, "1;31")
        }
    }
}

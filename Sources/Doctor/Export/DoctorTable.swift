// The doctor's report as `ipdirect doctor` prints it: a row per check (status, title, what was
// seen, what to do under it), a verdict line per `--host`, and the tally; colours only on a terminal.

import CurlTransport
import Foundation
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
        let titleWidth = DoctorCheckID.allCases.map { $0.title.count }.max() ?? 0
        // The sentences start in a column of their own, after the status and the title.
        let indent = String(repeating: " ", count: 2 + statusWidth + 2 + titleWidth + 2)
        for finding in report.findings {
            let head =
                "  " + statusCell(finding.status, style) + "  "
                + TerminalText.padded(finding.check.title, to: titleWidth)
                + "  "
            out += block(head: head, indent: indent, finding.seen, style)
            if let advice = finding.advice, finding.status != .pass {
                out += block(head: indent, indent: indent + "  ", "→ " + advice, style)
            }
        }
        if !report.hosts.isEmpty {
            out += "hosts (every IP-direct way):\n"
            let hostWidth = report.hosts.map { TerminalText.width(TerminalText.escaped($0.host)) }.max() ?? 0
            let hostIndent = String(repeating: " ", count: 2 + statusWidth + 2 + hostWidth + 2)
            for host in report.hosts {
                let head =
                    "  " + statusCell(host.status, style) + "  "
                    + TerminalText.padded(TerminalText.escaped(host.host), to: hostWidth) + "  "
                out += block(head: head, indent: hostIndent, host.verdict, style)
            }
        }
        out += tally(report) + "\n"
        return out
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
        milliseconds < 1000 ? String(format: "%.0f ms", milliseconds) : String(format: "%.1f s", milliseconds / 1000)
    }

    /// `head` then `text` (escaped), wrapped to the style's width with the lines after the first
    /// under the text's first column.
    private static func block(head: String, indent: String, _ text: String, _ style: TableStyle) -> String {
        let safe = TerminalText.escaped(text)
        guard let width = style.width else { return head + safe + "\n" }
        let lines = TerminalText.wrapped(safe, width: max(20, width - indent.count - 1))
        return lines.enumerated().map { index, line in (index == 0 ? head : indent) + line + "\n" }.joined()
    }

    /// The cells a status takes: the longest status's width.
    static let statusWidth = DoctorStatus.allCases.map(\.rawValue.count).max() ?? 0

    /// A status padded to one width and coloured when the style says so (green pass, dim skipped,
    /// yellow warn, red fail), for the table and the progress lines alike.
    public static func statusCell(_ status: DoctorStatus, _ style: TableStyle) -> String {
        let cell = TerminalText.padded(status.rawValue, to: statusWidth)
        guard style.color else { return cell }
        switch status {
        case .pass: return ProbeTable.colored(cell, "1;32")
        case .skipped: return ProbeTable.colored(cell, "2")
        case .warn: return ProbeTable.colored(cell, "1;33")
        case .fail: return ProbeTable.colored(cell, "1;31")
        }
    }
}

// The audit as `ipdirect audit` prints it: the setup an app needs when the run starts, and the
// report when it ends (a row per trap, its advice and evidence under it, the tally).
import Doctor
import FoundationEssentials
import Probe
import TerminalText

// Absent values are null in the report's JSON, as in the doctor's: `"advice": null` on a pass.
extension AuditFinding: AbsentAsNull {}

/// Writes an audit's setup and report as text.
public enum AuditTable {
    /// Evidence lines shown under a finding that did not pass, the latest (the JSON report has them all).
    static let evidenceShown = 4

    /// What the app needs, for a person at a terminal.
    public static func setup(_ setup: AuditSetup) -> String {
        var out = "ipdirect audit: run \(setup.token). Point the app at these, use it, then Ctrl-C for the report.\n\n"
        var rows = setup.httpdns.sorted { $0.key < $1.key }.map { ["HTTPDNS \($0.key)", $0.value] }
        rows += [
            ["HTTPDNS over TLS", setup.httpdnsTLS], ["account / secret", "\(setup.account) / \(setup.secret)"],
            ["system DNS", "\(setup.dns) (UDP and TCP)"], ["CA (PEM)", setup.caPEM], ["CA (DER)", setup.caDER],
            ["proxy", setup.proxy],
        ]
        out += TextTable.lines(header: nil, rows: rows.map { $0.map(TerminalText.escaped) }, indent: "  ")
            .map { $0 + "\n" }.joined()
        out += "\nTraps (NAME is each URL's host):\n"
        for trap in setup.traps {
            out += "  \(trap.trap.rawValue)  \(trap.urls.joined(separator: " "))\n      \(trap.asks)\n"
        }
        return out
    }

    /// The whole report: a heading, one block per trap, the tally.
    ///
    /// - Returns: the text, ending with a newline; every sentence escaped (evidence quotes clients).
    public static func render(_ report: AuditReport, style: TableStyle = .plain) -> String {
        var out = "ipdirect audit: run \(TerminalText.escaped(report.token))\n"
        var rows: [[String]] = []
        var statuses: [AuditStatus?] = []
        for finding in report.findings {
            rows.append([
                TerminalText.padded(finding.status.label, to: statusWidth), finding.trap.title,
                TerminalText.escaped(finding.seen),
            ])
            statuses.append(finding.status)
            guard finding.status != .pass else { continue }
            if let advice = finding.advice {
                rows.append(["", "", TerminalText.escaped("→ " + advice)])
                statuses.append(nil)
            }
            guard finding.status != .notExercised else { continue }
            // The latest lines: where a client went wrong comes after what led to it.
            if finding.evidence.count > evidenceShown {
                rows.append(["", "", "· … \(finding.evidence.count - evidenceShown) earlier in --format json"])
                statuses.append(nil)
            }
            for line in finding.evidence.suffix(evidenceShown) {
                rows.append(["", "", TerminalText.escaped("· " + line)])
                statuses.append(nil)
            }
        }
        let titleWidth = AuditTrapID.allCases.map(\.title.count).max() ?? 0
        out += DoctorTable.table(rows, statuses.map { $0?.doctorStatus }, minimumTitle: titleWidth, style)
        out += tally(report) + "\n"
        return out
    }

    /// `4 pass, 1 warn, 2 fail, 3 not exercised in 12.4 s: exit 3`.
    static func tally(_ report: AuditReport) -> String {
        let counts = AuditStatus.allCases.compactMap { status -> String? in
            let count = report.findings.filter { $0.status == status }.count
            return count == 0 ? nil : "\(count) \(status.label)"
        }
        return counts.joined(separator: ", ") + " in \(DoctorTable.elapsed(report.durationMs)): exit \(report.exitCode)"
    }

    static let statusWidth = AuditStatus.allCases.map(\.label.count).max() ?? 0
}

extension AuditReport {
    /// The report as JSON in the doctor's conventions (`ProbeExport.document`), newline-ended.
    ///
    /// - Parameter pretty: indented with sorted keys, for reading; one line otherwise.
    public func json(pretty: Bool = true) -> Data {
        (ProbeExport.document(self, pretty: pretty) ?? Data("{}".utf8)) + Data("\n".utf8)
    }
}

extension AuditSetup {
    /// The setup as one JSON line.
    public func jsonLine() -> Data {
        (ProbeExport.document(self, pretty: false) ?? Data("{}".utf8)) + Data("\n".utf8)
    }
}

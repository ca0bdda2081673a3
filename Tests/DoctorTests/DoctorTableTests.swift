// The doctor's table as a user reads it: a row per check with the advice under it, server text
// escaped (a check quotes what a server said), sentences wrapped under their column on a terminal.

import Doctor
import Foundation
import Probe
import Testing

@Suite struct DoctorTableTests {
    private let report = DoctorReport(
        startedAt: Date(), durationMs: 2400, provider: "alicloud at https://203.107.1.1",
        findings: [
            DoctorFinding(
                check: .clock, status: .fail, seen: "The service said \u{1B}[2Jcleared.", advice: "Set the clock."),
            DoctorFinding(check: .ipStack, status: .pass, seen: "Dual-stack.", advice: "never shown on a pass"),
        ],
        hosts: [
            DoctorHostProbe(
                host: "api.example.com", url: "https://api.example.com/", status: .pass, verdict: "use direct-sni")
        ])

    @Test("rows in check order, advice under a failing row only, server text escaped, hosts and the tally after")
    func rowsAdviceAndEscaping() {
        let text = DoctorTable.render(report)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines[1].hasPrefix("  pass     IP stack"))
        #expect(lines[2].hasPrefix("  fail     Clock"))
        #expect(lines[2].contains("The service said \\x1b[2Jcleared."))
        #expect(!text.contains("\u{1B}"))
        #expect(lines[3].trimmingCharacters(in: .whitespaces) == "→ Set the clock.")
        #expect(!text.contains("never shown on a pass"))
        #expect(text.contains("  pass     api.example.com  use direct-sni"))
        #expect(lines.last == "2 pass, 1 fail in 2.4 s: exit 3")
    }

    @Test("on a terminal: the statuses coloured, a long sentence wrapped under its column")
    func colourAndWrapping() {
        var long = report
        // Findings are kept in check order: the clock's is the second.
        long.findings[1].seen = Array(repeating: "word", count: 30).joined(separator: " ")
        let text = DoctorTable.render(long, style: TableStyle(width: 60, color: true))
        #expect(text.contains("\u{1B}[1;31mfail   \u{1B}[0m"))
        let clock = text.split(separator: "\n").drop { !$0.contains("Clock") }
        let visible = clock.prefix(3).map {
            $0.replacingOccurrences(of: "\u{1B}[1;31m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
        }
        #expect(visible.allSatisfy { $0.count <= 60 }, "\(visible)")
        #expect(clock.dropFirst().first?.hasPrefix(String(repeating: " ", count: 34) + "word") == true)
    }
}

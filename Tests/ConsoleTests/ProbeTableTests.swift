// `probe`'s table as a person reads it: the phases of each attempt as httpstat shows them, the
// skipped scenarios on one line, sentences wrapped to the terminal, colour only when asked.
import Foundation
import NameResolution
import Probe
import Testing

@Suite struct ProbeTableTests {
    /// The console's fixture report, with a scenario that was not tried.
    static var report: URLReport {
        var report = ConsoleFixtures.report
        report.attempts.insert(
            Attempt(
                url: report.url, scenario: .directHTTP, outcome: .skipped,
                error: "an https URL: plain http is not tried"),
            at: 1)
        return report
    }

    @Test(
        "the table at 80 and 120 columns, with and without colour, matches its snapshot and fits",
        arguments: [(80, false), (80, true), (120, false), (120, true)])
    func snapshot(width: Int, color: Bool) {
        let text = ProbeTable.render(Self.report, style: TableStyle(width: width, color: color))
        Snapshot.checkText(
            text.replacingOccurrences(of: "\u{1b}", with: "␛"), named: "probe-table-\(width)\(color ? "-color" : "")")
        let plain = text.replacingOccurrences(of: "\u{1b}\\[[0-9;]*m", with: "", options: .regularExpression)
        for line in plain.split(separator: "\n") {
            #expect(line.count <= width, "wider than \(width): \(line)")
        }
        #expect(text.contains("\u{1b}[") == color)
    }

    @Test("each attempt shows its phases (DNS, connect, TLS, first byte, total); skipped ones fold into one line")
    func phasesAndSkips() throws {
        let text = ProbeTable.render(Self.report)
        let lines = text.split(separator: "\n").map(String.init)
        let header = try #require(lines.first { $0.contains("scenario") })
        for phase in ["dns", "connect", "tls", "1st byte", "total"] {
            #expect(header.contains(phase), "\(header)")
        }
        #expect(lines.filter { $0.contains("direct-http ") || $0.contains("direct-http (") }.count == 1, "\(text)")
        #expect(lines.contains("  skipped: direct-http (an https URL: plain http is not tried)"), "\(text)")
        #expect(!lines.contains { $0.hasPrefix("  direct-http ") }, "a skipped scenario has no row of its own")
    }
}

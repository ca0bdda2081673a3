// The doctor view in the real binary under tmux against the lab: D opens it, the rows fill in
// until none is running, e writes the report as JSON, which says what `ipdirect doctor --lab` says.
import Doctor
import Foundation
import TestSupport
import Testing

@Suite("Doctor view end to end under tmux", .enabled(if: TmuxPane.available, "tmux is not installed"))
struct DoctorEndToEndTests {
    @Test("D runs every check against the lab, the rows fill in, e exports a report of eight findings")
    func doctorRun() async throws {
        let terminal = try await TmuxTerminal.console()
        defer { terminal.close() }
        let (pane, directory) = (terminal.pane, terminal.directory)
        try await pane.send("D")
        func rows(_ screen: String) -> [String] {
            screen.split(separator: "\n").map(String.init).filter { line in
                DoctorCheckID.allCases.contains { line.contains(" \($0.title) ") }
            }
        }
        // Not which status each check has (that depends on the checks written so far): the rows,
        // in order, until no row is running and the summary is there.
        let done = await pane.wait(seconds: 40) { screen in
            rows(screen).count == 8 && !rows(screen).contains { $0.contains("running") }
                && screen.contains("exit code")
        }
        let shown = rows(done)
        #expect(shown.count == 8, "\(done)")
        for (row, check) in zip(shown, DoctorCheckID.allCases) {
            #expect(row.contains(check.title), "\(done)")
        }
        #expect(!shown.contains { $0.contains("running") }, "\(done)")

        try await pane.send("e")
        let exported = await pane.wait(for: "Exported the doctor's report to")
        #expect(exported.contains(directory), "\(exported)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        let name = try #require(files.first { $0.hasPrefix("ipdirect-doctor-") && $0.hasSuffix(".json") }, "\(files)")
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        let findings = try Self.findings(data)
        #expect(findings.compactMap { $0["check"] as? String } == DoctorCheckID.allCases.map(\.rawValue))
        #expect(findings.allSatisfy { ($0["seen"] as? String)?.isEmpty == false })

        // The console asks what `ipdirect doctor --lab` asks: on a lab of its own, the command comes
        // to the same status for every check (whatever those are).
        let command = try await ChildProcess.run(Tmux.binary, ["doctor", "--lab", "--format", "json"], seconds: 120)
        let expected = try Self.statuses(Data(command.output.utf8))
        #expect(try Self.statuses(data) == expected, "console: \(findings)\ncommand: \(command.output)")

        try await pane.send("q")
        await pane.waitForExit()
        #expect(await pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("D after a probe of a hijacked name holds that name against HTTPDNS: DNS paths fails")
    func doctorAfterAProbeTakesTheProbedHost() async throws {
        let terminal = try await TmuxTerminal.console()
        defer { terminal.close() }
        let pane = terminal.pane
        try await pane.send("p")
        try await pane.type("hijacked.lab.test")
        try await pane.send("Enter")
        let probed = await pane.wait(seconds: 40) { $0.contains("Verdict:") }
        #expect(probed.contains("Verdict:"), "\(probed)")
        try await pane.send("D")
        let done = await pane.wait(seconds: 40) { screen in
            screen.contains("exit code") && !screen.contains("running")
        }
        let dnsPaths = done.split(separator: "\n").first { $0.contains(" \(DoctorCheckID.dnsPaths.title) ") }
        #expect(dnsPaths?.contains("fail") == true, "\(done)")
        try await pane.send("q")
    }

    /// A doctor report's findings, as JSON objects.
    static func findings(_ report: Data) throws -> [[String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: report) as? [String: Any])
        return try #require(object["findings"] as? [[String: Any]])
    }

    /// "check: status" for each finding of a report, in its order.
    static func statuses(_ report: Data) throws -> [String] {
        try findings(report).map { "\($0["check"] as? String ?? "?"): \($0["status"] as? String ?? "?")" }
    }
}

// The compare view and `[keys]` in the real binary under tmux: a remapped key opens the compare
// view on a probed lab name; a bad `[keys]` entry stops the start with its sentence and status 2.
import Foundation
import Testing

@Suite(
    "Compare view and [keys] end to end under tmux", .serialized,
    .enabled(if: TmuxPane.available, "tmux is not installed"))
struct CompareEndToEndTests {
    private func config(_ text: String) -> String { "persist_cache = false\n" + text + "\n" }

    @Test("a key remapped in [keys] opens the compare view: the lab's four providers and its hijacking DNS server")
    func remappedCompare() async throws {
        let terminal = try await TmuxTerminal.console(
            configuration: config("theme = \"light\"\n[keys]\ncompare-providers = \"C\""))
        defer { terminal.close() }
        let pane = terminal.pane
        try await pane.send("p")  // the host line opens on p; until then keys are obeyed
        try await pane.type("hijacked.lab.test")
        try await pane.send("Enter")
        _ = await pane.wait(for: "Verdict:")
        try await pane.send("v")  // no longer bound: nothing happens
        try await pane.send("C")
        let screen = await pane.wait { $0.contains("lab-doh") && $0.contains("DNS server") && !$0.contains("asking") }
        for name in ["lab-alicloud", "lab-alicloud-legacy", "lab-tencent", "lab-doh"] {
            let row = screen.split(separator: "\n").first { $0.hasPrefix(" \(name) ") }
            #expect(row?.contains("127.0.0.1") == true && row?.contains("A differs") == true, "\(screen)")
        }
        let system = screen.split(separator: "\n").first { $0.hasPrefix(" DNS server") }
        #expect(system?.contains("127.0.0.2") == true && system?.hasSuffix("B") == true, "\(screen)")
        #expect(screen.contains("the system column gave B"), "\(screen)")
        try await pane.send("?")
        #expect(await pane.wait(for: "[compare-providers]").contains("C      "))
        try await pane.send("q")
        await pane.waitForExit()
        #expect(await pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("a clash in [keys] stops the console before it draws, with the sentence and status 2")
    func clash() async throws {
        let terminal = try await TmuxTerminal.console(configuration: config("[keys]\nquit = \"r\""), firstScreen: false)
        defer { terminal.close() }
        let pane = terminal.pane
        await pane.waitForExit()
        let screen = await pane.screenAndHistory()
        #expect(screen.contains("'r' would mean both"), "\(screen)")
        #expect(screen.contains("IPDIRECT-EXITED-2"), "\(screen)")
    }
}

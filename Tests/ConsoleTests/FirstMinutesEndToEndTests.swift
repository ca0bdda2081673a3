// The real binary under tmux, pressed the way someone new to it does: q and ? on the first
// screen, Esc ? Esc p, Ctrl-U on the host line, and an export whose path can be read whole.
import Foundation
import TestSupport
import Testing

@Suite(
    "The first minutes in the console, end to end under tmux", .serialized,
    .enabled(if: TmuxPane.available, "tmux is not installed"))
struct FirstMinutesEndToEndTests {
    private func quit(_ pane: TmuxPane) async throws {
        try await pane.send("q")
        await pane.waitForExit()
        #expect(await pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("q on the first screen quits at once")
    func quitAtOnce() async throws {
        let terminal = try await TmuxTerminal.console(width: 80, height: 24)
        defer { terminal.close() }
        try await quit(terminal.pane)
    }

    @Test("? opens help; after Esc ? Esc, p opens the host line; Ctrl-U clears what was typed")
    func helpThenTyping() async throws {
        let terminal = try await TmuxTerminal.console(width: 80, height: 24)
        defer { terminal.close() }
        let pane = terminal.pane
        try await pane.send("?")
        let help = await pane.wait(for: "While typing")
        #expect(help.contains("While typing") && !help.contains("Host or URL: ?"), "\(help)")
        try await pane.send("Escape")
        try await pane.send("?")
        _ = await pane.wait(for: "While typing")
        try await pane.send("Escape")
        _ = await pane.wait(for: "Host or URL")
        try await pane.send("p")
        try await pane.type("wrong-name.lab.test")
        _ = await pane.wait(for: "wrong-name.lab.test")
        try await pane.send("C-u")
        try await pane.type("single.lab.test")
        try await pane.send("Enter")
        let probed = await pane.wait(for: "Verdict:")
        let title = probed.split(separator: "\n").first { $0.contains("single.lab.test") }.map(String.init) ?? ""
        #expect(title.contains("https://single.lab.test"), "\(probed)")
        #expect(!probed.contains("psingle") && !probed.contains("wrong-name"), "\(probed)")
        try await quit(pane)
    }

    @Test("e writes to export_dir and names the whole path at 80x24, on the status line and in events")
    func exportPathWhole() async throws {
        // A relative export_dir is taken from the directory the console started in.
        let terminal = try await TmuxTerminal.console(
            width: 80, height: 24, configuration: "persist_cache = false\nexport_dir = \"exports-of-the-team\"\n")
        defer { terminal.close() }
        let pane = terminal.pane
        let exports = terminal.directory + "/exports-of-the-team"
        try FileManager.default.createDirectory(atPath: exports, withIntermediateDirectories: true)
        try await pane.send("p")
        try await pane.type("sni-a.lab.test")
        try await pane.send("Enter")
        _ = await pane.wait(for: "Verdict:")
        try await pane.send("e")
        // Wrapped over lines, the path reads whole once the spaces and line ends are taken out.
        func joined(_ screen: String) -> String { screen.filter { !$0.isWhitespace } }
        let written = await pane.wait { joined($0).contains(".har") && $0.contains("Exported") }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: exports)) ?? []
        let jsonl = try #require(files.first { $0.hasSuffix(".jsonl") }, "nothing in export_dir: \(files)\n\(written)")
        #expect(joined(written).contains(exports + "/" + jsonl), "\(written)")
        try await pane.send("4")
        let events = await pane.wait { joined($0).contains(exports + "/" + jsonl) }
        #expect(joined(events).contains(exports + "/" + jsonl), "\(events)")
        try await quit(pane)
    }
}

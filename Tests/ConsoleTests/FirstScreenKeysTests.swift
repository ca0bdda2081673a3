// The keys a newcomer presses first, through the pure reducer and renderer: q and ? obeyed on
// the first screen, Esc that leaves and then clears the host line, readline's editing keys, a
// hint line that names help and quit everywhere, help that opens at its top, exports named whole.
import Console
import Foundation
import NameResolution
import Probe
import Testing

@Suite("The first screen's keys, the host line, hints, help and export paths")
struct FirstScreenKeysTests {
    private static let small = TerminalSize(width: 80, height: 24)
    private static let sizes = [small, TerminalSize(width: 120, height: 40)]

    private func press(_ state: inout ConsoleState, _ keys: Key...) {
        for key in keys { _ = reduce(into: &state, action: .key(key)) }
    }

    @Test("q on the first screen quits")
    func quitOnFirstScreen() {
        var state = ConsoleFixtures.emptyState()
        #expect(reduce(into: &state, action: .key(.character("q"))) == [.quit])
        #expect(state.quitting && state.input.isEmpty)
    }

    @Test("? on the first screen opens help")
    func helpOnFirstScreen() {
        var state = ConsoleFixtures.emptyState()
        press(&state, .character("?"))
        #expect(state.view == .help && state.input.isEmpty)
        #expect(render(state).text.contains("While typing"))
    }

    @Test("Esc, ?, Esc, then p opens the host line and types no p")
    func escapeHelpEscapeP() {
        var state = ConsoleFixtures.emptyState()
        press(&state, .escape, .character("?"), .escape, .character("p"))
        #expect(state.view == .probe && state.mode == .probeInput)
        #expect(state.input == "")
        ConsoleFixtures.send(&state, keys: "single.lab.test")
        #expect(reduce(into: &state, action: .key(.enter)) == [.probe(runID: 1, target: "single.lab.test")])
    }

    @Test("Esc leaves the host line with its text; a second Esc clears it; p takes it up again")
    func escapeTwice() {
        var state = ConsoleFixtures.emptyState()
        ConsoleFixtures.send(&state, keys: "pwrong.lab.test")
        press(&state, .escape)
        #expect(state.mode == .command && state.input == "wrong.lab.test")
        press(&state, .character("p"))
        #expect(state.mode == .probeInput && state.input == "wrong.lab.test")
        press(&state, .escape, .escape)
        #expect(state.mode == .command && state.input == "")
    }

    @Test("readline's keys edit the host line: Ctrl-A/E, Left/Right, Ctrl-U, Ctrl-W, Del")
    func readlineKeys() {
        var state = ConsoleFixtures.emptyState()
        ConsoleFixtures.send(&state, keys: "plab.test")
        press(&state, .control("a"))
        ConsoleFixtures.send(&state, keys: "sni-a.")
        #expect(state.input == "sni-a.lab.test")
        press(&state, .control("e"))
        ConsoleFixtures.send(&state, keys: "/")
        #expect(state.input == "sni-a.lab.test/")
        press(&state, .left, .left, .delete)
        #expect(state.input == "sni-a.lab.tes/")
        press(&state, .right)
        ConsoleFixtures.send(&state, keys: "t")
        #expect(state.input == "sni-a.lab.tes/t")
        press(&state, .left, .control("u"))
        #expect(state.input == "t")
        press(&state, .control("e"))
        ConsoleFixtures.send(&state, keys: " two")
        press(&state, .control("w"))
        #expect(state.input == "t ")
        press(&state, .control("u"))
        #expect(state.input == "")
    }

    @Test("Ctrl-C quits while the console asks to confirm a flush")
    func quitWhileConfirming() {
        var state = ConsoleFixtures.populatedState(size: Self.small)
        press(&state, .character("2"), .character("D"))
        #expect(reduce(into: &state, action: .key(.control("c"))) == [.quit])
    }

    @Test("the cursor is drawn where the next character goes")
    func cursorDrawn() {
        var state = ConsoleFixtures.emptyState()
        ConsoleFixtures.send(&state, keys: "pab")
        press(&state, .left)
        let buffer = render(state)
        let line = buffer.line(1)
        guard let typed = line.range(of: "ab") else {
            Issue.record("the typed text is not on the host line: \(line)")
            return
        }
        let column = typed.lowerBound.utf16Offset(in: line)
        #expect(buffer[column + 1, 1].style.reverse, "the cursor is not on the b: \(line)")
    }

    @Test("the hint line names help and quit on every view and while typing", arguments: sizes)
    func hintsNameHelpAndQuit(size: TerminalSize) {
        var states: [(String, ConsoleState)] = []
        var state = ConsoleFixtures.emptyState(size: size)
        states.append(("first screen", state))
        ConsoleFixtures.send(&state, keys: "psni-a")
        states.append(("typing a host", state))
        var populated = ConsoleFixtures.populatedState(size: size)
        press(&populated, .escape)
        for view in ["1", "2", "3", "4", "5"] {
            press(&populated, .character(Character(view)))
            states.append(("view \(view)", populated))
        }
        press(&populated, .character("3"), .enter)
        states.append(("trace detail", populated))
        press(&populated, .character("c"))
        states.append(("reproduce panel", populated))
        press(&populated, .escape, .escape, .character("/"))
        states.append(("typing a filter", populated))
        press(&populated, .escape, .character("2"), .character("D"))
        states.append(("asked to confirm", populated))
        for (name, state) in states {
            // The hint line is the last one not drawn reversed: a long message takes lines of its
            // own between it and the status bar.
            let buffer = render(state)
            let row = (0..<size.height).last { !buffer[0, $0].style.reverse } ?? 0
            let hint = buffer.line(row)
            #expect(hint.contains("help") && hint.contains("quit"), "\(name): \(hint)")
        }
    }

    @Test("help opens at its top, scrolls to its end, and Up moves at once from there", arguments: sizes)
    func helpScrolls(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        press(&state, .character("?"))
        let top = render(state)
        #expect(top.line(1).contains("While typing"), "\(top.text)")
        press(&state, .character("G"))
        let bottom = render(state)
        #expect(bottom.text.contains("[quit]"), "the last key is never shown:\n\(bottom.text)")
        press(&state, .up)
        #expect(render(state).text != bottom.text, "Up after G did not move")
        press(&state, .escape, .character("?"))
        #expect(render(state).text == top.text, "help reopened where it was left")
    }

    /// A path long enough not to fit beside the status fields at 80 columns.
    private static let exportPaths = [
        "/var/tmp/ipdirect-exports/a-team-directory/ipdirect-20261123-080000.jsonl",
        "/var/tmp/ipdirect-exports/a-team-directory/ipdirect-20261123-080000.har",
    ]

    /// The screen's text without spaces and line ends, so a path wrapped over lines reads whole.
    private func joined(_ buffer: CellBuffer) -> String {
        buffer.text.filter { !$0.isWhitespace }
    }

    @Test("the status line names an export's path whole, wrapped, never cut", arguments: sizes)
    func exportPathWhole(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(into: &state, action: .exported(Self.exportPaths))
        let text = joined(render(state))
        #expect(text.contains(Self.exportPaths[0]), "\(render(state).text)")
        #expect(text.contains("ipdirect-20261123-080000.har"), "\(render(state).text)")
    }

    @Test("e writes into the export directory, named by the clock")
    func exportIntoDirectory() {
        var state = ConsoleFixtures.populatedState(size: Self.small)
        state.exportDirectory = "/srv/exports"
        press(&state, .character("3"))
        let effects = reduce(into: &state, action: .key(.character("e")))
        guard case .export(let reports, let base) = effects.first else {
            Issue.record("e did not export: \(effects)")
            return
        }
        #expect(base == "/srv/exports/ipdirect-20261123-080000")
        #expect(!reports.isEmpty)
    }

    @Test("export_dir is made absolute: ~ is home, a relative path is under the working directory")
    func exportDirectoryAbsolute() {
        let working = FileManager.default.currentDirectoryPath
        #expect(ConsoleOptions.absoluteDirectory(nil) == working)
        #expect(ConsoleOptions.absoluteDirectory("") == working)
        #expect(ConsoleOptions.absoluteDirectory("out/") == working + "/out")
        #expect(ConsoleOptions.absoluteDirectory("/srv/exports/") == "/srv/exports")
        #expect(ConsoleOptions.absoluteDirectory("~/exports") == NSHomeDirectory() + "/exports")
        // As NSString's standardizingPath left them: `.`, `..` and empty components gone.
        #expect(ConsoleOptions.absoluteDirectory("~") == NSHomeDirectory())
        #expect(ConsoleOptions.absoluteDirectory("/srv/./old/../exports//x/") == "/srv/exports/x")
        #expect(ConsoleOptions.absoluteDirectory("/..") == "/")
        #expect(
            ConsoleOptions.absoluteDirectory("~root/exports")
                == ("~root/exports" as NSString).expandingTildeInPath)
    }

    @Test("a long message above the status bar keeps the selected trace in sight")
    func selectionStaysVisible() {
        var state = ConsoleFixtures.populatedState(size: Self.small)
        for index in 0..<40 {
            var attempt = ConsoleFixtures.attempts[index % 3]
            attempt.url = "https://host\(index).lab.test/"
            recordTrace(attempt, runID: 1, state: &state)
        }
        _ = reduce(into: &state, action: .message(""))
        press(&state, .character("3"), .character("G"))
        /// Whether a row of the list, above the hint line, is drawn selected (reversed).
        func selectionShown(_ buffer: CellBuffer) -> Bool {
            let hint = (0..<buffer.height).last { !buffer[0, $0].style.reverse } ?? 0
            return (1..<hint).contains { buffer[0, $0].style.reverse }
        }
        #expect(selectionShown(render(state)))
        _ = reduce(into: &state, action: .exported(Self.exportPaths))
        #expect(selectionShown(render(state)), "\(render(state).text)")
    }

    @Test("the events view records an export with its whole path", arguments: sizes)
    func exportInEvents(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(into: &state, action: .exported(Self.exportPaths))
        _ = reduce(into: &state, action: .message("something else since"))
        press(&state, .character("4"))
        let buffer = render(state)
        #expect(joined(buffer).contains(Self.exportPaths[0]), "\(buffer.text)")
        #expect(buffer.text.contains("export"), "\(buffer.text)")
    }
}

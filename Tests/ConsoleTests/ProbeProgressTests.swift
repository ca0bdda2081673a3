// `ipdirect probe`'s progress line as a person sees it under tmux: on the terminal while a batch
// runs, gone when it ends, and never written when stderr is a pipe.
import Foundation
import Testing

@Suite("probe progress line under tmux", .serialized, .enabled(if: TmuxPane.available, "tmux is not installed"))
struct ProbeProgressTests {
    @Test("a batch shows done/total on a terminal, clears it at the end, and writes none into a pipe")
    func progressOnTerminalOnly() async throws {
        // Four URLs of the lab's slow origin (3 s each, one at a time): a batch that runs for a while.
        let terminal = try await TmuxTerminal.start(height: 30) { directory in
            let probe =
                "XDG_CONFIG_HOME='\(directory)' XDG_CACHE_HOME='\(directory)' '\(Tmux.binary)' probe --lab "
                + "--scenario direct-sni --concurrency 1 --format jsonl slow.lab.test/1 slow.lab.test/2 slow.lab.test/3 slow.lab.test/4"
            return "cd '\(directory)' && read start; \(probe) > terminal.jsonl; echo TERMINAL-EXITED-$?; read go; "
                + "\(probe) 2>&1 | cat > piped.txt; echo PIPED-EXITED"
        }
        defer { terminal.close() }
        let (pane, directory) = (terminal.pane, terminal.directory)

        // Everything the pane is sent is kept from the start (tmux pipe-pane): the line is up only
        // while the batch runs, and on a loaded machine this test's captures can come further apart
        // than that (they missed it at load 22). The screen after the batch shows it cleared.
        let record = "cat >> '\(directory)/terminal.raw'"
        try await pane.tmux(["pipe-pane", "-o", "-t", pane.session, record], capture: false)
        try await pane.send("Enter")
        // The lab starts first (its CA, keys and listeners): slow under load and under `make asan`.
        // The waits end as soon as their text is there: a limit is headroom for a loaded machine.
        let ended = await pane.wait(seconds: 120) { $0.contains("TERMINAL-EXITED") }
        #expect(ended.contains("TERMINAL-EXITED-0"), "\(ended)")
        #expect(!ended.contains("/4 done"), "the progress line is still on screen:\n\(ended)")
        let raw = (try? String(contentsOfFile: directory + "/terminal.raw", encoding: .utf8)) ?? ""
        let drawn = raw.split(separator: "\r").map(String.init).filter { $0.contains("/4 done") }
        // Drawn while the batch ran (fewer than four done), not only at its end.
        #expect(drawn.contains { !$0.contains("4/4 done") }, "no progress line reached the terminal:\n\(raw)")
        let line = drawn.first ?? ""
        #expect(line.contains("ok") && line.contains("failed") && line.contains("elapsed"), "\(raw)")
        // The piped run starts once the screen has been read (Enter answers the shell's `read`).
        try await pane.send("Enter")

        // The piped run starts a lab of its own as well: the same headroom as the first.
        let piped = await pane.wait(seconds: 90) { $0.contains("PIPED-EXITED") }
        #expect(piped.contains("PIPED-EXITED"), "\(piped)")
        let text = (try? String(contentsOfFile: directory + "/piped.txt", encoding: .utf8)) ?? ""
        #expect(text.split(separator: "\n").count == 4, "four JSON lines and nothing else:\n\(text)")
        #expect(!text.contains("done ·") && !text.contains("\r"), "\(text)")
    }
}

// `ipdirect probe`'s progress line as a person sees it under tmux: on the terminal while a batch
// runs, gone when it ends, and never written when stderr is a pipe.
import Foundation
import Testing

@Suite("probe progress line under tmux", .serialized, .enabled(if: TmuxPane.available, "tmux is not installed"))
struct ProbeProgressTests {
    @Test("a batch shows done/total on a terminal, clears it at the end, and writes none into a pipe")
    func progressOnTerminalOnly() async throws {
        // Four URLs of the lab's slow origin (3 s each, one at a time): long enough to see the line
        // even while the other suites load the machine.
        let terminal = try await TmuxTerminal.start(height: 30) { directory in
            let probe =
                "XDG_CONFIG_HOME='\(directory)' XDG_CACHE_HOME='\(directory)' '\(Tmux.binary)' probe --lab "
                + "--scenario direct-sni --concurrency 1 --format jsonl slow.lab.test/1 slow.lab.test/2 slow.lab.test/3 slow.lab.test/4"
            return "cd '\(directory)' && \(probe) > terminal.jsonl; echo TERMINAL-EXITED-$?; read go; "
                + "\(probe) 2>&1 | cat > piped.txt; echo PIPED-EXITED"
        }
        defer { terminal.close() }
        let (pane, directory) = (terminal.pane, terminal.directory)

        // The lab starts first (its CA, keys and listeners): slow under load and under `make asan`.
        // Not settled: the line's rate and clock move while it is up, so two captures in a row may
        // never agree (under load, captures are far apart), and the line is gone once the batch ends.
        let running = await pane.wait(seconds: 90, settled: false) { $0.contains("/4 done") }
        let line = running.split(separator: "\n").first { $0.contains("/4 done") }.map(String.init) ?? ""
        #expect(line.contains("ok") && line.contains("failed") && line.contains("elapsed"), "\(running)")
        // The waits end as soon as their text is there: a limit is headroom for a loaded machine.
        let ended = await pane.wait(seconds: 90) { $0.contains("TERMINAL-EXITED") }
        #expect(ended.contains("TERMINAL-EXITED-0"), "\(ended)")
        #expect(!ended.contains("/4 done"), "the progress line is still on screen:\n\(ended)")
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

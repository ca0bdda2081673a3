// How every tmux end-to-end test begins: a scratch directory of its own, a tmux pane of a given
// size running the console (or another command) there, and, for the console, its first screen.
import Foundation
import TestSupport
import Testing

/// A tmux pane in a scratch directory of its own; `close()` stops tmux and removes the directory.
final class TmuxTerminal: Sendable {
    let pane: TmuxPane
    let scratch: ScratchDirectory
    /// The scratch directory the command runs in (its configuration, cache and exports go there).
    var directory: String { scratch.path }

    private init(pane: TmuxPane, scratch: ScratchDirectory) {
        self.pane = pane
        self.scratch = scratch
    }

    /// Starts `command(directory)` in a pane of `width` × `height`.
    ///
    /// - Parameters:
    ///   - configuration: when given, written to `config.toml` in the directory before the command starts.
    ///   - command: the shell line tmux runs, given the scratch directory.
    static func start(
        width: Int = 120, height: Int = 40, configuration: String? = nil, command: (_ directory: String) -> String
    ) async throws -> TmuxTerminal {
        let scratch = try ScratchDirectory("e2e")
        do {
            if let configuration {
                try configuration.write(toFile: scratch.file("config.toml"), atomically: true, encoding: .utf8)
            }
            let pane = try await TmuxPane(width: width, height: height, command: command(scratch.path))
            return TmuxTerminal(pane: pane, scratch: scratch)
        } catch {
            scratch.remove()
            throw error
        }
    }

    /// Starts the console against the lab (`EndToEndTests.command`), with `--config config.toml`
    /// when a configuration is given, and `extra` arguments.
    ///
    /// - Parameter firstScreen: wait for the prompt (`Host or URL`) before returning; a test of a
    ///   console that refuses to start passes false.
    /// - Throws: when the first screen does not come (the pane is closed first).
    static func console(
        width: Int = 120, height: Int = 40, configuration: String? = nil, extra: String = "", firstScreen: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TmuxTerminal {
        let terminal = try await start(width: width, height: height, configuration: configuration) { directory in
            let file = configuration == nil ? "" : "--config '\(directory)/config.toml' "
            return EndToEndTests.command(directory: directory, extra: file + extra)
        }
        guard firstScreen else { return terminal }
        do {
            // The console starts the lab first (its CA, keys and listeners): slow on a loaded machine,
            // as ProbeProgressTests says; the wait ends as soon as the prompt is there. When it does
            // not come, the wait's issue says what the pane showed and what the console was doing.
            try #require(
                await terminal.pane.wait(for: "Host or URL", seconds: 90, sourceLocation: sourceLocation)
                    .contains("Host or URL"),
                "the console did not start", sourceLocation: sourceLocation)
        } catch {
            terminal.close()
            throw error
        }
        return terminal
    }

    /// Stops tmux (in the background) and removes the directory.
    func close() {
        pane.close()
        scratch.remove()
    }
}

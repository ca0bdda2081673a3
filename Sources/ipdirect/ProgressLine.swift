// The one-line progress of a long `probe` batch on stderr (done/total, ok/failed, rate, elapsed,
// time left), redrawn in place at most ten times a second and cleared at the end.
import FoundationEssentials
import FoundationGaps
import NameResolution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A progress line on a terminal; every method does nothing when it is off.
///
/// Output to the same terminal goes through `clearedWhile` so the line never mixes with it.
final class ProgressLine: Sendable {
    private struct State {
        var done = 0
        var ok = 0
        var failed = 0
        var shown = false
        var lastDraw: Double = 0
        var stopped = false
    }

    private let total: Int
    private let enabled: Bool
    private let start = Date()
    private let state = Locked(State())

    /// - Parameters:
    ///   - total: URLs in the batch.
    ///   - enabled: whether to show it (stderr is a terminal and no `--quiet`).
    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    /// Whether stderr is a terminal (where a redrawn line makes sense).
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Counts one finished URL: `ok` when it has a working direct scenario.
    func finished(ok: Bool) {
        guard enabled else { return }
        state.withLock { state in
            state.done += 1
            if ok { state.ok += 1 } else { state.failed += 1 }
            draw(&state, force: state.done == total)
        }
    }

    /// Redraws when a tenth of a second has passed since the last drawing; called from a timer so
    /// elapsed time and rate move on while no URL finishes.
    func tick() {
        guard enabled else { return }
        state.withLock { draw(&$0, force: false) }
    }

    /// Runs `body` (which writes to the terminal) with the line out of the way, then redraws it.
    func clearedWhile(_ body: () -> Void) {
        guard enabled else { return body() }
        state.withLock { state in
            erase(&state)
            body()
            draw(&state, force: true)
        }
    }

    /// Clears the line for good.
    func stop() {
        guard enabled else { return }
        state.withLock { state in
            erase(&state)
            state.stopped = true
        }
    }

    private func erase(_ state: inout State) {
        guard state.shown else { return }
        Self.put("\r\u{1B}[2K")
        state.shown = false
    }

    private func draw(_ state: inout State, force: Bool) {
        guard !state.stopped else { return }
        let now = Date().timeIntervalSince(start)
        guard force || now - state.lastDraw >= 0.1 else { return }
        state.lastDraw = now
        let rate = now > 0 ? Double(state.done) / now : 0
        let left = rate > 0 ? Double(total - state.done) / rate : nil
        var line =
            "\(state.done)/\(total) done · \(state.ok) ok · \(state.failed) failed · "
            + String(cFormat: "%.0f/s", rate) + " · \(Self.clock(now)) elapsed"
        if let left, state.done < total { line += " · ~\(Self.clock(left)) left" }
        let width = Self.terminalWidth
        if line.count >= width { line = String(line.prefix(max(0, width - 1))) }
        Self.put("\r\u{1B}[2K" + line)
        state.shown = true
    }

    /// `m:ss`, or `h:mm:ss` past an hour.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        return h > 0 ? String(cFormat: "%d:%02d:%02d", h, m, s) : String(cFormat: "%d:%02d", m, s)
    }

    private static var terminalWidth: Int { TerminalSize.columns(of: STDERR_FILENO) ?? 80 }

    private static func put(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(STDERR_FILENO, &bytes, bytes.count)
    }
}

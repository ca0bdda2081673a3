// The doctor's progress on a terminal's stderr: a line per check as it finishes, taken off the
// screen again when the table follows on the same terminal, so the report stands alone there.
import Doctor
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Progress lines on stderr; every method does nothing when stderr is not a terminal.
final class DoctorProgress: Sendable {
    private let enabled: Bool
    private let style: TableStyle
    /// The lines written so far, to erase them.
    private let written = Locked(0)

    /// - Parameter color: `--color`, applied as to a terminal (progress only goes to one).
    init(color: ColorChoice) {
        enabled = ProgressLine.stderrIsTerminal
        style = TableStyle(color: color.enabled(terminal: true))
    }

    /// Says what the run is about to do.
    func start(checks: Int, within seconds: Double) {
        put("doctor: \(checks) checks at once, at most \(ResolutionError.format(seconds)) s")
    }

    /// One line for a finished check: its status, title and time.
    func finished(_ finding: DoctorFinding) {
        put(
            "  \(DoctorTable.statusCell(finding.status, style))  \(finding.check.title) "
                + "(\(DoctorTable.elapsed(finding.durationMs)))")
    }

    /// Takes the lines off the screen when standard output is a terminal too (the table then
    /// says it all); leaves them where the report goes elsewhere (a file, a pipe, `jq`).
    func clearIfTableFollows() {
        guard enabled, isatty(STDOUT_FILENO) == 1 else { return }
        let count = written.withLock { $0 }
        // Only as far up as any terminal is tall: the run writes a handful of lines.
        guard count > 0, count <= 12 else { return }
        Self.write("\u{1B}[\(count)A\u{1B}[J")
    }

    private func put(_ line: String) {
        guard enabled else { return }
        written.withLock { count in
            Self.write(line + "\n")
            count += 1
        }
    }

    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(STDERR_FILENO, &bytes, bytes.count)
    }
}

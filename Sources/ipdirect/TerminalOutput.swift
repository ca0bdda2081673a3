// What the command line's output looks like on a terminal: its width (for wrapping, the progress
// line) and whether to colour it (`--color never|auto|always`, NO_COLOR, TERM=dumb).
import ArgumentParser
import FoundationEssentials
import Probe

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--color`: colour the table always, never, or when standard output is a terminal.
enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case never, auto, always

    /// Whether to colour output that goes to a terminal (`terminal`) or elsewhere, given the
    /// environment: `auto` stays plain for NO_COLOR (any value but empty) and TERM=dumb.
    func enabled(terminal: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        switch self {
        case .never: false
        case .always: true
        case .auto: terminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        }
    }
}

/// The terminal's size as the kernel reports it.
enum TerminalSize {
    /// The columns of the terminal on `descriptor`; nil when it is not a terminal.
    static func columns(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// How `probe` lays out its table on standard output: the terminal's width (or `COLUMNS`, as
    /// a terminal would set it) and colour as `--color` says.
    static func tableStyle(color: ColorChoice, toFile: Bool) -> TableStyle {
        let terminal = !toFile && isatty(STDOUT_FILENO) == 1
        let width =
            toFile
            ? nil : columns(of: STDOUT_FILENO) ?? ProcessInfo.processInfo.environment["COLUMNS"].flatMap { Int($0) }
        return TableStyle(width: width, color: color.enabled(terminal: terminal))
    }
}

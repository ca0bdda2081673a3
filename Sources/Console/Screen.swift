// The ncurses screen: copies cell buffers to the terminal (only the rows that changed) and
// turns key codes into keys. Owned by the one thread that runs the console loop.
import CNcurses
import FoundationEssentials
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the terminal sent.
enum TerminalInput {
    case key(Key)
    case resize(TerminalSize)
}

/// The terminal in ncurses mode. Not Sendable: created, used and ended on one thread.
final class Screen {
    private var previous: CellBuffer?
    private let useColor: Bool
    private var pairs: [CellColor: [CellColor: Int32]] = [:]
    private var nextPair: Int32 = 1

    /// Enters ncurses mode.
    ///
    /// - Parameter useColor: false for `NO_COLOR` and `--no-color`: attributes only.
    init(useColor: Bool) {
        CrashRestoration.saveModes()
        _ = initscr()
        terminalState.active = true
        CrashRestoration.install()
        // raw: Ctrl-C arrives as a key, so quitting always goes through the same clean path.
        raw()
        noecho()
        nonl()
        _ = keypad(cnc_stdscr(), true)
        _ = nodelay(cnc_stdscr(), true)
        _ = set_escdelay(25)
        _ = curs_set(0)
        // The mouse stays with the terminal (no mousemask), so text can be selected and copied.
        var color = useColor && has_colors()
        if color {
            color = start_color() == OK
            if color { _ = use_default_colors() }
        }
        self.useColor = color
    }

    /// The terminal's size now.
    var size: TerminalSize { TerminalSize(width: Int(cnc_cols()), height: Int(cnc_lines())) }

    /// Copies `buffer` to the terminal, redrawing only rows that differ from the last frame.
    func draw(_ buffer: CellBuffer) {
        // The last frame, when it has this one's size: only the rows that differ from it are drawn.
        let last = previous.flatMap { $0.width == buffer.width && $0.height == buffer.height ? $0 : nil }
        if last == nil { _ = erase() }
        for y in 0..<buffer.height where last.map({ buffer.rowDiffers(from: $0, row: y) }) ?? true {
            drawRow(buffer, y: y)
        }
        previous = buffer
        _ = refresh()
    }

    /// Forgets the last frame so the next draw repaints everything (after a resize).
    func invalidate() {
        previous = nil
        _ = clearok(cnc_stdscr(), true)
    }

    private func drawRow(_ buffer: CellBuffer, y: Int) {
        var x = 0
        // On the last row, leave the bottom-right cell alone: writing it may scroll the screen.
        let width = y == buffer.height - 1 ? buffer.width - 1 : buffer.width
        while x < width {
            let style = buffer[x, y].style
            var run = String.UnicodeScalarView()
            var end = x
            // A run ends at the right half of a wide character, so the next one starts at its
            // own column whatever width the terminal gave the wide character.
            while end < width, buffer[end, y].style == style, buffer[end, y].character != CellBuffer.continuation {
                run.append(buffer[end, y].character)
                end += 1
            }
            if run.isEmpty {
                x += 1
                continue
            }
            _ = cnc_attrset(attributes(style))
            let text = String(run)
            _ = text.withCString { cnc_mvaddnstr(Int32(y), Int32(x), $0, -1) }
            x = end
        }
        _ = cnc_attrset(cnc_attr_normal())
    }

    private func attributes(_ style: CellStyle) -> Int32 {
        var attr = cnc_attr_normal()
        if style.bold { attr |= cnc_attr_bold() }
        if style.reverse { attr |= cnc_attr_reverse() }
        if style.dim { attr |= cnc_attr_dim() }
        if useColor && (style.foreground != .default || style.background != .default) {
            attr |= cnc_color_pair(pair(style.foreground, style.background))
        }
        return attr
    }

    private func pair(_ foreground: CellColor, _ background: CellColor) -> Int32 {
        if let number = pairs[foreground]?[background] { return number }
        guard nextPair < cnc_color_pairs() else { return 0 }
        let number = nextPair
        nextPair += 1
        _ = init_pair(Int16(number), cursesColor(foreground), cursesColor(background))
        pairs[foreground, default: [:]][background] = number
        return number
    }

    private func cursesColor(_ color: CellColor) -> Int16 {
        switch color {
        case .default: -1
        case .black: Int16(COLOR_BLACK)
        case .red: Int16(COLOR_RED)
        case .green: Int16(COLOR_GREEN)
        case .yellow: Int16(COLOR_YELLOW)
        case .blue: Int16(COLOR_BLUE)
        case .magenta: Int16(COLOR_MAGENTA)
        case .cyan: Int16(COLOR_CYAN)
        case .white: Int16(COLOR_WHITE)
        }
    }

    /// The next input waiting, nil when none (never blocks).
    func read() -> TerminalInput? {
        let code = getch()
        if code == cnc_err() { return nil }
        if code == cnc_key_resize() {
            invalidate()
            return .resize(size)
        }
        if let length = Screen.utf8Length(leading: code) {
            // getch hands a UTF-8 character over byte by byte; its bytes arrive together.
            var bytes = [UInt8(code)]
            while bytes.count < length {
                let next = getch()
                guard next >= 0x80, next <= 0xBF else { break }
                bytes.append(UInt8(next))
            }
            return Screen.character(utf8: bytes).map { .key(.character($0)) }
        }
        return Screen.key(for: code).map(TerminalInput.key)
    }

    /// How many bytes a UTF-8 sequence starting with `code` has; nil when it is not a lead byte.
    static func utf8Length(leading code: Int32) -> Int? {
        switch code {
        case 0xC2...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF4: 4
        default: nil
        }
    }

    /// The character the bytes of one UTF-8 sequence encode; nil for a broken or control one.
    static func character(utf8 bytes: [UInt8]) -> Character? {
        guard let text = String(validating: bytes, as: UTF8.self), text.count == 1, let character = text.first,
            character.unicodeScalars.allSatisfy({ !TerminalText.needsEscape($0) })
        else { return nil }
        return character
    }

    /// Whether the terminal says (terminfo `Ms`, as xterm and tmux describe themselves) that
    /// it takes clipboard writes from applications.
    var takesClipboardWrites: Bool {
        guard let value = tigetstr("Ms") else { return false }
        return Int(bitPattern: value) > 0
    }

    /// Puts `text` on the terminal's clipboard with OSC 52, when the terminal takes it.
    ///
    /// - Returns: false when the terminal does not advertise clipboard writes.
    func copyToClipboard(_ text: String) -> Bool {
        guard takesClipboardWrites else { return false }
        let sequence = Array(("\u{1B}]52;c;" + Data(text.utf8).base64EncodedString() + "\u{07}").utf8)
        // ncurses has sent the frame already; the sequence goes straight after it.
        _ = refresh()
        var written = 0
        while written < sequence.count {
            let result = sequence[written...].withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if result <= 0 { return false }
            written += result
        }
        return true
    }

    /// Maps an ncurses key code to a key.
    static func key(for code: Int32) -> Key? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_ENTER, 10, 13: return .enter
        case 27: return .escape
        case KEY_BACKSPACE, 127, 8: return .backspace
        case KEY_DC: return .delete
        case 9: return .tab
        case KEY_BTAB: return .backTab
        case 1...26: return .control(Character(Unicode.Scalar(UInt8(code) + 96)))
        case 32...126: return .character(Character(Unicode.Scalar(UInt8(code))))
        default: return nil
        }
    }

    /// Leaves ncurses mode and gives the terminal back as it was.
    func end() {
        guard terminalState.active else { return }
        _ = cnc_attrset(cnc_attr_normal())
        _ = curs_set(1)
        _ = endwin()
        terminalState.active = false
        CrashRestoration.uninstall()
    }
}

/// Whether ncurses mode is on, read by the exit handler that restores the terminal.
struct TerminalState: @unchecked Sendable {
    var active = false
}

/// Global because the exit handler cannot capture context.
nonisolated(unsafe) var terminalState = TerminalState()

/// Gives the terminal back when the process crashes or exits while ncurses mode is on.
///
/// Crash handlers must be async-signal-safe, so they do not call `endwin`: they write the
/// terminal's own "leave full screen, show cursor, plain text" strings (read from terminfo
/// at start) with write(2), put back the terminal modes saved before ncurses started with
/// tcsetattr(3), then let the previous disposition act (core dump, exit status).
enum CrashRestoration {
    static let signals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP]
    private static let capacity = 512
    nonisolated(unsafe) private static let reset = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    nonisolated(unsafe) private static var resetCount = 0
    /// On the heap, with C's size: as a Swift global, `termios` was given 57 bytes and
    /// tcgetattr writes 60 (`make asan`: global-buffer-overflow in saveModes).
    nonisolated(unsafe) private static let savedModes: UnsafeMutablePointer<termios> = {
        let modes = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        modes.initialize(to: termios())
        return modes
    }()
    nonisolated(unsafe) private static var hasSavedModes = false
    nonisolated(unsafe) private static let previous: UnsafeMutablePointer<sigaction> = {
        let table = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
        table.initialize(repeating: sigaction(), count: 65)
        return table
    }()
    nonisolated(unsafe) private static var installed = false
    nonisolated(unsafe) private static var exitHandlerRegistered = false

    /// Saves the terminal modes; call before `initscr`.
    static func saveModes() {
        hasSavedModes = tcgetattr(STDIN_FILENO, savedModes) == 0
    }

    /// Reads the reset strings and installs the crash handlers; call after `initscr`.
    static func install() {
        var bytes: [UInt8] = []
        for capability in ["rmcup", "cnorm", "sgr0"] {
            guard let value = tigetstr(capability), Int(bitPattern: value) > 0 else { continue }
            bytes += Array(String(cString: value).utf8)
        }
        resetCount = min(bytes.count, capacity)
        for (index, byte) in bytes.prefix(resetCount).enumerated() { reset[index] = byte }
        for number in signals {
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = crashHandler
            #else
                action.__sigaction_u.__sa_handler = crashHandler
            #endif
            sigemptyset(&action.sa_mask)
            _ = sigaction(number, &action, previous + Int(number))
        }
        installed = true
        if !exitHandlerRegistered {
            exitHandlerRegistered = true
            atexit {
                if terminalState.active {
                    _ = endwin()
                    terminalState.active = false
                }
            }
        }
    }

    /// Puts back the dispositions that were in force before `install()`.
    static func uninstall() {
        guard installed else { return }
        installed = false
        for number in signals { _ = sigaction(number, previous + Int(number), nil) }
    }

    /// The crash handler: only write(2), tcsetattr(3), sigaction(2) and raise(3).
    fileprivate static func restoreAndRedeliver(_ number: Int32) {
        if terminalState.active {
            _ = write(STDOUT_FILENO, reset, resetCount)
            if hasSavedModes { _ = tcsetattr(STDIN_FILENO, TCSANOW, savedModes) }
        }
        _ = sigaction(number, previous + Int(number), nil)
        _ = raise(number)
    }
}

private func crashHandler(_ number: Int32) {
    CrashRestoration.restoreAndRedeliver(number)
}

// The reproduce panel: `c` on a selected attempt or trace shows the shell command that repeats
// it, laid out so a mouse selection copies runnable text, and asks the screen to copy it too.
import FoundationEssentials
import NameResolution
import Probe
import TerminalText

/// The command shown in the panel and what it reproduces.
public struct ReproducePanel: Sendable, Equatable {
    /// What the command repeats ("direct-sni 127.0.0.1 sni-a.lab.test: ok 200").
    public var title: String
    /// The command as built (`Attempt.reproduce`), several lines for several attempts or hops.
    public var command: String
    public var scroll = 0
    /// Whether the terminal took the copy (OSC 52); nil until the screen has tried.
    public var copied: Bool?

    public init(title: String, command: String) {
        self.title = title
        self.command = command
    }
}

/// Opens the panel for what is selected and asks for a clipboard copy.
func openReproducePanel(_ state: inout ConsoleState) -> [ConsoleEffect] {
    // Who gave the addresses, with the wire profile its requests followed (`--sdk`).
    let (attempts, resolution) = ConsoleFeatures.base(state.view).reproducible(state)
    let made = attempts.filter { $0.reproduce != nil }
    guard !made.isEmpty else {
        state.message =
            attempts.isEmpty
            ? "Nothing to reproduce: select a trace (3) or a probed host (1)"
            : "Nothing to reproduce: these attempts were not made (skipped, or no address)"
        return []
    }
    let command: String
    var title: String
    if made.count == 1, let attempt = made.first {
        command = attempt.reproduce ?? ""
        title = attemptTitle(attempt)
    } else {
        command = made.map { "# \(attemptTitle($0))\n" + ($0.reproduce ?? "") }.joined(separator: "\n")
        title = "\(made.count) attempts of \(made[0].url)"
    }
    // Named only when an attempt's address came from it: a system resolver's answer is not HTTPDNS's.
    if let provider = resolution?.httpdns.provider, made.contains(where: { $0.ipSource != .system }) {
        title += " (addresses from \(provider))"
    }
    state.reproducePanel = ReproducePanel(title: title, command: command)
    return [.copyToClipboard(command)]
}

/// "direct-sni 127.0.0.1: ok 200", the line that says what a command repeats.
private func attemptTitle(_ attempt: Attempt) -> String {
    var text = attempt.scenario.rawValue
    if let ip = attempt.ip { text += " \(ip)" }
    text += ": \(attempt.outcome.rawValue)"
    if let status = attempt.status { text += " \(status)" }
    return text
}

/// The command as screen lines of at most `width` columns. A line too long is broken between
/// shell words with a trailing ` \`, so the text a mouse selects still runs as it is.
func reproduceLines(_ command: String, width: Int) -> [String] {
    var lines: [String] = []
    for line in command.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
        let safe = TerminalText.escaped(line)
        guard safe.count > width else {
            lines.append(safe)
            continue
        }
        if line.hasPrefix("#") {
            // A comment goes on as more comments, so the text still runs as it is.
            let words = wrap(String(safe.dropFirst()), width: width - 2)
            lines += words.map { "# " + $0 }
            continue
        }
        var current = ""
        for word in shellWords(safe) {
            if current.isEmpty {
                current = word
            } else if current.count + 1 + word.count + 2 <= width {
                current += " " + word
            } else {
                lines.append(current + " \\")
                current = "  " + word
            }
        }
        if !current.isEmpty { lines.append(current) }
    }
    return lines
}

/// A line split at the spaces that separate shell words (not those inside quotes).
private func shellWords(_ line: String) -> [String] {
    var words: [String] = []
    var current = ""
    var quote: Character?
    var escaped = false
    for character in line {
        if escaped {
            current.append(character)
            escaped = false
            continue
        }
        if character == "\\" && quote != "'" {
            escaped = true
            current.append(character)
            continue
        }
        if let open = quote {
            if character == open { quote = nil }
            current.append(character)
        } else if character == "'" || character == "\"" {
            quote = character
            current.append(character)
        } else if character == " " {
            if !current.isEmpty { words.append(current) }
            current = ""
        } else {
            current.append(character)
        }
    }
    if !current.isEmpty { words.append(current) }
    return words
}

/// Draws the panel over the body: a title row, then the command from column 0 with nothing
/// beside it, so a mouse selection holds only the command.
func drawReproducePanel(_ state: ConsoleState, panel: ReproducePanel, rows: Range<Int>, into buffer: inout CellBuffer) {
    for y in rows { buffer.fill(x: 0, y: y, count: buffer.width, style: .plain) }
    var y = rows.lowerBound
    buffer.fill(x: 0, y: y, count: buffer.width, style: .bold)
    let how: String
    switch panel.copied {
    case true?: how = "copied to the clipboard; or select it with the mouse"
    case false?: how = "no clipboard in this terminal: select it with the mouse"
    case nil: how = "select it with the mouse"
    }
    buffer.draw(
        [
            Span(" Reproduce: ", .bold), Span(TerminalText.escaped(panel.title), .bold),
            Span(state.glyphs.separator + how, .dim),
        ], x: 0, y: y, width: buffer.width)
    y += 1
    let lines = reproduceLines(panel.command, width: buffer.width)
    let height = rows.upperBound - y
    let scroll = max(0, min(panel.scroll, lines.count - height))
    for line in lines.dropFirst(scroll).prefix(height) {
        buffer.put(line, x: 0, y: y, style: line.hasPrefix("#") ? .dim : .plain, limit: buffer.width)
        y += 1
    }
}

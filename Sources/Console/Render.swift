// The pure render: state and size in, a cell buffer out. No terminal, no clock, no engine:
// the same state always draws the same frame, which is what the snapshot tests rely on.
import FoundationEssentials
import FoundationGaps
import LabFaults
import NameResolution
import Probe
import TerminalText

/// The smallest terminal the views are laid out for.
public let minimumTerminalSize = TerminalSize(width: 60, height: 16)

/// A run of text in one style.
public struct Span: Sendable, Equatable {
    public var text: String
    public var style: CellStyle
    public init(_ text: String, _ style: CellStyle = .plain) {
        self.text = text
        self.style = style
    }
}

/// A line made of spans, as the scrollable views build them.
public typealias StyledLine = [Span]

extension CellBuffer {
    /// Draws a styled line from column `x`, clipped to `width` columns.
    @discardableResult
    mutating func draw(_ line: StyledLine, x: Int, y: Int, width: Int) -> Int {
        var column = x
        let end = x + width
        for span in line where column < end {
            column = put(span.text, x: column, y: y, style: span.style, limit: end - column)
        }
        return column
    }

    /// Draws the lines of a scrollable view in `rows`, from line `scroll`, which goes no further
    /// than the last screenful.
    mutating func draw(_ lines: [StyledLine], scrolledBy scroll: Int, rows: Range<Int>) {
        var y = rows.lowerBound
        for line in lines.dropFirst(max(0, min(scroll, lines.count - rows.count))).prefix(rows.count) {
            draw(line, x: 0, y: y, width: width)
            y += 1
        }
    }
}

/// Draws the whole console for a terminal of `size`.
public func render(_ state: ConsoleState, size: TerminalSize) -> CellBuffer {
    var buffer = CellBuffer(width: size.width, height: size.height)
    guard size.width >= minimumTerminalSize.width, size.height >= minimumTerminalSize.height else {
        drawTooSmall(size, into: &buffer)
        return buffer
    }
    drawTabBar(state, into: &buffer)
    let status = statusLayout(state, width: size.width)
    let hintY = size.height - 2 - status.messageLines.count
    let body = 1..<hintY
    ConsoleFeatures.top(state).draw(state, rows: body, into: &buffer)
    if let panel = state.reproducePanel { drawReproducePanel(state, panel: panel, rows: body, into: &buffer) }
    drawHintLine(state, y: hintY, body: body.count, into: &buffer)
    drawStatusBar(state, status, y: size.height - 1, into: &buffer)
    buffer.apply(state.theme)
    return buffer
}

/// Draws the console at the size stored in the state.
public func render(_ state: ConsoleState) -> CellBuffer { render(state, size: state.size) }

private func drawTooSmall(_ size: TerminalSize, into buffer: inout CellBuffer) {
    let lines = [
        "Terminal too small: \(size.width)x\(size.height).",
        "ipdirect needs at least \(minimumTerminalSize.width)x\(minimumTerminalSize.height).",
        "Enlarge the window, or press q to quit.",
    ]
    let top = max(0, size.height / 2 - 1)
    for (offset, line) in lines.enumerated() {
        let text = line.unicodeScalars.count > size.width ? String(line.prefix(size.width)) : line
        buffer.put(text, x: max(0, (size.width - text.count) / 2), y: top + offset, style: offset == 0 ? .bold : .plain)
    }
}

private func drawTabBar(_ state: ConsoleState, into buffer: inout CellBuffer) {
    // Below 70 columns the name gives way so the five tabs fit.
    var x = buffer.width < 70 ? -1 : buffer.put(" ipdirect ", x: 0, y: 0, style: .fg(.cyan, bold: true))
    for (index, view) in ConsoleView.tabs.enumerated() {
        let label = " \(index + 1) \(view.title) "
        let active = view == state.view
        x = buffer.put(label, x: x + 1, y: 0, style: active ? CellStyle(bold: true, reverse: true) : .plain)
    }
    if !ConsoleView.tabs.contains(state.view) {
        // A view opened by a letter key is shown beside the tabs while it is open.
        x = buffer.put(" \(state.view.title) ", x: x + 1, y: 0, style: CellStyle(bold: true, reverse: true))
    }
    // Right-aligned tags, last first: the lab's fault, then the features' (a watch going on hidden).
    var right = buffer.width - 1
    if let fault = state.labFault {
        let tag = fault == .none ? "lab" : "lab fault: \(fault.rawValue)"
        let style: CellStyle = fault == .none ? .fg(.green) : .fg(.yellow, bold: true)
        let start = right - tag.count
        if start > x + 1 {
            buffer.put(tag, x: start, y: 0, style: style)
            right = start - 2
        }
    }
    for tag in ConsoleFeatures.all.compactMap({ $0.tabBarTag(state) }) {
        // The buffer escapes what it draws; the width is of the text as drawn.
        let start = right - TerminalText.width(TerminalText.escaped(tag.text))
        guard start > x + 1 else { break }
        buffer.put(tag.text, x: start, y: 0, style: tag.style)
        right = start - 2
    }
}

private func drawHintLine(_ state: ConsoleState, y: Int, body: Int, into buffer: inout CellBuffer) {
    let lab = state.engine.lab
    let keys = state.keyMap
    // Help and quit are named on every line, whatever else has to give way: on the input line
    // `?` and `q` are text, so the keys that leave it come first.
    let quitWhileTyping = keys.label(for: .quit, in: [.typing, .global], lab: lab, typing: true) ?? "Ctrl-C"
    let helpAfter: (Command, KeyScope) -> String = { leave, scope in
        "\(keys.label(for: leave, in: [scope], lab: lab) ?? "Esc") \(keys.label(for: .help, in: [.global], lab: lab) ?? "?")"
    }
    let tail: [(String, String)]
    switch state.mode {
    case .confirmFlushAll:
        let x = buffer.put(
            " Flush every name from the cache (\(state.cache.count) entries)? y/n", x: 0, y: y,
            style: .fg(.yellow, bold: true))
        let more = [(helpAfter(.confirmNo, .confirm), "help"), (quitWhileTyping, "quit")]
        drawHints(more, from: x + 3, y: y, rightWidth: 0, into: &buffer)
        return
    case .filter:
        var x = buffer.put(" Filter: ", x: 0, y: y, style: .bold)
        x = drawEditedLine(state.filterLine, x: x, y: y, width: max(8, buffer.width / 3), into: &buffer)
        let more = [
            (keys.label(for: .submit, in: [.typing], lab: lab) ?? "Enter", "keep"),
            (keys.label(for: .cancel, in: [.typing], lab: lab) ?? "Esc", "clear"),
            (helpAfter(.submit, .typing), "help"),
            (quitWhileTyping, "quit"),
        ]
        drawHints(more, from: x + 2, y: y, rightWidth: 0, into: &buffer)
        return
    case .probeInput:
        tail = [(helpAfter(.cancel, .typing), "help"), (quitWhileTyping, "quit")]
    case .command:
        let scopes = commandScopes(state)
        tail = [
            (keys.label(for: .help, in: scopes, lab: lab) ?? "?", "help"),
            (keys.label(for: .quit, in: scopes, lab: lab) ?? "Ctrl-C", "quit"),
        ]
    }
    let hints: [(Command, String)]
    if state.reproducePanel != nil {
        hints = [(.back, "close"), (.down, "scroll")]
    } else if state.mode == .probeInput {
        hints = [
            (.submit, "probe"), (.cancel, "leave"), (.deleteToStart, "clear"), (.historyPrevious, "history"),
        ]
    } else {
        hints = ConsoleFeatures.top(state).hints(state)
    }
    let scopes = state.mode == .probeInput ? [KeyScope.typing] : commandScopes(state)
    let labelled = hints.compactMap { hint in
        keys.label(for: hint.0, in: scopes, lab: lab).map { ($0, hint.1) }
    }
    var right: StyledLine = []
    if let filter = state.filters[state.view], !filter.isEmpty {
        right = [Span("filter: ", .dim), Span(state.glyphs.clip(filter, 20), .fg(.yellow))]
    } else if let (count, scroll) = ConsoleFeatures.top(state).scrolledLines(state, width: buffer.width),
        count > body
    {
        let first = max(0, min(scroll, count - body))
        right = [Span("lines \(first + 1)-\(first + body) of \(count)", .dim)]
    }
    let rightWidth = right.reduce(0) { $0 + $1.text.unicodeScalars.count }
    drawHints(labelled, tail: tail, from: 1, y: y, rightWidth: rightWidth, into: &buffer)
    if rightWidth > 0 { buffer.draw(right, x: buffer.width - rightWidth - 1, y: y, width: rightWidth) }
}

/// Draws `key action` pairs from column `x`: those of `tail` always, the others in order while
/// they fit beside them; a hint that does not fit is left out whole rather than cut.
private func drawHints(
    _ hints: [(String, String)], tail: [(String, String)] = [], from x: Int, y: Int, rightWidth: Int,
    into buffer: inout CellBuffer
) {
    func width(_ hint: (String, String)) -> Int { hint.0.count + 1 + hint.1.count + 2 }
    let room = buffer.width - rightWidth - 1 - x
    var used = tail.reduce(0) { $0 + width($1) }
    var shown: [(String, String)] = []
    for hint in hints {
        if used + width(hint) > room { break }
        shown.append(hint)
        used += width(hint)
    }
    var line: StyledLine = []
    for hint in shown + tail {
        line.append(Span(hint.0, .bold))
        line.append(Span(" " + hint.1 + "  ", .dim))
    }
    buffer.draw(line, x: x, y: y, width: buffer.width - x)
}

/// Draws a line being typed with its cursor, from column `x` within `width` columns: when the
/// text is longer, the part around the cursor is shown.
///
/// - Returns: the column after what was drawn.
@discardableResult
func drawEditedLine(_ line: EditedLine, x: Int, y: Int, width: Int, into buffer: inout CellBuffer) -> Int {
    var before = line.beforeCursor
    // The cursor's cell is the last of the field at most.
    while TerminalText.width(before) > width - 1, !before.isEmpty { before.removeFirst() }
    var column = buffer.put(before, x: x, y: y)
    let after = Array(line.characters[line.cursor...])
    let atCursor = after.first.map { String($0) } ?? " "
    column = buffer.put(atCursor, x: column, y: y, style: .reverse)
    let end = x + width
    if after.count > 1, column < end {
        column = buffer.put(String(after.dropFirst()), x: column, y: y, limit: end - column)
    }
    return column
}

/// The bottom of the screen: the status bar's fields, and the message beside them when it fits,
/// or else on lines of its own above them (at most three, shortened in the middle past that),
/// so a message (an export's path) is never cut at its end.
struct StatusLayout {
    var fields: String
    /// The message lines above the status bar; empty when the message sits beside the fields.
    var messageLines: [String]
}

/// The status bar's layout for a terminal `width` wide; the body gives up the rows it takes.
func statusLayout(_ state: ConsoleState, width: Int) -> StatusLayout {
    var endpoint = state.engine.endpoint
    let narrow = width < 100
    if narrow, let components = URLComponents(string: endpoint), let host = components.host {
        // host:port is what tells endpoints apart; the scheme and path wait for a wider terminal.
        endpoint = host + (components.port.map { ":\($0)" } ?? "")
    }
    let sep = state.glyphs.separator
    var fields = [
        state.engine.provider, state.glyphs.clip(endpoint, narrow ? 22 : 48),
        narrow ? state.family.rawValue : "family \(state.family.rawValue)", "cache \(state.cache.count)",
        narrow ? "\(state.inFlight) probing" : "\(state.inFlight) in flight",
    ]
    if let server = state.answeredBy, !endpoint.contains(server) {
        // Under service discovery the endpoint names no address: say which service IP answered.
        fields.insert("answered by \(server)", at: 2)
    }
    let line = " " + fields.joined(separator: sep)
    let message = TerminalText.escaped(state.message)
    let room = width - TerminalText.width(line) - TerminalText.width(sep) - 1
    guard TerminalText.width(message) > room, width >= minimumTerminalSize.width else {
        return StatusLayout(fields: line, messageLines: [])
    }
    let lineWidth = width - 2
    let most = 3
    var text = message
    if TerminalText.width(text) > lineWidth * most {
        // Keep the start (what happened) and the end (the file name); the middle gives way.
        let keep = lineWidth * most - 1
        let characters = Array(text)
        text =
            String(characters.prefix(keep / 3)) + state.glyphs.ellipsis.description
            + String(characters.suffix(keep - keep / 3))
    }
    return StatusLayout(fields: line, messageLines: wrapWhole(text, width: lineWidth).prefix(most).map { $0 })
}

private func drawStatusBar(_ state: ConsoleState, _ layout: StatusLayout, y: Int, into buffer: inout CellBuffer) {
    let style = CellStyle(reverse: true)
    let messageStyle = CellStyle(bold: true, reverse: true)
    for (index, line) in layout.messageLines.enumerated() {
        let row = y - layout.messageLines.count + index
        buffer.fill(x: 0, y: row, count: buffer.width, style: style)
        buffer.put(" " + line, x: 0, y: row, style: messageStyle)
    }
    buffer.fill(x: 0, y: y, count: buffer.width, style: style)
    let x = buffer.put(layout.fields, x: 0, y: y, style: style)
    if layout.messageLines.isEmpty && !state.message.isEmpty {
        let sep = state.glyphs.separator
        let start = buffer.put(sep, x: x, y: y, style: style)
        buffer.put(state.message, x: start, y: y, style: messageStyle)
    }
}

// MARK: - Formatting shared by the views

/// Milliseconds for a table cell: "0.8ms", "42ms", "1.25s".
func formatMilliseconds(_ ms: Double) -> String {
    if ms < 10 { return String(cFormat: "%.1fms", ms) }
    if ms < 1000 { return String(cFormat: "%.0fms", ms) }
    return String(cFormat: "%.2fs", ms / 1000)
}

/// A span of seconds, short: "42s", "4m05s", "2h03m".
func formatSeconds(_ seconds: Int) -> String {
    let s = abs(seconds)
    let sign = seconds < 0 ? "-" : ""
    if s < 60 { return "\(sign)\(s)s" }
    if s < 3600 { return sign + String(cFormat: "%dm%02ds", s / 60, s % 60) }
    return sign + String(cFormat: "%dh%02dm", s / 3600, (s % 3600) / 60)
}

/// "HH:MM:SS" of a moment in a zone, without a formatter (the traces list draws many).
func clockTime(_ date: Date, _ timeZone: TimeZone) -> String {
    let local = Int(date.timeIntervalSince1970.rounded(.down)) + timeZone.secondsFromGMT(for: date)
    let day = ((local % 86_400) + 86_400) % 86_400
    return String(cFormat: "%02d:%02d:%02d", day / 3600, (day % 3600) / 60, day % 60)
}

/// The color an outcome is drawn in.
func outcomeStyle(_ outcome: Outcome) -> CellStyle {
    switch outcome {
    case .ok: .fg(.green, bold: true)
    case .httpStatus: .fg(.yellow, bold: true)
    case .skipped: .dim
    default: .fg(.red, bold: true)
    }
}

/// Breaks `text` into lines of at most `width` columns at spaces.
func wrap(_ text: String, width: Int) -> [String] { TerminalText.wrapped(text, width: width) }

/// Draws a list's column header row.
func drawHeader(_ columns: [(String, Int)], y: Int, into buffer: inout CellBuffer, x: Int = 1) {
    buffer.fill(x: 0, y: y, count: buffer.width, style: .bold)
    var column = x
    for (title, width) in columns {
        buffer.put(title.padded(width), x: column, y: y, style: .bold, limit: width)
        column += width + 1
    }
}

/// Breaks `text` into lines of `width` columns at spaces, and a word longer than a line (a
/// path) at the width, so nothing is lost: the lines joined give the text back.
func wrapWhole(_ text: String, width: Int) -> [String] {
    guard width > 0, TerminalText.width(text) > width else { return [text] }
    var lines: [String] = []
    var rest = Substring(text)
    while TerminalText.width(String(rest)) > width {
        let head = TerminalText.prefix(String(rest), cells: width)
        // Break after the last space of the line when there is one, not in a word.
        let cut = head.lastIndex(of: " ").map { head.index(after: $0) } ?? head.endIndex
        let line = head[..<cut]
        lines.append(String(line))
        rest = rest.dropFirst(line.count)
    }
    if !rest.isEmpty { lines.append(String(rest)) }
    return lines
}

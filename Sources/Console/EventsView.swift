// The events view: what the resolver did (hit, miss, refresh, expired, fallback, error) and
// where exports went, newest first, each line whole; with --lab, the lab's fault switch on top.
import Foundation
import NameResolution
import TerminalText

func drawEventsView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    var y = rows.lowerBound
    if let current = state.labFault {
        var line: StyledLine = [Span(" Lab fault: ", .bold)]
        for fault in LabFault.allCases {
            let active = fault == current
            line.append(
                Span(
                    " \(fault.rawValue) ",
                    active ? CellStyle(foreground: fault == .none ? .green : .yellow, bold: true, reverse: true) : .dim)
            )
        }
        line.append(Span("   F next" + state.glyphs.separator + "N none", .dim))
        buffer.draw(line, x: 0, y: y, width: buffer.width)
        y += 1
        let explanation: String
        switch current {
        case .none: explanation = "The lab's HTTPDNS service answers normally."
        case .slow: explanation = "HTTPDNS answers late: watch timeouts and the system DNS fallback."
        case .error: explanation = "HTTPDNS answers with errors: watch the fallback and expired-IP reuse."
        case .malformed: explanation = "HTTPDNS answers garbage: every IP must still be validated."
        case .down: explanation = "HTTPDNS refuses connections: cached and stale answers carry on."
        }
        buffer.put(" " + explanation, x: 0, y: y, style: .dim)
        y += 1
    }
    let events = state.listedEvents
    let widths = [8, 9, max(16, (buffer.width - 30) / 3), 3]
    let detailWidth = buffer.width - 1 - widths.reduce(0, +) - 4
    drawHeader(
        [("TIME", widths[0]), ("EVENT", widths[1]), ("HOST", widths[2]), ("FAM", widths[3]), ("DETAIL", detailWidth)],
        y: y, into: &buffer)
    y += 1
    if events.isEmpty {
        buffer.put(
            state.events.isEmpty
                ? " No resolver events yet: probe a host and its lookups show here." : " No event matches the filter.",
            x: 0, y: y, style: .dim)
        return
    }
    // A detail goes on under itself rather than being cut (an export's path must be read whole),
    // so rows differ in height: the list starts later when the selected event would not fit.
    let allWidths = widths + [detailWidth]
    let detailX = 1 + widths.reduce(0) { $0 + $1 + 1 }
    func detailLines(_ event: ConsoleEvent) -> [String] {
        wrapWhole(TerminalText.escaped(event.detail), width: detailWidth)
    }
    let cursor = state.eventCursor
    let room = rows.upperBound - y
    var first = min(cursor.offset, cursor.selected)
    while first < cursor.selected
        && (first...cursor.selected).reduce(0, { $0 + detailLines(events[$1]).count }) > room
    {
        first += 1
    }
    for row in first..<events.count where y < rows.upperBound {
        let event = events[row]
        let kindStyle: CellStyle
        switch event.kind {
        case .resolver(.hit): kindStyle = .fg(.green)
        case .resolver(.miss), .resolver(.prefetch), .resolver(.refresh): kindStyle = .fg(.cyan)
        case .resolver(.expired), .resolver(.fallback): kindStyle = .fg(.yellow)
        case .resolver(.error): kindStyle = .fg(.red, bold: true)
        case .resolver(.flush): kindStyle = .dim
        case .export: kindStyle = .fg(.magenta, bold: true)
        }
        let details = detailLines(event)
        let cells: [(String, CellStyle)] = [
            (clockTime(event.time, state.timeZone), .dim), (event.kind.name, kindStyle),
            (state.glyphs.clip(event.host, widths[2]), .plain), (event.family?.rawValue ?? "", .plain),
            (details[0], .plain),
        ]
        let selected = row == cursor.selected
        var x = 1
        for (index, cell) in cells.enumerated() {
            var style = cell.1
            if selected { style.reverse = true }
            if selected && index == 0 { buffer.fill(x: 0, y: y, count: buffer.width, style: .reverse) }
            buffer.put(cell.0, x: x, y: y, style: style, limit: allWidths[index])
            x += allWidths[index] + 1
        }
        y += 1
        for more in details.dropFirst() where y < rows.upperBound {
            if selected { buffer.fill(x: 0, y: y, count: buffer.width, style: .reverse) }
            buffer.put(more, x: detailX, y: y, style: selected ? .reverse : .plain, limit: detailWidth)
            y += 1
        }
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

func drawHelpView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    let columns = helpColumns(state, width: buffer.width)
    let columnWidth = buffer.width / columns.count
    let scroll = clampedHelpScroll(state.helpScroll, columns: columns, height: rows.count)
    for (index, column) in columns.enumerated() {
        var y = rows.lowerBound
        for line in column.dropFirst(scroll).prefix(rows.count) {
            buffer.draw(line, x: index * columnWidth, y: y, width: columnWidth - 1)
            y += 1
        }
    }
}

/// The help view's columns for a terminal `width` wide: two, split where a section starts, on
/// a wide terminal; one otherwise. Render draws them and the reducer scrolls them.
func helpColumns(_ state: ConsoleState, width: Int) -> [[StyledLine]] {
    let twoColumns = width >= 100
    let lines = helpLines(state.keyMap, lab: state.engine.lab, width: (twoColumns ? width / 2 : width) - 1)
    guard twoColumns else { return [lines] }
    // The split that leaves the longer column shortest.
    let sectionStarts = lines.indices.filter { $0 > 0 && lines[$0].first?.style == .fg(.cyan, bold: true) }
    guard let split = sectionStarts.min(by: { max($0, lines.count - $0) < max($1, lines.count - $1) }) else {
        return [lines]
    }
    return [Array(lines[..<split]), Array(lines[split...])]
}

/// How far the help view is scrolled: both columns together, no further than the longer one's end.
func clampedHelpScroll(_ scroll: Int, columns: [[StyledLine]], height: Int) -> Int {
    max(0, min(scroll, (columns.map(\.count).max() ?? 0) - height))
}

/// The help text, generated from the key map: every binding, grouped by where it applies.
/// A summary too long for `width` columns goes on under itself rather than being cut.
func helpLines(_ keyMap: KeyMap, lab: Bool, width: Int) -> [StyledLine] {
    var lines: [StyledLine] = []
    let keyWidth = 16
    // Two columns of sections when the terminal is wide enough.
    for scope in KeyScope.allCases {
        let bindings = keyMap.bindings.filter { $0.scope == scope && (lab || !$0.labOnly) }
        guard !bindings.isEmpty else { continue }
        lines.append([Span(" " + scope.rawValue, .fg(.cyan, bold: true))])
        for binding in bindings {
            let keys = binding.keys.map(\.label).joined(separator: ", ")
            // The action's name is what `[keys]` in the configuration file remaps.
            let summary = wrap(binding.summary + "  [\(binding.command.name)]", width: max(10, width - 3 - keyWidth))
            lines.append([Span("   " + keys.padded(keyWidth), .bold), Span(summary[0])])
            for more in summary.dropFirst() { lines.append([Span(String(repeating: " ", count: 3 + keyWidth) + more)]) }
        }
    }
    return lines
}

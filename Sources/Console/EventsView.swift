// The events view: what the resolver did (hit, miss, refresh, expired, fallback, error),
// newest first; with --lab, the lab's fault switch on top.
import Foundation
import NameResolution

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
    let cursor = state.eventCursor
    let end = min(events.count, cursor.offset + (rows.upperBound - y))
    for row in cursor.offset..<end {
        let event = events[row]
        let kindStyle: CellStyle
        switch event.kind {
        case .hit: kindStyle = .fg(.green)
        case .miss, .prefetch, .refresh: kindStyle = .fg(.cyan)
        case .expired, .fallback: kindStyle = .fg(.yellow)
        case .error: kindStyle = .fg(.red, bold: true)
        case .flush: kindStyle = .dim
        }
        let cells: [(String, CellStyle)] = [
            (clockTime(event.time, state.timeZone), .dim), (event.kind.rawValue, kindStyle),
            (state.glyphs.clip(event.host, widths[2]), .plain), (event.family?.rawValue ?? "", .plain),
            (state.glyphs.clip(event.detail, detailWidth), .plain),
        ]
        let selected = row == cursor.selected
        if selected { buffer.fill(x: 0, y: y, count: buffer.width, style: .reverse) }
        var x = 1
        let allWidths = widths + [detailWidth]
        for (index, cell) in cells.enumerated() {
            var style = cell.1
            if selected { style.reverse = true }
            buffer.put(cell.0, x: x, y: y, style: style, limit: allWidths[index])
            x += allWidths[index] + 1
        }
        y += 1
    }
}

func drawHelpView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    let twoColumns = buffer.width >= 100
    let lines = helpLines(
        state.keyMap, lab: state.engine.lab, width: (twoColumns ? buffer.width / 2 : buffer.width) - 1)
    let height = rows.count
    // Wide terminals get two columns, split where a section starts.
    var columns = [lines]
    if twoColumns {
        let sectionStarts = lines.indices.filter { lines[$0].first?.style == .fg(.cyan, bold: true) }
        if let split = sectionStarts.min(by: { abs($0 - lines.count / 2) < abs($1 - lines.count / 2) }), split > 0 {
            columns = [Array(lines[..<split]), Array(lines[split...])]
        }
    }
    let columnWidth = buffer.width / columns.count
    for (index, column) in columns.enumerated() {
        let scroll = max(0, min(state.helpScroll, column.count - height))
        var y = rows.lowerBound
        for line in column.dropFirst(scroll).prefix(height) {
            buffer.draw(line, x: index * columnWidth, y: y, width: columnWidth - 1)
            y += 1
        }
    }
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

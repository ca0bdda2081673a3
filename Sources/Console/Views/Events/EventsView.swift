// The events view: what the resolver did (hit, miss, refresh, expired, fallback, error) and
// where exports went, newest first, each line whole; with --lab, the lab's fault switch on top.
import FoundationEssentials
import LabFaults
import NameResolution
import TerminalText

func drawEventsView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    var y = rows.lowerBound
    if let current = state.labFault { y = drawLabFaultSwitch(current, glyphs: state.glyphs, y: y, into: &buffer) }
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
    let cursor = state.eventsView.cursor
    let room = rows.upperBound - y
    var first = min(cursor.offset, cursor.selected)
    while first < cursor.selected
        && (first...cursor.selected).reduce(0, { $0 + detailLines(events[$1]).count }) > room
    {
        first += 1
    }
    for row in first..<events.count where y < rows.upperBound {
        let event = events[row]
        let kindStyle = eventKindStyle(event.kind)
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

/// Says what an export wrote, on the status line and as an `export` row of the events view.
func recordExport(_ sentence: String, host: String = "", state: inout ConsoleState) {
    state.message = "Exported " + sentence
    recordEvent(ConsoleEvent(time: state.now, kind: .export, host: host, detail: sentence), state: &state)
}

/// Adds a row to the events view, keeping the selected row on the same event.
func recordEvent(_ event: ConsoleEvent, state: inout ConsoleState) {
    state.events.append(event)
    if state.eventsView.cursor.selected > 0 { state.eventsView.cursor.selected += 1 }
}

/// The lab's fault switch above the list, two lines: the faults with the current one lit, and
/// what it does.
///
/// - Returns: the row after it.
private func drawLabFaultSwitch(
    _ current: HTTPDNSFault, glyphs: Glyphs, y top: Int, into buffer: inout CellBuffer
) -> Int {
    var y = top
    var line: StyledLine = [Span(" Lab fault: ", .bold)]
    for fault in LabFault.allCases {
        let active = fault == current
        line.append(
            Span(
                " \(fault.rawValue) ",
                active ? CellStyle(foreground: fault == .none ? .green : .yellow, bold: true, reverse: true) : .dim)
        )
    }
    line.append(Span("   F next" + glyphs.separator + "N none", .dim))
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
    return y
}

/// The colour of an event's kind in the EVENT column.
private func eventKindStyle(_ kind: ConsoleEvent.Kind) -> CellStyle {
    switch kind {
    case .resolver(.hit): .fg(.green)
    case .resolver(.miss), .resolver(.prefetch), .resolver(.refresh): .fg(.cyan)
    case .resolver(.expired), .resolver(.fallback): .fg(.yellow)
    case .resolver(.error): .fg(.red, bold: true)
    case .resolver(.flush): .dim
    case .export: .fg(.magenta, bold: true)
    }
}

// MARK: - The feature

/// The events view (4): the resolver's events and the console's exports, newest first.
enum EventsFeature: ConsoleFeature {
    static let view = ConsoleView.events
    static let isTab = true
    static let initialState = EventsViewState()
    static let filters = true

    static let scope: KeyScope? = .events
    static let bindings: [KeyBinding] = [
        KeyBinding(
            keys: [.character("F")], command: .nextLabFault, scope: .events,
            summary: "next lab fault (none, slow, error, malformed, down)", labOnly: true),
        KeyBinding(
            keys: [.character("N")], command: .clearLabFault, scope: .events, summary: "lab fault back to none",
            labOnly: true),
        .doctor(in: .events),
        KeyBinding(keys: [.character("4")], command: .showView(.events), scope: .global, summary: "Events view"),
    ]

    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] {
        switch action {
        case .resolverEvent(let event):
            recordEvent(ConsoleEvent(event), state: &state)
            return [.loadCache]
        case .labFaultChanged(let fault):
            state.labFault = fault
            if let fault { state.message = "Lab fault is now \(fault.rawValue)" }
        default: break
        }
        return []
    }

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        switch command {
        case .nextLabFault:
            guard let fault = state.labFault else { return [] }
            // Shown at once, so a second press counts from this one; the lab's answer confirms it.
            state.labFault = fault.next
            return [.setLabFault(fault.next)]
        case .clearLabFault:
            guard state.labFault != nil else { return [] }
            state.labFault = LabFault.none
            return [.setLabFault(LabFault.none)]
        default:
            return nil
        }
    }

    static func move(by delta: Int, state: inout ConsoleState) {
        // The lab's fault switch takes two rows above the list.
        let visible = listRows(state) - (state.labFault == nil ? 0 : 2)
        state.eventsView.cursor.step(by: delta, count: state.listedEvents.count, visible: visible)
    }

    static func filterChanged(_ state: inout ConsoleState) { state.eventsView.cursor = ListCursor() }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        drawEventsView(state, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        (state.labFault == nil
            ? [(.filter, "filter")]
            : [(.nextLabFault, "next fault"), (.clearLabFault, "no fault"), (.filter, "filter")])
            + [(.nextView, "next view")]
    }
}

extension KeyScope {
    public static let events = KeyScope("Events view")
}

extension ConsoleView {
    public static let events = ConsoleView("Events")
}

/// The events view's selection; the events are `ConsoleState.events`.
public struct EventsViewState: Sendable, Equatable {
    public var cursor = ListCursor()
}

extension ConsoleState {
    /// The events view's state.
    public var eventsView: EventsViewState {
        get { features[EventsFeature.self] }
        _modify { yield &features[EventsFeature.self] }
    }

    /// The events listed (after the filter), newest first.
    public var listedEvents: [ConsoleEvent] {
        let filter = (filters[.events] ?? "").lowercased()
        var result: [ConsoleEvent] = []
        result.reserveCapacity(events.count)
        for index in stride(from: events.count - 1, through: 0, by: -1) {
            let event = events[index]
            if filter.isEmpty || "\(event.kind.name) \(event.host) \(event.detail)".lowercased().contains(filter) {
                result.append(event)
            }
        }
        return result
    }
}

extension Command {
    /// The lab's fault switch, in the events view.
    public static let nextLabFault = Command("next-lab-fault")
    public static let clearLabFault = Command("clear-lab-fault")
}

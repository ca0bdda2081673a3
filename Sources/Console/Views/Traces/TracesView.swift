// The traces view: every request, newest first, and the detail of one: a waterfall of its
// phases drawn to scale, headers, the certificate chain and the name checked, hops, curl's log.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe

func drawTracesView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    let g = state.glyphs
    var y = rows.lowerBound
    let total = state.traces.count
    let listed = state.traceListCount
    buffer.draw(
        [
            Span(tracesCount(listed: listed, total: total, filter: state.filters[.traces], glyphs: g), .dim),
            Span(
                g.separator + "newest first" + g.separator + "Enter opens one" + g.separator + "e exports the list",
                .dim),
        ], x: 0, y: y, width: buffer.width)
    y += 1
    let fixed = [8, 12, 18, 8]
    let flexible = max(24, buffer.width - 1 - fixed.reduce(0, +) - 7)
    let ipWidth = min(39, max(9, flexible * 3 / 10))
    let sniWidth = flexible * 3 / 10
    let urlWidth = flexible - ipWidth - sniWidth
    let widths = [fixed[0], fixed[1], urlWidth, ipWidth, sniWidth, fixed[2], fixed[3]]
    drawHeader(
        zip(["TIME", "SCENARIO", "URL", "IP", "SNI", "OUTCOME", "TOTAL"], widths).map { ($0, $1) }, y: y, into: &buffer)
    y += 1
    if listed == 0 {
        let text =
            total == 0 ? "No requests yet. Probe a host in the probe view (1)." : "No request matches the filter."
        buffer.put(" " + text, x: 0, y: y, style: .dim)
        return
    }
    let cursor = state.tracesView.cursor
    let end = min(listed, cursor.offset + (rows.upperBound - y))
    for row in cursor.offset..<end {
        guard let record = state.traceAt(row: row) else { break }
        let attempt = record.attempt
        var outcome = attempt.outcome.rawValue
        if let status = attempt.status { outcome += " \(status)" }
        let cells: [(String, CellStyle)] = [
            (clockTime(record.time, state.timeZone), .dim),
            (attempt.scenario.rawValue, .plain),
            (g.clip(withoutScheme(attempt.url), widths[2]), .plain),
            (g.clip(attempt.ip?.text ?? "-", widths[3]), .plain),
            (g.clip(attempt.sni ?? "(none)", widths[4]), attempt.sni == nil ? .dim : .plain),
            (g.clip(outcome, widths[5]), outcomeStyle(attempt.outcome)),
            (
                (attempt.outcome == .skipped ? "-" : formatMilliseconds(attempt.timings.total)).leftPadded(widths[6]),
                .plain
            ),
        ]
        buffer.putRow(cells, widths: widths, y: y, selected: row == cursor.selected)
        y += 1
    }
}

/// How many requests the list shows: all those kept, or with a filter how many of them it lets
/// through and which filter that is.
func tracesCount(listed: Int, total: Int, filter: String?, glyphs: Glyphs) -> String {
    guard let filter, !filter.isEmpty else { return " \(listed) of \(total) requests kept" }
    return " \(listed) of \(total) requests shown (filter: \(glyphs.clip(filter, 20)))"
}

func drawTraceDetail(_ state: ConsoleState, record: TraceRecord, rows: Range<Int>, into buffer: inout CellBuffer) {
    buffer.draw(
        detailLines(record, state: state, width: buffer.width), scrolledBy: state.traceDetail.scroll, rows: rows)
}

/// The phases of an exchange as spans from the start, in milliseconds. The span after the
/// last phase that finished is a "transfer" only when an answer came back (`answered`); before
/// that it is named for what was under way, the connect, the TLS handshake (`secure`) or the wait
/// for an answer, so a handshake that failed does not read as a transfer that moved nothing.
func phases(
    _ t: PhaseTimings, answered: Bool = true, secure: Bool = true
) -> [(name: String, start: Double, end: Double)] {
    var result: [(String, Double, Double)] = []
    var cursor = 0.0
    func add(_ name: String, _ end: Double?) {
        guard let end, end >= cursor else { return }
        result.append((name, cursor, end))
        cursor = end
    }
    add("DNS", t.nameLookup)
    add("connect", t.connect)
    add("TLS", t.tlsDone)
    add("first byte", t.firstByte)
    let last =
        answered || t.firstByte != nil
        ? "transfer" : t.connect == nil ? "connecting" : secure && t.tlsDone == nil ? "handshake" : "no response"
    add(last, t.total)
    return result
}

/// The detail of one trace as lines, for the scrollable detail view: its heading, the waterfall
/// of its phases, each hop's request and response, the certificate chain and curl's log.
func detailLines(_ record: TraceRecord, state: ConsoleState, width: Int) -> [StyledLine] {
    detailHeading(record, state: state, width: width)
        + detailSection("Phases") + phaseLines(record.attempt, glyphs: state.glyphs, width: width)
        + droppedDetailLines(record, state: state)
        + hopLines(record.attempt, glyphs: state.glyphs)
        + certificateLines(record.attempt, now: state.now)
        + logLines(record.attempt)
}

/// A section of the detail: a blank line and its title.
private func detailSection(_ title: String) -> [StyledLine] {
    [[], [Span(" " + title, .fg(.cyan, bold: true))]]
}

/// What was asked and where the address came from, the outcome in a line, and the error.
private func detailHeading(_ record: TraceRecord, state: ConsoleState, width: Int) -> [StyledLine] {
    let g = state.glyphs
    let attempt = record.attempt
    var lines: [StyledLine] = []
    var head: StyledLine = [Span(" "), Span(attempt.scenario.rawValue, .bold), Span("  " + attempt.url)]
    if let ip = attempt.ip { head.append(Span(g.arrow + ip.text + " (\(attempt.ipSource?.rawValue ?? "?"))", .dim)) }
    lines.append(head)
    if let origin = addressOrigin(attempt, resolution: state.runs.first { $0.id == record.runID }?.resolution) {
        lines.append([Span("  " + origin, .dim)])
    }
    var outcome: StyledLine = [Span(" "), Span(attempt.outcome.rawValue, outcomeStyle(attempt.outcome))]
    if let status = attempt.status { outcome.append(Span(" \(status)", .bold)) }
    if let version = attempt.httpVersion {
        outcome.append(Span(version.hasPrefix("HTTP") ? " " + version : " HTTP/" + version, .dim))
    }
    outcome.append(
        Span(
            g.separator + formatMilliseconds(attempt.timings.total) + g.separator
                + clockTime(record.time, state.timeZone), .dim))
    outcome.append(Span(g.separator + "SNI ", .dim))
    outcome.append(Span(attempt.sni ?? "(none sent)"))
    if let checked = attempt.checkedName {
        outcome.append(Span(g.separator + "name checked ", .dim))
        outcome.append(Span(checked))
    }
    lines.append(outcome)
    if let error = attempt.error {
        for text in wrap(error.sentence(.console), width: width - 3) { lines.append([Span("  " + text, .fg(.red))]) }
    }
    return lines
}

/// Where the attempt's address came from, in the words of its source: the HTTPDNS provider that
/// gave it (and the wire profile its requests followed, `--sdk`), the cache of an earlier answer,
/// or the system resolver; nil when the attempt had no address.
func addressOrigin(_ attempt: Attempt, resolution: HostResolution?) -> String? {
    guard attempt.ip != nil, let source = attempt.ipSource else { return nil }
    let httpdns = resolution?.httpdns
    switch source {
    case .httpdns:
        return httpdns.map { "addresses from HTTPDNS \($0.provider), ttl \($0.ttl.shown)" }
    case .cache:
        return "address from the cache" + (httpdns.map { " (an earlier HTTPDNS \($0.provider) answer)" } ?? "")
    case .system:
        return "address from the system resolver, not HTTPDNS"
    }
}

/// The waterfall, to scale: one row per phase, the bar placed where the phase happened.
private func phaseLines(_ attempt: Attempt, glyphs g: Glyphs, width: Int) -> [StyledLine] {
    var lines: [StyledLine] = []
    let total = max(attempt.timings.total, 0.001)
    let labelWidth = 11
    let numbersWidth = 18
    let barWidth = max(10, width - labelWidth - numbersWidth - 4)
    let answered = attempt.status != nil || attempt.hops.contains { $0.responseBytes > 0 }
    for phase in phases(attempt.timings, answered: answered, secure: attempt.scenario != .directHTTP) {
        let start = Int((phase.start / total * Double(barWidth)).rounded(.down))
        var length = Int(((phase.end - phase.start) / total * Double(barWidth)).rounded())
        if phase.end > phase.start { length = max(1, length) }
        length = min(length, barWidth - min(start, barWidth - 1))
        var bar = String.UnicodeScalarView()
        for column in 0..<barWidth {
            bar.append(column >= start && column < start + length ? g.barFull : " ")
        }
        let numbers = String(cFormat: "%7.1f to %7.1f", phase.start, phase.end)
        lines.append([
            Span(" " + phase.name.padded(labelWidth)), Span(numbers.padded(numbersWidth), .dim), Span(" "),
            Span(String(bar), phaseStyle(phase.name)),
        ])
    }
    lines.append([
        Span(" " + "total".padded(labelWidth), .bold), Span(String(cFormat: "%18.1f ms", attempt.timings.total), .bold),
    ])
    return lines
}

/// Why an old trace shows no headers, certificates or log.
private func droppedDetailLines(_ record: TraceRecord, state: ConsoleState) -> [StyledLine] {
    guard !record.detailed else { return [] }
    return detailSection("Details dropped") + [
        [
            Span(
                "  Only the newest \(state.maxTraceDetails) traces keep headers, certificates and curl's log (--max-trace-details).",
                .dim)
        ]
    ]
}

/// Each hop: what was asked of whom, its outcome, and the headers both ways.
private func hopLines(_ attempt: Attempt, glyphs g: Glyphs) -> [StyledLine] {
    var lines: [StyledLine] = []
    for (index, hop) in attempt.hops.enumerated() {
        let label = attempt.hops.count > 1 ? "Hop \(index + 1) of \(attempt.hops.count): " : "Request: "
        lines += detailSection(label + hop.method + " " + hop.url)
        var facts = "  original \(hop.originalURL)" + g.separator + "resolver \(hop.resolver)"
        if let ip = hop.remoteIP { facts += g.separator + "\(ip):\(hop.remotePort.map(String.init) ?? "?")" }
        lines.append([Span(facts, .dim)])
        var result: StyledLine = [Span("  "), Span(hop.outcome.rawValue, outcomeStyle(hop.outcome))]
        if let status = hop.status { result.append(Span(" \(status)")) }
        result.append(
            Span(g.separator + "\(hop.responseBytes) bytes" + g.separator + formatMilliseconds(hop.timings.total), .dim)
        )
        lines.append(result)
        if let error = hop.error { lines.append([Span("  " + error.sentence(.console), .fg(.red))]) }
        lines.append([Span("  Request headers", .bold)])
        for header in hop.requestHeaders { lines.append(headerLine(header)) }
        if hop.requestHeaders.isEmpty { lines.append([Span("    (none recorded)", .dim)]) }
        lines.append([Span("  Response headers", .bold)])
        for header in hop.responseHeaders { lines.append(headerLine(header)) }
        if hop.responseHeaders.isEmpty { lines.append([Span("    (no response)", .dim)]) }
    }
    return lines
}

/// The chain the server sent and the name it was checked against.
private func certificateLines(_ attempt: Attempt, now: Date) -> [StyledLine] {
    guard let certificate = attempt.certificate else {
        guard attempt.scenario != .directHTTP else { return [] }
        return detailSection("Certificate chain") + [
            [Span("  (none: the handshake did not get that far, or plain HTTP)", .dim)]
        ]
    }
    var lines = detailSection("Certificate chain")
    let verified = certificate.verifyResult == 0
    lines.append([
        Span("  checked against "), Span(attempt.checkedName ?? "(nothing)", .bold), Span(": "),
        Span(certificate.verifyMessage, verified ? .fg(.green, bold: true) : .fg(.red, bold: true)),
    ])
    for (index, cert) in certificate.chain.enumerated() {
        lines.append([Span("  \(index) ", .dim), Span(cert.subject, .bold)])
        let names = cert.subjectAlternativeNames.joined(separator: ", ")
        lines.append([Span("    names: ", .dim), Span(names.isEmpty ? "(none)" : names)])
        lines.append([Span("    issuer: ", .dim), Span(cert.issuer)])
        lines.append([
            Span("    valid: ", .dim),
            Span(
                dayString(cert.notBefore) + " to " + dayString(cert.notAfter), cert.notAfter < now ? .fg(.red) : .plain),
        ])
    }
    return lines
}

/// curl's log of every hop, each line at its time.
private func logLines(_ attempt: Attempt) -> [StyledLine] {
    let log = attempt.hops.flatMap(\.log)
    return detailSection("curl log (\(log.count) lines)")
        + log.map { entry in
            [
                // The widest kind ("header-out") is 10 columns; one more keeps it off the text.
                Span(String(cFormat: "  %8.1f ", entry.atMs), .dim), Span(entry.kind.rawValue.padded(11), .dim),
                Span(entry.text),
            ]
        }
}

/// A URL without `https://`: the scheme shows in the scenario, the room goes to the host.
func withoutScheme(_ url: String) -> String {
    guard let range = url.firstRange(of: "://") else { return url }
    return String(url[range.upperBound...])
}

private func headerLine(_ header: HeaderField) -> StyledLine {
    [Span("    " + header.name + ": ", .fg(.cyan)), Span(header.value)]
}

private func phaseStyle(_ name: String) -> CellStyle {
    switch name {
    case "DNS": .fg(.magenta)
    case "connect": .fg(.yellow)
    case "TLS": .fg(.blue)
    case "first byte": .fg(.green)
    case "transfer": .fg(.cyan)
    // What was under way when the exchange ended without an answer.
    default: .fg(.red)
    }
}

/// A certificate's day as `2026-11-27` (UTC), from the one Gregorian calendar of FoundationGaps.
private func dayString(_ date: Date) -> String {
    let (year, month, day) = HTTPDate.day(of: date)
    return String(cFormat: "%04d-%02d-%02d", year, month, day)
}

/// Adds an attempt to the traces, keeping the filter's matches and the selection in step.
public func recordTrace(_ attempt: Attempt, runID: Int, state: inout ConsoleState) {
    let record = TraceRecord(
        sequence: state.nextTraceSequence, runID: runID, attempt: attempt,
        time: attempt.hops.first?.startedAt ?? state.now)
    state.nextTraceSequence += 1
    let dropped = state.traces.append(record)
    // The trace that just left the detail window keeps its summary and timings only.
    let leaving = state.traces.count - 1 - state.maxTraceDetails
    if leaving >= 0 { state.traces[leaving].dropDetail() }
    if dropped != nil, state.runContexts.count > 256 {
        // Contexts of runs whose traces have all been dropped are not needed any more.
        let oldest = state.traces[0].runID
        state.runContexts = state.runContexts.filter { $0.key >= oldest }
    }
    if var matches = state.tracesView.matches {
        if let dropped, matches.first == dropped.sequence { matches.removeFirst() }
        let filter = (state.filters[.traces] ?? "").lowercased()
        if record.matches(filter) {
            matches.append(record.sequence)
            if state.tracesView.cursor.selected > 0 { state.tracesView.cursor.selected += 1 }
        }
        state.tracesView.matches = matches
    } else if state.tracesView.cursor.selected > 0 || state.traceDetail.sequence != nil {
        // Keep the same trace selected while new ones arrive on top.
        state.tracesView.cursor.selected = min(state.tracesView.cursor.selected + 1, state.traces.count - 1)
    }
}

// MARK: - The features

/// The traces view (3): every request, newest first.
enum TracesFeature: ConsoleFeature {
    static let view = ConsoleView.traces
    static let isTab = true
    static let filters = true
    static let initialState = TracesViewState()

    static let scope: KeyScope? = .traces
    static let bindings: [KeyBinding] = [
        KeyBinding(keys: [.enter], command: .open, scope: .traces, summary: "open the selected trace"),
        KeyBinding(
            keys: [.character("c")], command: .reproduce, scope: .traces,
            summary: "copy the command that reproduces the selected trace"),
        .doctor(in: .traces),
        KeyBinding(keys: [.character("3")], command: .showView(.traces), scope: .global, summary: "Traces view"),
    ]

    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] {
        if case .exported(let paths) = action {
            recordExport("\(state.listedTraces.count) traces to " + filesSentence(paths), state: &state)
        }
        return []
    }

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        guard command == .open else { return nil }
        if let record = state.traceAt(row: state.tracesView.cursor.selected) {
            state.traceDetail.sequence = record.sequence
            state.traceDetail.scroll = 0
        }
        return []
    }

    static func move(by delta: Int, state: inout ConsoleState) {
        state.tracesView.cursor.step(by: delta, count: state.traceListCount, visible: listRows(state))
    }

    static func filterChanged(_ state: inout ConsoleState) {
        let filter = (state.filters[.traces] ?? "").lowercased()
        if filter.isEmpty {
            state.tracesView.matches = nil
        } else if let previous = state.tracesView.matches, filter.contains(state.tracesView.filterMatched) {
            // A longer filter only narrows: look again at what matched before, not at everything.
            state.tracesView.matches = previous.filter { state.trace(sequence: $0)?.matches(filter) ?? false }
        } else {
            var matches: [Int] = []
            for index in 0..<state.traces.count where state.traces[index].matches(filter) {
                matches.append(state.traces[index].sequence)
            }
            state.tracesView.matches = matches
        }
        state.tracesView.filterMatched = filter
        state.tracesView.cursor = ListCursor()
    }

    static func bodyResized(_ state: inout ConsoleState) {
        state.tracesView.cursor.clamp(count: state.traceListCount, visible: listRows(state))
    }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        drawTracesView(state, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        [
            (.open, "open"), (.reproduce, "reproduce"), (.filter, "filter"), (.export, "export"),
            (.nextView, "next view"),
        ]
    }

    /// The trace whose detail is open, or else the one selected.
    static func selectedTrace(_ state: ConsoleState) -> TraceRecord? {
        state.traceDetail.sequence.flatMap { state.trace(sequence: $0) }
            ?? state.traceAt(row: state.tracesView.cursor.selected)
    }

    static func selectedHost(_ state: ConsoleState) -> String? {
        guard let record = selectedTrace(state) else { return nil }
        return state.runContexts[record.runID]?.host ?? URLComponents(string: record.attempt.url)?.host
    }

    static func reproducible(_ state: ConsoleState) -> (attempts: [Attempt], resolution: HostResolution?) {
        let record = selectedTrace(state)
        return (
            record.map { [$0.attempt] } ?? [],
            record.flatMap { record in state.runs.first { $0.id == record.runID }?.resolution }
        )
    }
}

/// One trace's detail (Enter), over the traces list while open.
enum TraceDetailFeature: ConsoleFeature {
    static let view = ConsoleView.traces
    static let isOverlay = true
    static let sharesKeysWithView = true
    static let initialState = TraceDetailState()

    static func isOpen(_ state: ConsoleState) -> Bool { state.traceDetail.sequence != nil }
    static let scope: KeyScope? = .traceDetail
    static let bindings: [KeyBinding] = [
        KeyBinding(
            keys: [.escape, .backspace], command: .back, scope: .traceDetail, summary: "back to the traces list"),
        KeyBinding(
            keys: [.character("c")], command: .reproduce, scope: .traceDetail,
            summary: "copy the command that reproduces this trace"),
        KeyBinding(keys: [.up, .character("k")], command: .up, scope: .traceDetail, summary: "scroll up"),
        KeyBinding(keys: [.down, .character("j")], command: .down, scope: .traceDetail, summary: "scroll down"),
    ]

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        if let delta = moveDelta(command, state: state) {
            state.traceDetail.scroll = max(0, state.traceDetail.scroll &+ delta)
            return []
        }
        switch command {
        case .back:
            state.traceDetail.sequence = nil
            return []
        case .filter:
            // The filter is of the list: back to it, and on to the filter line.
            state.traceDetail.sequence = nil
            return nil
        default:
            return nil
        }
    }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        guard let sequence = state.traceDetail.sequence, let record = state.trace(sequence: sequence) else {
            // The trace left the ring while open: the list it was in.
            return TracesFeature.draw(state, rows: rows, into: &buffer)
        }
        drawTraceDetail(state, record: record, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        [(.back, "back"), (.reproduce, "reproduce"), (.down, "scroll"), (.export, "export"), (.nextView, "next view")]
    }

    static func scrolledLines(_ state: ConsoleState, width: Int) -> (count: Int, scroll: Int)? {
        guard let sequence = state.traceDetail.sequence, let record = state.trace(sequence: sequence) else {
            return nil
        }
        return (detailLines(record, state: state, width: width).count, state.traceDetail.scroll)
    }
}

extension KeyScope {
    public static let traceDetail = KeyScope("Trace detail")
}

extension KeyScope {
    public static let traces = KeyScope("Traces view")
}

extension ConsoleView {
    public static let traces = ConsoleView("Traces")
}

/// The traces list's filter matches and selection; the traces are `ConsoleState.traces`.
public struct TracesViewState: Sendable, Equatable {
    /// Sequences of the traces matching the filter, oldest first; nil when there is no filter.
    public var matches: [Int]?
    /// The filter `matches` was computed for.
    var filterMatched = ""
    public var cursor = ListCursor()
}

/// Which trace's detail is open, and how far it is scrolled.
public struct TraceDetailState: Sendable, Equatable {
    /// The sequence of the trace whose detail is open.
    public var sequence: Int?
    public var scroll = 0
}

extension ConsoleState {
    /// The traces list's state.
    public var tracesView: TracesViewState {
        get { features[TracesFeature.self] }
        _modify { yield &features[TracesFeature.self] }
    }

    /// The trace detail's state.
    public var traceDetail: TraceDetailState {
        get { features[TraceDetailFeature.self] }
        _modify { yield &features[TraceDetailFeature.self] }
    }

    /// The number of traces the traces view lists (after the filter).
    public var traceListCount: Int { tracesView.matches?.count ?? traces.count }

    /// The trace at `row` of the traces list (row 0 is the newest).
    public func traceAt(row: Int) -> TraceRecord? {
        let count = traceListCount
        guard row >= 0, row < count else { return nil }
        if let matches = tracesView.matches {
            return trace(sequence: matches[count - 1 - row])
        }
        return traces[traces.count - 1 - row]
    }

    /// The trace with a given sequence number, if still kept.
    public func trace(sequence: Int) -> TraceRecord? {
        guard !traces.isEmpty else { return nil }
        let oldest = traces[0].sequence
        let index = sequence - oldest
        guard index >= 0, index < traces.count else { return nil }
        return traces[index]
    }

    /// The traces the traces view lists, oldest first (what `e` exports).
    public var listedTraces: [TraceRecord] {
        if let matches = tracesView.matches { return matches.compactMap { trace(sequence: $0) } }
        return traces.elements
    }
}

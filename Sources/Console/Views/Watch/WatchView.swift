// The watch view (`w`): the probed host re-probed every few seconds, each scenario's outcome
// strip and latency sparkline, and the rounds where the verdict changed (Watch.swift's history).
import FoundationEssentials
import NameResolution
import Probe
import TerminalText

/// A watch of one host: its rounds so far and when the next one starts.
public struct WatchState: Sendable {
    /// Seconds between rounds unless changed with `+` and `-`.
    public static let defaultInterval = 5
    /// The shortest and longest interval `+` and `-` reach.
    public static let intervals = 1...3600

    /// What each round probes (what the user typed).
    public var target: String
    public var interval = defaultInterval
    public var history: WatchHistory
    /// The probe of the round under way.
    public var pendingRunID: Int?
    var roundStartedAt: Date
    public var nextRoundAt: Date
    /// Whether the view is on screen (the watch goes on while the user looks elsewhere).
    public var shown = true
    /// Rows the list of changes is scrolled by.
    public var scroll = 0
    /// Why the last round gave no report, when it did not.
    public var lastFailure: String?

    public init(target: String, now: Date, capacity: Int = WatchHistory.defaultCapacity) {
        self.target = target
        history = WatchHistory(capacity: capacity)
        roundStartedAt = now
        nextRoundAt = now
    }
}

/// Starts watching the selected probe run's target (or shows the watch already running).
func openWatch(_ state: inout ConsoleState) -> [ConsoleEffect] {
    if let watch = state.watch {
        state.watch?.shown = true
        state.message = "Watching \(watch.target); Esc in this view stops it"
        return []
    }
    let runs = state.listedRuns
    guard state.probeView.cursor.selected < runs.count else {
        state.message = "Nothing to watch: probe a host first (p), then press w"
        return []
    }
    let target = runs[state.probeView.cursor.selected].target
    state.watch = WatchState(target: target, now: state.now)
    state.message = "Watching \(target) every \(WatchState.defaultInterval)s"
    return startWatchRound(&state)
}

/// Starts the next round when it is due and none is under way.
func watchTick(_ state: inout ConsoleState) -> [ConsoleEffect] {
    guard let watch = state.watch, watch.pendingRunID == nil, state.now >= watch.nextRoundAt else { return [] }
    return startWatchRound(&state)
}

private func startWatchRound(_ state: inout ConsoleState) -> [ConsoleEffect] {
    guard var watch = state.watch, watch.pendingRunID == nil else { return [] }
    let id = state.nextRunID
    state.nextRunID += 1
    watch.pendingRunID = id
    watch.roundStartedAt = state.now
    watch.nextRoundAt = state.now.addingTimeInterval(Double(watch.interval))
    state.watch = watch
    return [.probe(runID: id, target: watch.target)]
}

/// Records a watch round when its probe finishes; says so when the verdict changed.
func observeWatchProbe(_ event: ProbeEvent, runID: Int, state: inout ConsoleState) {
    guard var watch = state.watch, watch.pendingRunID == runID else { return }
    switch event {
    case .finished(let report):
        let round = watch.history.record(
            WatchRound.summary(of: report, round: watch.history.total + 1, at: watch.roundStartedAt))
        watch.pendingRunID = nil
        watch.lastFailure = nil
        if !round.changes.isEmpty {
            state.message = "Round \(round.round) changed: " + round.changes.joined(separator: "; ")
            watch.scroll = 0
        }
    case .rejected(let error):
        watch.pendingRunID = nil
        watch.lastFailure = error.reason
    case .resolved, .attemptStarted, .attemptFinished:
        return
    }
    state.watch = watch
}

/// A watch round's probe ended; one that ended without a report frees the watch for the next.
func watchProbeEnded(runID: Int, state: inout ConsoleState) {
    guard var watch = state.watch, watch.pendingRunID == runID else { return }
    watch.pendingRunID = nil
    watch.lastFailure = watch.lastFailure ?? "the round's probe ended without a verdict"
    state.watch = watch
}

/// A command while the watch view is on screen; nil when the view does not handle it.
func watchCommand(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
    guard var watch = state.watch, watch.shown else { return nil }
    switch command {
    case .back:
        state.watch = nil
        state.message = "Stopped watching \(watch.target) after \(watch.history.total) rounds"
        return []
    case .watch:
        watch.shown = false
        state.message = "Still watching \(watch.target) (w shows it, Esc there stops it)"
    case .lengthenWatchInterval, .shortenWatchInterval:
        let step = command == .lengthenWatchInterval ? 1 : -1
        let interval = min(WatchState.intervals.upperBound, max(WatchState.intervals.lowerBound, watch.interval + step))
        watch.nextRoundAt = watch.nextRoundAt.addingTimeInterval(Double(interval - watch.interval))
        watch.interval = interval
        state.message = "A round every \(interval)s"
    case .up: watch.scroll = max(0, watch.scroll - 1)
    case .down: watch.scroll = min(max(0, watch.history.changed.count - 1), watch.scroll + 1)
    case .top: watch.scroll = 0
    case .export:
        let rounds = Array(watch.history.rounds)
        guard !rounds.isEmpty else {
            state.message = "Nothing to export: no round has finished yet"
            return []
        }
        let path = exportBase(state, kind: "watch") + ".jsonl"
        state.message = "Exporting \(rounds.count) rounds to \(path)\u{2026}"
        return [.exportWatch(rounds, path: path)]
    default:
        return nil
    }
    state.watch = watch
    return []
}

// MARK: - Drawing

/// One round's mark for a scenario: a shape that says the outcome without its color.
private func watchMark(_ outcome: Outcome?, ascii: Bool) -> (Unicode.Scalar, CellStyle) {
    switch outcome {
    case nil: (" ", .plain)
    case .ok?: (ascii ? "#" : "\u{2588}", .fg(.green))
    case .httpStatus?: (ascii ? "~" : "\u{2592}", .fg(.yellow))
    case .skipped?: (ascii ? "." : "\u{00B7}", .dim)
    default: ("x", .fg(.red, bold: true))
    }
}

private let sparkUnicode: [Unicode.Scalar] = [
    "\u{2581}", "\u{2582}", "\u{2583}", "\u{2584}", "\u{2585}", "\u{2586}", "\u{2587}", "\u{2588}",
]
private let sparkASCII: [Unicode.Scalar] = ["_", ".", "-", ":", "=", "+", "*", "#"]

/// Draws the watch view over the probe view's body. Reads only the rounds that fit the width
/// and the changes that fit the height, so its cost does not grow with the history.
func drawWatchView(_ state: ConsoleState, watch: WatchState, rows: Range<Int>, into buffer: inout CellBuffer) {
    var y = rows.lowerBound
    drawWatchTitle(state, watch: watch, y: &y, into: &buffer)
    drawWatchStrips(state, watch: watch, rows: rows, y: &y, into: &buffer)
    if y < rows.upperBound { drawWatchLegend(state.glyphs, y: &y, into: &buffer) }
    guard y + 1 < rows.upperBound else { return }
    drawWatchChanges(state, watch: watch, rows: rows, y: &y, into: &buffer)
}

/// What is watched, how often, and when the next round starts; then a rule.
private func drawWatchTitle(_ state: ConsoleState, watch: WatchState, y: inout Int, into buffer: inout CellBuffer) {
    let g = state.glyphs
    var title: StyledLine = [
        Span(" Watching ", .bold), Span(TerminalText.escaped(watch.target), .bold),
        Span(" every \(watch.interval)s" + g.separator + "round \(watch.history.total)", .dim),
    ]
    if watch.pendingRunID != nil {
        title.append(Span(g.separator + "probing\(g.ellipsis)", .fg(.yellow)))
    } else {
        let left = max(0, Int(watch.nextRoundAt.timeIntervalSince(state.now).rounded(.up)))
        title.append(Span(g.separator + "next in \(left)s", .dim))
    }
    buffer.draw(title, x: 0, y: y, width: buffer.width)
    y += 1
    buffer.fill(x: 0, y: y, count: buffer.width, character: g.horizontal, style: .dim)
    y += 1
}

/// The sparkline's levels, lowest first.
private func sparks(_ glyphs: Glyphs) -> [Unicode.Scalar] { glyphs == .ascii ? sparkASCII : sparkUnicode }

/// The header, the last round's failure, and per scenario its strip of outcomes (one mark per
/// round, newest at the right) over its sparkline of times.
private func drawWatchStrips(
    _ state: ConsoleState, watch: WatchState, rows: Range<Int>, y: inout Int, into buffer: inout CellBuffer
) {
    let g = state.glyphs
    let history = watch.history
    let labelWidth = 14
    let summaryWidth = 22
    let stripX = 1 + labelWidth + summaryWidth
    let stripWidth = max(1, buffer.width - stripX - 1)
    let shown = min(history.rounds.count, stripWidth)
    let first = history.rounds.count - shown
    // Each shown round's cells, read once: the strips and sparklines of every scenario use them.
    let shownCells = (first..<(first + shown)).map { history.rounds[$0].cells }
    drawHeader(
        [
            ("SCENARIO", labelWidth - 1), ("LAST ROUND", summaryWidth - 1),
            ("EACH ROUND, OLDEST\(g.arrow)NEWEST", stripWidth),
        ], y: y, into: &buffer)
    y += 1
    if let failure = watch.lastFailure, y < rows.upperBound {
        buffer.draw([Span(" last round failed: ", .dim), Span(failure, .fg(.red))], x: 0, y: y, width: buffer.width)
        y += 1
    }
    for scenario in Scenario.allCases {
        guard y + 1 < rows.upperBound else { break }
        let last = history.rounds.last?.cell(scenario)
        var summary = last?.outcome.rawValue ?? "-"
        if let status = last?.status { summary += " \(status)" }
        if let ms = last?.ms { summary += " " + formatMilliseconds(ms) }
        buffer.put(scenario.rawValue, x: 1, y: y, limit: labelWidth - 1)
        buffer.put(
            g.clip(summary, summaryWidth - 1), x: 1 + labelWidth, y: y,
            style: last.map { outcomeStyle($0.outcome) } ?? .dim)
        let cells = shownCells.map { cells in cells.first { $0.scenario == scenario } }
        for (offset, cell) in cells.enumerated() {
            let (mark, style) = watchMark(cell?.outcome, ascii: g == .ascii)
            buffer[stripX + offset, y] = Cell(mark, style: style)
        }
        y += 1
        drawSparkline(
            cells.map { $0?.ms }, glyphs: g, x: stripX, labelX: 1 + labelWidth, labelWidth: summaryWidth - 1, y: y,
            into: &buffer)
        y += 1
    }
}

/// One scenario's times, each round's scaled between the lowest and highest shown, with the
/// range in words at `labelX`; nothing when no round has a time.
private func drawSparkline(
    _ times: [Double?], glyphs: Glyphs, x: Int, labelX: Int, labelWidth: Int, y: Int, into buffer: inout CellBuffer
) {
    let known = times.compactMap { $0 }
    guard let lowest = known.min(), let highest = known.max(), highest > 0 else { return }
    let sparks = sparks(glyphs)
    buffer.put(
        "\(formatMilliseconds(lowest)) to \(formatMilliseconds(highest))", x: labelX, y: y, style: .dim,
        limit: labelWidth)
    let span = highest - lowest
    for (offset, time) in times.enumerated() {
        guard let ms = time else { continue }
        let level = span > 0 ? Int(((ms - lowest) / span * Double(sparks.count - 1)).rounded()) : 0
        buffer[x + offset, y] = Cell(sparks[max(0, min(sparks.count - 1, level))], style: .fg(.cyan))
    }
}

/// What each mark and the sparkline's levels mean.
private func drawWatchLegend(_ g: Glyphs, y: inout Int, into buffer: inout CellBuffer) {
    let sparks = sparks(g)
    let marks: [(Outcome?, String)] = [(.ok, "ok"), (.httpStatus, "HTTP error status"), (.connectFailed, "failed")]
    var legend: StyledLine = [Span(" ")]
    for (outcome, words) in marks + [(.skipped, "skipped")] {
        let (mark, style) = watchMark(outcome, ascii: g == .ascii)
        legend += [Span(String(mark), style), Span(" \(words)   ", .dim)]
    }
    legend.append(Span("time: low \(sparks[0]) to high \(sparks[sparks.count - 1])", .dim))
    buffer.draw(legend, x: 0, y: y, width: buffer.width)
    y += 1
}

/// The rounds where the verdict changed, newest first, from the watch's scroll.
private func drawWatchChanges(
    _ state: ConsoleState, watch: WatchState, rows: Range<Int>, y: inout Int, into buffer: inout CellBuffer
) {
    let g = state.glyphs
    let history = watch.history
    buffer.fill(x: 0, y: y, count: buffer.width, character: g.horizontal, style: .dim)
    y += 1
    let changed = history.changed
    buffer.draw(
        [
            Span(" Rounds where the verdict changed", .bold),
            Span(" (\(changed.count) kept, newest first)", .dim),
        ], x: 0, y: y, width: buffer.width)
    y += 1
    if changed.isEmpty, y < rows.upperBound {
        buffer.put(
            history.total == 0 ? " waiting for the first round\(g.ellipsis)" : " none yet: every round agreed",
            x: 0, y: y, style: .dim)
        return
    }
    let scroll = max(0, min(watch.scroll, changed.count - 1))
    var index = changed.count - 1 - scroll
    while index >= 0 && y < rows.upperBound {
        let round = changed[index]
        let said = round.changes.joined(separator: "; ").replacing(" \u{2192} ", with: g.arrow)
        let style: CellStyle = round.recommended == nil ? .fg(.red) : .fg(.green)
        for (part, text) in wrap(said, width: buffer.width - 19).enumerated() where y < rows.upperBound {
            let lead: StyledLine =
                part == 0
                ? [Span(" #\(round.round)".padded(8), .bold), Span(clockTime(round.at, state.timeZone) + "  ", .dim)]
                : [Span(String(repeating: " ", count: 18))]
            buffer.draw(lead + [Span(text, style)], x: 0, y: y, width: buffer.width)
            y += 1
        }
        index -= 1
    }
}

// MARK: - The feature

/// The watch (`w`): its rounds go on while it exists; its view is over the probe view when shown.
enum WatchFeature: ConsoleFeature {
    static let view = ConsoleView.probe
    static let isOverlay = true
    static let initialState: WatchState? = nil

    static func isOpen(_ state: ConsoleState) -> Bool { state.watch?.shown == true }
    static let scope: KeyScope? = .watchView
    static let bindings: [KeyBinding] = [
        KeyBinding(keys: [.escape], command: .back, scope: .watchView, summary: "stop watching"),
        KeyBinding(
            keys: [.character("w")], command: .watch, scope: .watchView,
            summary: "hide; the watch goes on"),
        KeyBinding(
            keys: [.character("+"), .character("=")], command: .lengthenWatchInterval, scope: .watchView,
            summary: "1 s more between rounds"),
        KeyBinding(
            keys: [.character("-")], command: .shortenWatchInterval, scope: .watchView,
            summary: "1 s less between rounds"),
        KeyBinding(
            keys: [.character("e")], command: .export, scope: .watchView,
            summary: "export the rounds (JSON Lines)"),
    ]

    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] {
        switch action {
        case .tick: return watchTick(&state)
        case .probeEvent(let runID, let event): observeWatchProbe(event, runID: runID, state: &state)
        case .probeEnded(let runID): watchProbeEnded(runID: runID, state: &state)
        case .watchExported(let path):
            recordExport(
                "\(state.watch?.history.rounds.count ?? 0) watch rounds to \(path)", host: state.watch?.target ?? "",
                state: &state)
        default: break
        }
        return []
    }

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        watchCommand(command, state: &state)
    }

    static func hostLineOpening(_ state: inout ConsoleState) {
        if state.watch?.shown == true { state.watch?.shown = false }
    }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        guard let watch = state.watch else { return }
        drawWatchView(state, watch: watch, rows: rows, into: &buffer)
    }

    static func tabBarTag(_ state: ConsoleState) -> Span? {
        guard let watch = state.watch, !watch.shown else { return nil }
        return Span("watching \(watch.target) every \(watch.interval)s (w)", .fg(.cyan))
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        [
            (.lengthenWatchInterval, "slower"), (.shortenWatchInterval, "faster"), (.export, "export"),
            (.watch, "hide"), (.back, "stop"),
        ]
    }
}

extension KeyScope {
    public static let watchView = KeyScope("Watch view (w)")
}

extension ConsoleState {
    /// The watch (`w`): rounds go on while it exists; its view is over the probe view when shown.
    public var watch: WatchState? {
        get { features[WatchFeature.self] }
        _modify { yield &features[WatchFeature.self] }
    }
}

extension Command {
    /// Watch the selected host, and the watch view's own commands.
    public static let watch = Command("watch")
    public static let lengthenWatchInterval = Command("watch-slower")
    public static let shortenWatchInterval = Command("watch-faster")
}

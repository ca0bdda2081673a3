// Actions in, effects out: the only place the console's state changes. Keys go through the
// key map; engine events arrive as actions; what must reach the engine leaves as effects.
import Doctor
import Foundation
import NameResolution
import Probe

/// Something that happened: a key, a tick of the clock, an engine event.
public enum ConsoleAction: Sendable {
    case key(Key)
    case resize(TerminalSize)
    /// The clock moved (once a second when idle), so countdowns tick.
    case tick(Date)
    case probeEvent(runID: Int, ProbeEvent)
    /// The probe's stream ended (after its last event).
    case probeEnded(runID: Int)
    case cacheEntries([CacheEntrySnapshot])
    case resolverEvent(ResolverEvent)
    case labFaultChanged(LabFault?)
    case exported([String])
    case exportFailed(String)
    /// A line for the status bar.
    case message(String)
    /// A signal asked the console to stop.
    case terminate
    /// The screen copied text to the clipboard (true), or the terminal does not allow it.
    case clipboardCopied(Bool)
    /// Every provider's answer for the host the compare view asked about.
    case providersCompared(ProviderComparison)
    /// The engine measured the IP view's addresses (`request` says which asking it answers).
    case ipsRanked(request: Int, IPRanking)
    /// The watch's rounds were written to this file.
    case watchExported(String)
    /// One check of the doctor's run `run` answered.
    case doctorFinding(run: Int, DoctorFinding)
    /// The doctor's run `run` ended with this report.
    case doctorFinished(run: Int, DoctorReport)
    /// The doctor's report was written to this file.
    case doctorExported(String)
}

/// Work for the outside world, done by the runner against the engine.
public enum ConsoleEffect: Sendable, Equatable {
    case probe(runID: Int, target: String)
    case loadCache
    case flush(String?)
    case refresh(String)
    case setFamily(AddressFamily)
    case setReuseExpired(Bool)
    case setLabFault(LabFault)
    case export([URLReport], basePath: String)
    /// Put text on the terminal's clipboard (OSC 52) when the terminal allows it.
    case copyToClipboard(String)
    /// Ask every configured provider for a host (the compare view).
    case compareProviders(host: String)
    /// Time a TCP connect to every address of a resolution, for the IP view.
    case rankIPs(request: Int, HostResolution, port: Int, attempts: [Attempt])
    /// Probe one technique against one address (the IP view's Enter).
    case probeIP(runID: Int, target: String, scenario: Scenario, ip: IPAddress)
    /// Write the watch's rounds as JSON Lines.
    case exportWatch([WatchRound], path: String)
    /// Run every doctor check, its findings and report coming back tagged with `run`.
    case runDoctor(run: Int)
    /// Write the doctor's report as JSON.
    case exportDoctor(DoctorReport, path: String)
    case quit
}

/// Applies one action to the state.
///
/// - Returns: the effects the runner must carry out.
public func reduce(into state: inout ConsoleState, action: ConsoleAction) -> [ConsoleEffect] {
    let message = state.message
    let effects = apply(action, to: &state)
    // A long message takes lines of its own above the status bar and so shortens the lists:
    // their selected rows stay in sight.
    if state.message != message { clampCursors(&state) }
    return effects
}

private func apply(_ action: ConsoleAction, to state: inout ConsoleState) -> [ConsoleEffect] {
    switch action {
    case .key(let key):
        return handleKey(key, state: &state)
    case .resize(let size):
        state.size = size
        clampCursors(&state)
        return []
    case .tick(let now):
        state.now = now
        // The cache view shows hit counts and refreshes as they happen.
        return (state.view == .cache ? [.loadCache] : []) + watchTick(&state)
    case .probeEvent(let runID, let event):
        let effects = applyProbeEvent(event, runID: runID, state: &state)
        observeIPViewProbe(event, runID: runID, state: &state)
        observeWatchProbe(event, runID: runID, state: &state)
        return effects
    case .probeEnded(let runID):
        watchProbeEnded(runID: runID, state: &state)
        if let index = state.runs.firstIndex(where: { $0.id == runID }), !state.runs[index].finished {
            state.runs[index].finished = true
            if state.runs[index].report == nil && state.runs[index].failure == nil {
                state.runs[index].failure = "the probe ended without a verdict"
            }
        }
        return [.loadCache]
    case .cacheEntries(let entries):
        state.cache = entries
        resortCache(&state)
        return []
    case .resolverEvent(let event):
        recordEvent(ConsoleEvent(event), state: &state)
        return [.loadCache]
    case .labFaultChanged(let fault):
        state.labFault = fault
        if let fault { state.message = "Lab fault is now \(fault.rawValue)" }
        return []
    case .exported(let paths):
        recordExport("\(state.listedTraces.count) traces to " + filesSentence(paths), state: &state)
        return []
    case .exportFailed(let reason):
        state.message = "Export failed: \(reason)"
        return []
    case .message(let text):
        state.message = text
        return []
    case .terminate:
        state.quitting = true
        return [.quit]
    case .clipboardCopied(let copied):
        state.reproducePanel?.copied = copied
        state.message =
            copied
            ? "Copied to the clipboard (OSC 52)"
            : "This terminal takes no clipboard writes (OSC 52): select the command with the mouse"
        return []
    case .providersCompared(let comparison):
        applyComparison(comparison, state: &state)
        return []
    case .ipsRanked(let request, let ranking):
        applyRanking(ranking, request: request, state: &state)
        return []
    case .watchExported(let path):
        recordExport(
            "\(state.watch?.history.rounds.count ?? 0) watch rounds to \(path)", host: state.watch?.target ?? "",
            state: &state)
        return []
    case .doctorFinding(let run, let finding):
        applyDoctorFinding(finding, run: run, state: &state)
        return []
    case .doctorFinished(let run, let report):
        applyDoctorReport(report, run: run, state: &state)
        return []
    case .doctorExported(let path):
        recordExport("the doctor's report to \(path)", state: &state)
        return []
    }
}

// MARK: - Keys

private func handleKey(_ key: Key, state: inout ConsoleState) -> [ConsoleEffect] {
    switch state.mode {
    case .probeInput, .filter:
        if let command = state.keyMap.command(for: key, in: [.typing], lab: state.engine.lab) {
            return typingCommand(command, state: &state)
        }
        if case .character(let c) = key {
            if !c.isNewline, c.unicodeScalars.allSatisfy({ $0.value >= 0x20 }) { edit(&state) { $0.insert(c) } }
            return []
        }
        // A key that types nothing (Ctrl-C) still quits: the line never traps anyone.
        if state.keyMap.command(for: key, in: [.global], lab: state.engine.lab) == .quit {
            return perform(.quit, state: &state)
        }
        return []
    case .confirmFlushAll:
        guard let command = state.keyMap.command(for: key, in: [.confirm], lab: state.engine.lab) else {
            // As on the input line, a key that is not a letter (Ctrl-C) still quits.
            if case .character = key { return [] }
            let quits = state.keyMap.command(for: key, in: [.global], lab: state.engine.lab) == .quit
            return quits ? perform(.quit, state: &state) : []
        }
        state.mode = state.modeBeforePrompt
        if command == .confirmYes {
            state.message = "Flushed every name from the cache"
            return [.flush(nil), .loadCache]
        }
        state.message = "Nothing flushed"
        return []
    case .command:
        let scopes = commandScopes(state)
        if state.reproducePanel != nil {
            let command = state.keyMap.command(for: key, in: scopes, lab: state.engine.lab)
            switch command {
            case .back: state.reproducePanel = nil
            case .up:
                let scroll = state.reproducePanel?.scroll ?? 0
                state.reproducePanel?.scroll = max(0, scroll - 1)
            case .down: state.reproducePanel?.scroll += 1
            case .help:
                state.reproducePanel = nil
                return perform(.help, state: &state)
            case .quit: return perform(.quit, state: &state)
            default: break
            }
            return []
        }
        guard let command = state.keyMap.command(for: key, in: scopes, lab: state.engine.lab) else {
            if case .character(let c) = key, c != " " {
                // Someone typing a host before pressing p learns the way in from the first letter.
                let type = state.keyMap.label(for: .typeHost, in: scopes, lab: state.engine.lab) ?? "p"
                let help = state.keyMap.label(for: .help, in: scopes, lab: state.engine.lab) ?? "?"
                state.message = "'\(c)' does nothing here: \(type) types a host, \(help) lists every key"
            }
            return []
        }
        if state.view == .doctor, let effects = doctorCommand(command, state: &state) { return effects }
        if state.view == .probe || command == .typeHost {
            // The IP and watch views sit over the probe view and take its keys first.
            if let effects = ipViewCommand(command, state: &state) ?? watchCommand(command, state: &state) {
                return effects
            }
        }
        return perform(command, state: &state)
    }
}

/// The scopes whose keys apply in command mode, nearest first: an open panel, the view over
/// the probe view, the trace detail, the view, everywhere. The hint line asks the same.
func commandScopes(_ state: ConsoleState) -> [KeyScope] {
    var scopes: [KeyScope] = []
    if state.reproducePanel != nil { return [.reproducePanel, .global] }
    if state.view == .probe && state.ipView != nil {
        scopes.append(.ipView)
    } else if state.view == .probe && state.watch?.shown == true {
        scopes.append(.watchView)
    }
    if state.view == .traces && state.detailSequence != nil { scopes.append(.traceDetail) }
    switch state.view {
    case .probe: scopes.append(.probe)
    case .cache: scopes.append(.cache)
    case .traces: scopes.append(.traces)
    case .events: scopes.append(.events)
    case .compare: scopes.append(.compare)
    case .doctor: scopes.append(.doctor)
    case .help: break
    }
    scopes.append(.global)
    return scopes
}

/// Applies an edit to the line being typed: the host line, or the filter (which then narrows
/// the list at once).
private func edit(_ state: inout ConsoleState, _ change: (inout EditedLine) -> Void) {
    if state.mode == .probeInput {
        change(&state.inputLine)
        return
    }
    change(&state.filterLine)
    state.filters[state.view] = state.filterLine.isEmpty ? nil : state.filterLine.text
    applyFilter(&state)
}

private func typingCommand(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect] {
    switch command {
    case .submit:
        if state.mode == .filter {
            state.mode = state.modeBeforePrompt
            return []
        }
        let typed = state.input.trimmingCharacters(in: .whitespaces)
        guard !typed.isEmpty else { return [] }
        let target = asciiTarget(typed)
        state.input = ""
        state.historyIndex = nil
        state.history.removeAll { $0 == target }
        state.history.append(target)
        state.mode = .command
        return startProbe(target, state: &state)
    case .cancel:
        if state.mode == .filter {
            state.filters[state.view] = nil
            applyFilter(&state)
            state.mode = state.modeBeforePrompt
        } else {
            // The text stays, dimmed, for p to pick up again; Esc once more clears it.
            state.mode = .command
            state.historyIndex = nil
        }
        return []
    case .historyPrevious, .historyNext:
        guard state.mode == .probeInput, !state.history.isEmpty else { return [] }
        var index = state.historyIndex ?? state.history.count
        index += command == .historyPrevious ? -1 : 1
        if index >= state.history.count {
            state.historyIndex = nil
            state.input = ""
        } else {
            index = max(0, index)
            state.historyIndex = index
            state.input = state.history[index]
        }
        return []
    case .deleteBackward: edit(&state) { $0.deleteBackward() }
    case .deleteForward: edit(&state) { $0.deleteForward() }
    case .deleteToStart: edit(&state) { $0.deleteToStart() }
    case .deleteWordBackward: edit(&state) { $0.deleteWordBackward() }
    case .cursorLeft: edit(&state) { $0.moveLeft() }
    case .cursorRight: edit(&state) { $0.moveRight() }
    case .lineStart: edit(&state) { $0.moveToStart() }
    case .lineEnd: edit(&state) { $0.moveToEnd() }
    default: break
    }
    return []
}

/// What was typed, with an internationalised host in its ASCII form (`IDNA`, as the probe
/// converts it): a bare name stays a bare name, a URL stays a URL.
func asciiTarget(_ typed: String) -> String {
    guard typed.unicodeScalars.contains(where: { !$0.isASCII }) else { return typed }
    if !typed.contains("/"), let ascii = IDNA.ascii(typed) { return ascii }
    return (try? ProbeURL.parse(typed))?.text ?? typed
}

private func startProbe(_ target: String, state: inout ConsoleState) -> [ConsoleEffect] {
    let id = state.nextRunID
    state.nextRunID += 1
    state.runs.append(ProbeRun(id: id, target: target, startedAt: state.now))
    if state.runs.count > state.maxRuns { state.runs.removeFirst(state.runs.count - state.maxRuns) }
    state.probeCursor = ListCursor()
    state.view = .probe
    state.message = "Probing \(target)\u{2026}"
    return [.probe(runID: id, target: target)]
}

private func perform(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect] {
    let page = max(1, bodyHeight(state) - 2)
    switch command {
    case .showView(let view):
        switchView(to: view, state: &state)
        return view == .cache ? [.loadCache] : []
    case .help:
        // Help opens at its top, however far it was scrolled last time.
        state.helpScroll = 0
        switchView(to: .help, state: &state)
    case .nextView, .previousView:
        let all = ConsoleView.tabs
        let step = command == .nextView ? 1 : all.count - 1
        switchView(to: all[((all.firstIndex(of: state.view) ?? 0) + step) % all.count], state: &state)
        return state.view == .cache ? [.loadCache] : []
    case .up: move(by: -1, state: &state)
    case .down: move(by: 1, state: &state)
    case .pageUp: move(by: -page, state: &state)
    case .pageDown: move(by: page, state: &state)
    case .top: move(by: -Int.max / 2, state: &state)
    case .bottom: move(by: Int.max / 2, state: &state)
    case .open:
        if state.view == .traces, let record = state.traceAt(row: state.traceCursor.selected) {
            state.detailSequence = record.sequence
            state.detailScroll = 0
        }
    case .back:
        if state.view == .probe && !state.input.isEmpty {
            // The second Esc: the first left the host line with its text.
            state.input = ""
            state.historyIndex = nil
        } else if state.view == .traces && state.detailSequence != nil {
            state.detailSequence = nil
        } else if !(state.filters[state.view] ?? "").isEmpty {
            state.filters[state.view] = nil
            applyFilter(&state)
        } else if state.view != .probe {
            switchView(to: .probe, state: &state)
        }
    case .filter:
        guard state.view != .help && state.view != .compare && state.view != .doctor else { return [] }
        state.modeBeforePrompt = .command
        state.mode = .filter
        state.filterLine = EditedLine(state.filters[state.view] ?? "")
        if state.view == .traces { state.detailSequence = nil }
    case .typeHost:
        switchView(to: .probe, state: &state)
        state.mode = .probeInput
        state.inputLine.moveToEnd()
    case .reprobe:
        let runs = state.listedRuns
        guard state.probeCursor.selected < runs.count else {
            state.message = "Nothing to probe again: type a host first (p)"
            return []
        }
        return startProbe(runs[state.probeCursor.selected].target, state: &state)
    case .refreshEntry:
        guard let entry = state.selectedCacheEntry else { return [] }
        state.message = "Refreshing \(entry.host) from HTTPDNS\u{2026}"
        return [.refresh(entry.host), .loadCache]
    case .flushEntry:
        guard let entry = state.selectedCacheEntry else { return [] }
        state.message = "Flushed \(entry.host)"
        return [.flush(entry.host), .loadCache]
    case .flushAll:
        state.modeBeforePrompt = state.mode
        state.mode = .confirmFlushAll
    case .sortNext:
        let all = CacheSortColumn.allCases
        state.cacheSort = all[((all.firstIndex(of: state.cacheSort) ?? 0) + 1) % all.count]
        state.cacheSortDescending = false
        resortCache(&state)
        state.message = "Sorted by \(state.cacheSort.rawValue)"
    case .sortReverse:
        state.cacheSortDescending.toggle()
        resortCache(&state)
    case .cycleFamily:
        let all = AddressFamily.allCases
        state.family = all[((all.firstIndex(of: state.family) ?? 0) + 1) % all.count]
        state.message = "Address family is now \(state.family.rawValue)"
        return [.setFamily(state.family)]
    case .toggleReuseExpired:
        state.reuseExpired.toggle()
        state.message = "Expired-IP reuse is now \(state.reuseExpired ? "on" : "off")"
        return [.setReuseExpired(state.reuseExpired)]
    case .nextLabFault:
        guard let fault = state.labFault else { return [] }
        // Shown at once, so a second press counts from this one; the lab's answer confirms it.
        state.labFault = fault.next
        return [.setLabFault(fault.next)]
    case .clearLabFault:
        guard state.labFault != nil else { return [] }
        state.labFault = LabFault.none
        return [.setLabFault(LabFault.none)]
    case .export:
        let records = state.listedTraces
        guard !records.isEmpty else {
            state.message = "Nothing to export: no traces listed"
            return []
        }
        let base = exportBase(state)
        state.message =
            "Exporting \(records.count) traces to \(filesSentence([base + ".jsonl", base + ".har"]))\u{2026}"
        return [.export(exportReports(records, state: state), basePath: base)]
    case .reproduce:
        return openReproducePanel(&state)
    case .compareProviders:
        return openCompare(&state)
    case .showIPs:
        return openIPView(&state)
    case .watch:
        return openWatch(&state)
    case .doctor:
        return openDoctor(&state)
    case .quit:
        state.quitting = true
        return [.quit]
    default:
        break
    }
    return []
}

private func switchView(to view: ConsoleView, state: inout ConsoleState) {
    state.view = view
    if state.mode == .probeInput && view != .probe { state.mode = .command }
}

/// Rows the body of a view has: the screen minus the tab bar, hint line, status bar and the
/// lines a long message takes above the status bar (`statusLayout`, as render draws them).
func bodyHeight(_ state: ConsoleState) -> Int {
    max(1, state.size.height - 3 - statusLayout(state, width: state.size.width).messageLines.count)
}

private func move(by delta: Int, state: inout ConsoleState) {
    func step(_ cursor: inout ListCursor, count: Int, visible: Int) {
        guard count > 0 else {
            cursor = ListCursor()
            return
        }
        let target = delta > 0 ? min(count - 1, cursor.selected &+ delta) : max(0, cursor.selected &+ delta)
        cursor.selected = max(0, min(count - 1, target))
        if cursor.selected < cursor.offset { cursor.offset = cursor.selected }
        if cursor.selected >= cursor.offset + visible { cursor.offset = cursor.selected - visible + 1 }
    }
    let visible = max(1, bodyHeight(state) - 2)
    switch state.view {
    case .probe:
        step(&state.probeCursor, count: state.listedRuns.count, visible: 1)
    case .cache:
        step(&state.cacheCursor, count: state.cacheOrder.count, visible: visible)
    case .traces:
        if state.detailSequence != nil {
            state.detailScroll = max(0, state.detailScroll &+ delta)
        } else {
            step(&state.traceCursor, count: state.traceListCount, visible: visible)
        }
    case .events:
        step(&state.eventCursor, count: state.listedEvents.count, visible: visible - (state.labFault == nil ? 0 : 2))
    case .help:
        // Clamped here, so Up after scrolling past the end moves at once.
        state.helpScroll = clampedHelpScroll(
            state.helpScroll &+ delta, columns: helpColumns(state, width: state.size.width), height: bodyHeight(state))
    case .compare:
        state.compare.scroll = max(0, state.compare.scroll &+ delta)
    case .doctor:
        moveDoctor(by: delta, state: &state)
    }
}

private func clampCursors(_ state: inout ConsoleState) {
    let visible = max(1, bodyHeight(state) - 2)
    func clamp(_ cursor: inout ListCursor, count: Int) {
        cursor.selected = max(0, min(cursor.selected, count - 1))
        if cursor.selected >= cursor.offset + visible { cursor.offset = cursor.selected - visible + 1 }
        cursor.offset = max(0, min(cursor.offset, cursor.selected))
    }
    clamp(&state.cacheCursor, count: state.cacheOrder.count)
    clamp(&state.traceCursor, count: state.traceListCount)
}

// MARK: - Engine events

private func applyProbeEvent(_ event: ProbeEvent, runID: Int, state: inout ConsoleState) -> [ConsoleEffect] {
    let index = state.runs.firstIndex { $0.id == runID }
    switch event {
    case .resolved(let resolution):
        if let index { state.runs[index].resolution = resolution }
        state.runContexts[runID, default: RunContext()].resolution = resolution
        state.runContexts[runID]?.host = resolution.host
        if let server = resolution.httpdns.server { state.answeredBy = server }
    case .attemptStarted(let planned):
        if let index {
            state.runs[index].running.append(
                RunningAttempt(scenario: planned.scenario, ip: planned.ip, ipSource: planned.ipSource))
        }
    case .attemptFinished(let attempt):
        if let index {
            state.runs[index].attempts.append(attempt)
            if let done = state.runs[index].running.firstIndex(where: {
                $0.scenario == attempt.scenario && $0.ip == attempt.ip
            }) {
                state.runs[index].running.remove(at: done)
            }
        }
        recordTrace(attempt, runID: runID, state: &state)
    case .finished(let report):
        if let index {
            state.runs[index].report = report
            state.runs[index].resolution = report.resolution
            state.runs[index].finished = true
            state.runs[index].running = []
            // The report is the truth; attempts that streamed are replaced by its list.
            state.runs[index].attempts = report.attempts
        }
        state.runContexts[runID] = RunContext(
            url: report.url, host: report.host, resolution: report.resolution, verdict: report.verdict)
        state.message = "\(report.host): \(report.verdict.summary)"
        return [.loadCache]
    case .rejected(let error):
        if let index {
            state.runs[index].failure = error.reason
            state.runs[index].finished = true
        }
        state.message = "Probe failed: \(error.reason)"
    }
    return []
}

/// Says what an export wrote, on the status line and as an `export` row of the events view.
private func recordExport(_ sentence: String, host: String = "", state: inout ConsoleState) {
    state.message = "Exported " + sentence
    recordEvent(ConsoleEvent(time: state.now, kind: .export, host: host, detail: sentence), state: &state)
}

/// Adds a row to the events view, keeping the selected row on the same event.
private func recordEvent(_ event: ConsoleEvent, state: inout ConsoleState) {
    state.events.append(event)
    if state.eventCursor.selected > 0 { state.eventCursor.selected += 1 }
}

/// The files of one export as a sentence: the first path whole, the others by name when they
/// sit in the same directory (`/tmp/x/a.jsonl and a.har`).
func filesSentence(_ paths: [String]) -> String {
    guard let first = paths.first else { return "no file" }
    let directory = (first as NSString).deletingLastPathComponent
    let rest = paths.dropFirst().map { path in
        (path as NSString).deletingLastPathComponent == directory ? (path as NSString).lastPathComponent : path
    }
    return ([first] + rest).joined(separator: " and ")
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
    if var matches = state.traceMatches {
        if let dropped, matches.first == dropped.sequence { matches.removeFirst() }
        let filter = (state.filters[.traces] ?? "").lowercased()
        if record.matches(filter) {
            matches.append(record.sequence)
            if state.traceCursor.selected > 0 { state.traceCursor.selected += 1 }
        }
        state.traceMatches = matches
    } else if state.traceCursor.selected > 0 || state.detailSequence != nil {
        // Keep the same trace selected while new ones arrive on top.
        state.traceCursor.selected = min(state.traceCursor.selected + 1, state.traces.count - 1)
    }
}

private func applyFilter(_ state: inout ConsoleState) {
    switch state.view {
    case .traces:
        let filter = (state.filters[.traces] ?? "").lowercased()
        if filter.isEmpty {
            state.traceMatches = nil
        } else if let previous = state.traceMatches, filter.contains(state.traceFilterMatched) {
            // A longer filter only narrows: look again at what matched before, not at everything.
            state.traceMatches = previous.filter { state.trace(sequence: $0)?.matches(filter) ?? false }
        } else {
            var matches: [Int] = []
            for index in 0..<state.traces.count where state.traces[index].matches(filter) {
                matches.append(state.traces[index].sequence)
            }
            state.traceMatches = matches
        }
        state.traceFilterMatched = filter
        state.traceCursor = ListCursor()
    case .cache:
        resortCache(&state)
        state.cacheCursor = ListCursor()
    case .events:
        state.eventCursor = ListCursor()
    case .probe:
        state.probeCursor = ListCursor()
    case .help, .compare, .doctor:
        break
    }
}

/// Recomputes the cache view's order after new entries, a new sort or a new filter.
func resortCache(_ state: inout ConsoleState) {
    let filter = (state.filters[.cache] ?? "").lowercased()
    let entries = state.cache
    var order = Array(entries.indices)
    if !filter.isEmpty {
        order = order.filter { index in
            let entry = entries[index]
            return entry.host.lowercased().contains(filter) || entry.ips.contains { $0.text.contains(filter) }
        }
    }
    let now = state.now
    let column = state.cacheSort
    func stateRank(_ entry: CacheEntrySnapshot) -> Int {
        entry.refreshing ? 1 : (entry.remaining(at: now) > 0 ? 0 : 2)
    }
    order.sort { lhs, rhs in
        let a = entries[lhs]
        let b = entries[rhs]
        let ordered: Bool
        switch column {
        case .name: ordered = a.host != b.host ? a.host < b.host : a.family.rawValue < b.family.rawValue
        case .family: ordered = a.family != b.family ? a.family.rawValue < b.family.rawValue : a.host < b.host
        case .ips:
            ordered =
                a.ips.first?.text ?? "" != b.ips.first?.text ?? ""
                ? (a.ips.first?.text ?? "") < (b.ips.first?.text ?? "") : a.host < b.host
        case .ttl: ordered = a.expiresAt != b.expiresAt ? a.expiresAt < b.expiresAt : a.host < b.host
        case .source: ordered = a.source != b.source ? a.source.rawValue < b.source.rawValue : a.host < b.host
        case .state: ordered = stateRank(a) != stateRank(b) ? stateRank(a) < stateRank(b) : a.host < b.host
        case .hits: ordered = a.hits != b.hits ? a.hits > b.hits : a.host < b.host
        case .age: ordered = a.resolvedAt != b.resolvedAt ? a.resolvedAt > b.resolvedAt : a.host < b.host
        }
        return ordered
    }
    if state.cacheSortDescending { order.reverse() }
    state.cacheOrder = order
    let visible = max(1, bodyHeight(state) - 2)
    state.cacheCursor.selected = max(0, min(state.cacheCursor.selected, order.count - 1))
    if state.cacheCursor.selected >= state.cacheCursor.offset + visible {
        state.cacheCursor.offset = state.cacheCursor.selected - visible + 1
    }
    state.cacheCursor.offset = min(state.cacheCursor.offset, state.cacheCursor.selected)
}

/// The listed traces as reports, one per probe run, each with only the attempts listed.
func exportReports(_ records: [TraceRecord], state: ConsoleState) -> [URLReport] {
    var order: [Int] = []
    var attempts: [Int: [Attempt]] = [:]
    for record in records {
        if attempts[record.runID] == nil { order.append(record.runID) }
        attempts[record.runID, default: []].append(record.attempt)
    }
    return order.map { runID in
        let list = attempts[runID] ?? []
        let context = state.runContexts[runID] ?? RunContext()
        let url = context.url ?? list.first?.url ?? ""
        let host = context.host ?? URLComponents(string: url)?.host ?? url
        let resolution =
            context.resolution
            ?? HostResolution(
                host: host, system: SystemAnswer(error: "not recorded"),
                httpdns: HTTPDNSAnswer(provider: ProviderID(state.engine.provider), error: "not recorded"))
        let verdict =
            context.verdict
            ?? Verdict(
                works: [], recommended: nil, summary: "the probe had not finished when these traces were exported",
                notes: [])
        return URLReport(url: url, host: host, resolution: resolution, attempts: list, verdict: verdict)
    }
}

/// Where an export goes, without its extension: `export_dir/ipdirect-[KIND-]YYYYMMDD-HHMMSS`,
/// stamped with the state's clock in its zone.
///
/// - Parameter kind: what is exported when not the traces (`watch`, `doctor`).
func exportBase(_ state: ConsoleState, kind: String? = nil) -> String {
    state.exportDirectory + "/ipdirect-" + (kind.map { $0 + "-" } ?? "")
        + exportStamp(state.now, timeZone: state.timeZone)
}

/// `YYYYMMDD-HHMMSS` of a moment in a zone, for export file names.
func exportStamp(_ date: Date, timeZone: TimeZone) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    func two(_ n: Int?) -> String { String(format: "%02d", n ?? 0) }
    return "\(c.year ?? 0)\(two(c.month))\(two(c.day))-\(two(c.hour))\(two(c.minute))\(two(c.second))"
}

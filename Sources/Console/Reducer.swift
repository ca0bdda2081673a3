// Actions in, effects out: the only place the console's state changes. Keys go through the
// key map; engine events arrive as actions; what must reach the engine leaves as effects.
import Audit
import Doctor
import FoundationEssentials
import FoundationGaps
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
    /// The audit's lab is up: what an app under audit needs.
    case auditStarted(AuditSetup)
    /// The audit could not start, in a sentence.
    case auditFailed(String)
    /// The audit's report on what its lab's ledger holds now.
    case auditReport(AuditReport)
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
    /// Start the audit's lab (once), its setup coming back as `auditStarted`.
    case startAudit
    /// Read the audit's report on its ledger now.
    case loadAuditReport
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
    if state.message != message { bodyResized(&state) }
    return effects
}

/// The shared reduce step, then each feature's.
private func apply(_ action: ConsoleAction, to state: inout ConsoleState) -> [ConsoleEffect] {
    var effects = applyShared(action, to: &state)
    for feature in ConsoleFeatures.all { effects += feature.reduce(action, state: &state) }
    return effects
}

/// What every view shares: keys, the clock, the probes' runs and traces, the status line.
private func applyShared(_ action: ConsoleAction, to state: inout ConsoleState) -> [ConsoleEffect] {
    switch action {
    case .key(let key):
        return handleKey(key, state: &state)
    case .resize(let size):
        state.size = size
        bodyResized(&state)
        return []
    case .tick(let now):
        state.now = now
        return []
    case .probeEvent(let runID, let event):
        return applyProbeEvent(event, runID: runID, state: &state)
    case .probeEnded(let runID):
        if let index = state.runs.firstIndex(where: { $0.id == runID }), !state.runs[index].finished {
            state.runs[index].finished = true
            if state.runs[index].report == nil && state.runs[index].failure == nil {
                state.runs[index].failure = "the probe ended without a verdict"
            }
        }
        return [.loadCache]
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
    case .cacheEntries, .resolverEvent, .labFaultChanged, .exported, .providersCompared, .ipsRanked, .watchExported,
        .doctorFinding, .doctorFinished, .doctorExported, .auditStarted, .auditFailed, .auditReport:
        // A feature's own (`ConsoleFeature.reduce`).
        return []
    }
}

// MARK: - Keys

private func handleKey(_ key: Key, state: inout ConsoleState) -> [ConsoleEffect] {
    switch state.mode {
    case .probeInput, .filter: lineKey(key, state: &state)
    case .confirmFlushAll: confirmKey(key, state: &state)
    case .command: commandKey(key, state: &state)
    }
}

/// A key on the host line or the filter line: an editing command, or a character typed.
private func lineKey(_ key: Key, state: inout ConsoleState) -> [ConsoleEffect] {
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
}

/// A key while asked to confirm flushing the whole cache.
private func confirmKey(_ key: Key, state: inout ConsoleState) -> [ConsoleEffect] {
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
}

/// A key in command mode: to the reproduce panel when open, else to what is shown, nearest
/// first, then to the commands every view shares.
private func commandKey(_ key: Key, state: inout ConsoleState) -> [ConsoleEffect] {
    let scopes = commandScopes(state)
    if state.reproducePanel != nil { return panelKey(key, scopes: scopes, state: &state) }
    guard let command = state.keyMap.command(for: key, in: scopes, lab: state.engine.lab) else {
        if case .character(let c) = key, c != " " {
            // Someone typing a host before pressing p learns the way in from the first letter.
            let type = state.keyMap.label(for: .typeHost, in: scopes, lab: state.engine.lab) ?? "p"
            let help = state.keyMap.label(for: .help, in: scopes, lab: state.engine.lab) ?? "?"
            state.message = "'\(c)' does nothing here: \(type) types a host, \(help) lists every key"
        }
        return []
    }
    if command == .typeHost {
        // The host line opens from any view, over whatever was open.
        for feature in ConsoleFeatures.all { feature.hostLineOpening(&state) }
    } else {
        // What is shown takes the key first, nearest first (the IP view over the probe view).
        for feature in ConsoleFeatures.shown(state) {
            if let effects = feature.command(command, state: &state) { return effects }
        }
    }
    return perform(command, state: &state)
}

/// A key while the reproduce panel is open: it scrolls or closes; help and quit still work.
private func panelKey(_ key: Key, scopes: [KeyScope], state: inout ConsoleState) -> [ConsoleEffect] {
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

/// The scopes whose keys apply in command mode, nearest first: an open panel, what is shown
/// (`ConsoleFeatures.scopes`), everywhere. The hint line asks the same.
func commandScopes(_ state: ConsoleState) -> [KeyScope] {
    if state.reproducePanel != nil { return [.reproducePanel, .global] }
    return ConsoleFeatures.scopes(state) + [.global]
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
    ConsoleFeatures.base(state.view).filterChanged(&state)
}

private func typingCommand(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect] {
    switch command {
    case .submit:
        if state.mode == .filter {
            state.mode = state.modeBeforePrompt
            return []
        }
        let typed = state.input.trimmingWhitespace()
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
            ConsoleFeatures.base(state.view).filterChanged(&state)
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

/// The commands every view shares, once what is shown has passed on a command.
private func perform(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect] {
    if let delta = moveDelta(command, state: state) {
        ConsoleFeatures.base(state.view).move(by: delta, state: &state)
        return []
    }
    // A view's opening letter (`?`, `v`, `D`), from any view.
    for feature in ConsoleFeatures.all {
        if let effects = feature.anywhere(command, state: &state) { return effects }
    }
    if let view = command.shownView {
        switchView(to: view, state: &state)
        return ConsoleFeatures.base(view).shown(&state)
    }
    switch command {
    case .nextView, .previousView:
        let all = ConsoleView.tabs
        let step = command == .nextView ? 1 : all.count - 1
        switchView(to: all[((all.firstIndex(of: state.view) ?? 0) + step) % all.count], state: &state)
        return ConsoleFeatures.base(state.view).shown(&state)
    case .back:
        if !(state.filters[state.view] ?? "").isEmpty {
            state.filters[state.view] = nil
            ConsoleFeatures.base(state.view).filterChanged(&state)
        } else if state.view != .probe {
            switchView(to: .probe, state: &state)
        }
    case .filter:
        guard ConsoleFeatures.base(state.view).filters else { return [] }
        state.modeBeforePrompt = .command
        state.mode = .filter
        state.filterLine = EditedLine(state.filters[state.view] ?? "")
    case .typeHost:
        switchView(to: .probe, state: &state)
        state.mode = .probeInput
        state.inputLine.moveToEnd()
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
    case .quit:
        state.quitting = true
        return [.quit]
    default:
        break
    }
    return []
}

/// How many rows a movement command moves: one, a page, or to an end; nil for other commands.
func moveDelta(_ command: Command, state: ConsoleState) -> Int? {
    let page = max(1, bodyHeight(state) - 2)
    switch command {
    case .up: return -1
    case .down: return 1
    case .pageUp: return -page
    case .pageDown: return page
    case .top: return -Int.max / 2
    case .bottom: return Int.max / 2
    default: return nil
    }
}

func switchView(to view: ConsoleView, state: inout ConsoleState) {
    // A message belongs to the view it was made in ("Copied to the clipboard" is about the
    // panel of that view): another view starts with a clear status line.
    if view != state.view { state.message = "" }
    state.view = view
    if state.mode == .probeInput && view != .probe { state.mode = .command }
}

/// Rows the body of a view has: the screen minus the tab bar, hint line, status bar and the
/// lines a long message takes above the status bar (`statusLayout`, as render draws them).
func bodyHeight(_ state: ConsoleState) -> Int {
    max(1, state.size.height - 3 - statusLayout(state, width: state.size.width).messageLines.count)
}

/// Every feature keeps its selection in sight after the body's rows changed.
private func bodyResized(_ state: inout ConsoleState) {
    for feature in ConsoleFeatures.all { feature.bodyResized(&state) }
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

/// The files of one export as a sentence: the first path whole, the others by name when they
/// sit in the same directory (`/tmp/x/a.jsonl and a.har`).
func filesSentence(_ paths: [String]) -> String {
    guard let first = paths.first else { return "no file" }
    let directory = first.deletingLastPathComponent
    let rest = paths.dropFirst().map { path in
        path.deletingLastPathComponent == directory ? path.lastPathComponent : path
    }
    return ([first] + rest).joined(separator: " and ")
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
    func two(_ n: Int?) -> String { String(cFormat: "%02d", n ?? 0) }
    return "\(c.year ?? 0)\(two(c.month))\(two(c.day))-\(two(c.hour))\(two(c.minute))\(two(c.second))"
}

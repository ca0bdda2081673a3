// The probe view: the input line, then per probed URL the scenarios against the two IP
// sources (system DNS, HTTPDNS) with outcome, status and time, and the verdict in words.
import ConfigurationSources
import FoundationEssentials
import LabFaults
import NameResolution
import Probe
import TerminalText

func drawProbeView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    var y = rows.lowerBound
    let typing = state.mode == .probeInput
    let x = buffer.put(" Host or URL: ", x: 0, y: y, style: .bold)
    if typing {
        drawEditedLine(state.inputLine, x: x, y: y, width: buffer.width - x - 1, into: &buffer)
    } else {
        let keys = state.keyMap
        let lab = state.engine.lab
        let type = keys.label(for: .typeHost, in: [.probe, .global], lab: lab) ?? "p"
        let text: String
        if !state.input.isEmpty {
            text =
                "\(state.input)  (\(type) to edit, \(keys.label(for: .back, in: [.global], lab: lab) ?? "Esc") to clear)"
        } else if state.runs.isEmpty {
            text = "(press \(type) to type a host or URL)"
        } else {
            text =
                "(press \(type) to type a host, \(keys.label(for: .reprobe, in: [.probe], lab: lab) ?? "r") to probe the selected one again)"
        }
        buffer.put(text, x: x, y: y, style: .dim)
    }
    y += 1
    buffer.fill(x: 0, y: y, count: buffer.width, character: state.glyphs.horizontal, style: .dim)
    y += 1

    let runs = state.listedRuns
    if runs.isEmpty {
        let suggested = state.engine.labExamples
        let width = suggested.map(\.typed.count).max() ?? 0
        let examples =
            state.engine.lab
            ? ["Try the lab's names:"]
                + suggested.map {
                    "  " + $0.typed.padded(width) + "  " + $0.shows
                }
            : [
                "Type a host (example.com) or a URL (https://example.com/path) and press Enter.",
                "Each IP-direct way is tried with system DNS's and HTTPDNS's addresses.",
            ] + providerNote(state.engine)
        // Wrapped, not cut: off the lab these sentences are longer than a narrow terminal.
        for line in examples.flatMap({ wrapIndented($0, width: buffer.width - 1) }) where y < rows.upperBound {
            buffer.put(" " + line, x: 0, y: y, style: .dim)
            y += 1
        }
        return
    }
    let first = min(state.probeView.cursor.selected, runs.count - 1)
    for (index, run) in runs.enumerated().dropFirst(first) {
        guard y < rows.upperBound else { break }
        let lines = runLines(run, selected: index == state.probeView.cursor.selected, state: state, width: buffer.width)
        for line in lines {
            guard y < rows.upperBound else { break }
            buffer.draw(line, x: 0, y: y, width: buffer.width)
            y += 1
        }
        y += 1
    }
    if first > 0 {
        buffer.put(
            " \(state.glyphs.ascending) \(first) newer ", x: buffer.width - 16, y: rows.lowerBound + 1, style: .dim)
    }
}

/// The lines of one probe run: title, resolution, matrix, verdict.
func runLines(_ run: ProbeRun, selected: Bool, state: ConsoleState, width: Int) -> [StyledLine] {
    let g = state.glyphs
    var lines: [StyledLine] = []
    let url = run.report?.url ?? run.attempts.first?.url ?? run.target
    var title: StyledLine = [
        Span(selected ? "\(g.selected) " : "  ", .fg(.cyan, bold: true)), Span(url, .bold),
    ]
    if !run.finished {
        title.append(Span("  probing\(g.ellipsis) \(run.attempts.count) done", .fg(.yellow)))
    } else if let failure = run.failure, run.report == nil {
        title.append(Span("  failed: \(failure)", .fg(.red)))
    }
    lines.append(title)
    // A run that ended before any lookup (a host that is not a URL) has nothing more to show:
    // no "resolving", no empty matrix.
    if run.finished && run.resolution == nil && run.report == nil && run.attempts.isEmpty { return lines }

    lines += run.resolution.map { resolutionLines($0, width: width) } ?? [[Span("  resolving\(g.ellipsis)", .dim)]]
    lines += matrixLines(run, glyphs: g, width: width)
    if let report = run.report { lines += verdictLines(report.verdict, width: width) }
    return lines
}

/// What each source answered, one line each (more when a failure's sentence wraps), and
/// whether the two agree.
private func resolutionLines(_ resolution: HostResolution, width: Int) -> [StyledLine] {
    var lines: [StyledLine] = []
    let system = resolution.system
    var systemLine: StyledLine = [Span("  system DNS  ", .dim)]
    if let error = system.error {
        lines += failureLines(systemLine, error.sentence, ms: system.ms, width: width)
    } else {
        systemLine.append(Span((system.ipv4 + system.ipv6).joined(separator: ", ")))
        // A DNS server's TTL and CNAME chain (getaddrinfo gives neither).
        if let ttl = system.ttl { systemLine.append(Span("  ttl \(ttl)s", .dim)) }
        if let chain = system.cname { systemLine.append(Span("  via " + chain.joined(separator: " -> "), .dim)) }
    }
    if system.error == nil {
        systemLine.append(Span("  " + formatMilliseconds(system.ms), .dim))
        lines.append(systemLine)
    }
    let httpdns = resolution.httpdns
    var httpdnsLine: StyledLine = [Span("  HTTPDNS     ", .dim)]
    if let error = httpdns.error {
        lines += failureLines(httpdnsLine, error.sentence, ms: httpdns.ms, width: width)
    } else {
        httpdnsLine.append(Span((httpdns.ipv4 + httpdns.ipv6).joined(separator: ", ")))
        httpdnsLine.append(Span("  ttl \(httpdns.ttl.shown) from \(httpdns.source.rawValue)", .dim))
        // The egress the service judged this client by: the usual reason two networks get different answers.
        if let clientIP = httpdns.clientIP { httpdnsLine.append(Span("  saw you as \(clientIP)", .dim)) }
        if let origin = httpdns.originTTL { httpdnsLine.append(Span("  origin_ttl \(origin.shown)", .dim)) }
        if let extra = httpdns.extra { httpdnsLine.append(Span("  extra: \(extra)", .dim)) }
    }
    let agreementStyle: CellStyle =
        resolution.agreement == .same ? .fg(.green) : (resolution.agreement == .overlap ? .fg(.yellow) : .fg(.red))
    if httpdns.error == nil {
        httpdnsLine.append(Span("  " + formatMilliseconds(httpdns.ms), .dim))
        httpdnsLine.append(Span("  " + agreementWords(resolution.agreement), agreementStyle))
        lines.append(httpdnsLine)
    } else {
        lines[lines.count - 1].append(Span("  " + agreementWords(resolution.agreement), agreementStyle))
    }
    return lines
}

/// The matrix: scenarios down, IP sources across.
private func matrixLines(_ run: ProbeRun, glyphs g: Glyphs, width: Int) -> [StyledLine] {
    var lines: [StyledLine] = []
    let labelWidth = 14
    let cellWidth = max(20, (width - 2 - labelWidth - 2) / 2)
    var header: StyledLine = [Span("  "), Span("scenario".padded(labelWidth), .bold)]
    header.append(Span("system DNS IP".padded(cellWidth), .bold))
    header.append(Span("HTTPDNS IP".padded(cellWidth), .bold))
    lines.append(header)
    for scenario in Scenario.allCases {
        var row: StyledLine = [Span("  "), Span(scenario.rawValue.padded(labelWidth))]
        for column in [IPColumn.system, IPColumn.httpdns] {
            row += matrixCell(run, scenario: scenario, column: column, width: cellWidth, glyphs: g)
        }
        lines.append(row)
    }

    return lines
}

/// The verdict in words, and its notes.
private func verdictLines(_ verdict: Verdict, width: Int) -> [StyledLine] {
    var lines: [StyledLine] = []
    let style: CellStyle = verdict.recommended == nil ? .fg(.red, bold: true) : .fg(.green, bold: true)
    let wrapped = wrap(verdict.summary, width: width - 13)
    for (index, text) in wrapped.enumerated() {
        lines.append([Span(index == 0 ? "  Verdict: " : "           ", .bold), Span(text, style)])
    }
    for note in verdict.notes {
        for (index, text) in wrap(note, width: width - 10).enumerated() {
            lines.append([Span(index == 0 ? "  note: " : "        ", .dim), Span(text, .fg(.yellow))])
        }
    }
    return lines
}

/// A source's failure after its label: "failed: " and the sentence, then its time, wrapped
/// under the label's end when longer than the line, so a sentence is never cut mid-word.
private func failureLines(_ label: StyledLine, _ sentence: String, ms: Double, width: Int) -> [StyledLine] {
    let indent = label.reduce(0) { $0 + $1.text.count }
    let text = "failed: " + sentence
    let time = "  " + formatMilliseconds(ms)
    var wrapped = wrap(text, width: max(10, width - indent - 1))
    // The time goes with the last line, or on a line of its own when that is full.
    var lines: [StyledLine] = []
    let last = wrapped.removeLast()
    for (index, part) in wrapped.enumerated() {
        lines.append((index == 0 ? label : [Span(String(repeating: " ", count: indent))]) + [Span(part, .fg(.red))])
    }
    let lastLine = (wrapped.isEmpty ? label : [Span(String(repeating: " ", count: indent))]) + [Span(last, .fg(.red))]
    lines.append(lastLine + [Span(time, .dim)])
    return lines
}

/// What the console runs with when no provider was chosen: the default is a public DoH
/// resolver, not an HTTPDNS account, and the user is told so and how to change it. Empty with
/// the lab or another provider.
func providerNote(_ engine: EngineDescription) -> [String] {
    guard !engine.lab, engine.provider == ResolverConfiguration.defaults.provider.rawValue else { return [] }
    return [
        "",
        "Provider: \(engine.provider), the default: a public DoH resolver, not an HTTPDNS account.",
        "To use your own account, set provider and account in the configuration file (ipdirect config init writes one) or in the environment; the secret goes in IPDIRECT_HTTPDNS_SECRET.",
    ]
}

/// `wrap`, with the lines after the first indented by two columns.
private func wrapIndented(_ text: String, width: Int) -> [String] {
    guard TerminalText.width(text) > width else { return [text] }
    let lines = wrap(text, width: width)
    return [lines[0]]
        + wrap(lines.dropFirst().joined(separator: " "), width: width - 2).filter { !$0.isEmpty }.map { "  " + $0 }
}

enum IPColumn { case system, httpdns }

private func column(of attempt: Attempt) -> IPColumn {
    switch attempt.ipSource {
    case .system: return .system
    case .httpdns, .cache: return .httpdns
    case nil: return attempt.scenario == .systemDNS ? .system : .httpdns
    }
}

private func matrixCell(
    _ run: ProbeRun, scenario: Scenario, column wanted: IPColumn, width: Int, glyphs: Glyphs
)
    -> StyledLine
{
    let attempts = run.attempts.filter { $0.scenario == scenario && column(of: $0) == wanted }
    guard let attempt = attempts.first(where: { $0.outcome == .ok }) ?? attempts.first else {
        if scenario == .systemDNS && wanted == .httpdns { return [Span("n/a".padded(width), .dim)] }
        let running = run.running.contains { running in
            running.scenario == scenario
                && (running.ipSource == .system || (running.ipSource == nil && scenario == .systemDNS)
                    ? IPColumn.system : IPColumn.httpdns) == wanted
        }
        if running { return [Span("running\(glyphs.ellipsis)".padded(width), .fg(.yellow))] }
        let text = run.finished ? "-" : "\(glyphs.ellipsis)"
        return [Span(text.padded(width), .dim)]
    }
    var text = attempt.outcome.rawValue
    if let status = attempt.status { text += " \(status)" }
    if attempt.outcome != .skipped { text += " " + formatMilliseconds(attempt.timings.total) }
    var line: StyledLine = [Span(text, outcomeStyle(attempt.outcome))]
    var used = text.count
    if attempts.count > 1 {
        let more = " +\(attempts.count - 1)"
        line.append(Span(more, .dim))
        used += more.count
    }
    if let ip = attempt.ip?.text, used + ip.count + 3 < width {
        line.append(Span(" @ " + ip, .dim))
        used += ip.count + 3
    }
    line.append(Span(String(repeating: " ", count: max(0, width - used))))
    return line
}

private func agreementWords(_ agreement: Agreement) -> String {
    switch agreement {
    case .same: "both agree"
    case .overlap: "answers overlap"
    case .disjoint: "answers differ"
    case .systemFailed: "only HTTPDNS answered"
    case .httpdnsFailed: "only system DNS answered"
    case .bothFailed: "neither answered"
    }
}

/// Starts a probe of `target` (typed on the host line, or `r` again), newest at the top of the
/// probe view.
func startProbe(_ target: String, state: inout ConsoleState) -> [ConsoleEffect] {
    let id = state.nextRunID
    state.nextRunID += 1
    state.runs.append(ProbeRun(id: id, target: target, startedAt: state.now))
    if state.runs.count > state.maxRuns { state.runs.removeFirst(state.runs.count - state.maxRuns) }
    state.probeView.cursor = ListCursor()
    state.view = .probe
    state.message = "Probing \(target)\u{2026}"
    return [.probe(runID: id, target: target)]
}

// MARK: - The feature

/// The probe view (1): the host line and the probed hosts, newest first.
enum ProbeFeature: ConsoleFeature {
    static let view = ConsoleView.probe
    static let isTab = true
    static let initialState = ProbeViewState()
    static let filters = true

    static let scope: KeyScope? = .probe
    static let bindings: [KeyBinding] = [
        KeyBinding(
            keys: [.character("p"), .character(":")], command: .typeHost, scope: .probe,
            summary: "type a host or URL to probe"),
        KeyBinding(keys: [.character("r")], command: .reprobe, scope: .probe, summary: "probe the selected host again"),
        KeyBinding(
            keys: [.character("c")], command: .reproduce, scope: .probe,
            summary: "copy the commands that reproduce the selected probe"),
        KeyBinding(
            keys: [.character("i")], command: .showIPs, scope: .probe,
            summary: "its IPs, ranked as the SDKs do"),
        KeyBinding(
            keys: [.character("w")], command: .watch, scope: .probe,
            summary: "watch it: a probe every few s"),
        .doctor(in: .probe),
        KeyBinding(keys: [.character("1")], command: .showView(.probe), scope: .global, summary: "Probe view"),
    ]

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        switch command {
        case .back:
            guard !state.input.isEmpty else { return nil }
            // The second Esc: the first left the host line with its text.
            state.input = ""
            state.historyIndex = nil
            return []
        case .reprobe:
            let runs = state.listedRuns
            guard state.probeView.cursor.selected < runs.count else {
                state.message = "Nothing to probe again: type a host first (p)"
                return []
            }
            return startProbe(runs[state.probeView.cursor.selected].target, state: &state)
        case .showIPs:
            return openIPView(&state)
        case .watch:
            return openWatch(&state)
        default:
            return nil
        }
    }

    static func move(by delta: Int, state: inout ConsoleState) {
        state.probeView.cursor.step(by: delta, count: state.listedRuns.count, visible: 1)
    }

    static func filterChanged(_ state: inout ConsoleState) { state.probeView.cursor = ListCursor() }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        drawProbeView(state, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        var hints: [(Command, String)] = [
            (.typeHost, "type host"), (.reprobe, "re-probe"), (.showIPs, "IPs"), (.watch, "watch"),
            (.reproduce, "reproduce"), (.down, "older"),
        ]
        if !state.input.isEmpty { hints.insert((.back, "clear host"), at: 1) }
        return hints + [(.nextView, "next view")]
    }

    static func selectedHost(_ state: ConsoleState) -> String? {
        let runs = state.listedRuns
        guard state.probeView.cursor.selected < runs.count else { return nil }
        let run = runs[state.probeView.cursor.selected]
        return run.resolution?.host ?? run.report?.host ?? (try? ProbeURL.parse(run.target))?.host
    }

    static func reproducible(_ state: ConsoleState) -> (attempts: [Attempt], resolution: HostResolution?) {
        let runs = state.listedRuns
        guard state.probeView.cursor.selected < runs.count else { return ([], nil) }
        return (runs[state.probeView.cursor.selected].attempts, runs[state.probeView.cursor.selected].resolution)
    }
}

extension KeyScope {
    public static let probe = KeyScope("Probe view")
}

extension ConsoleView {
    public static let probe = ConsoleView("Probe")
}

/// The probe view's selection; the runs are `ConsoleState.runs`.
public struct ProbeViewState: Sendable, Equatable {
    public var cursor = ListCursor()
}

extension ConsoleState {
    /// The probe view's state.
    public var probeView: ProbeViewState {
        get { features[ProbeFeature.self] }
        _modify { yield &features[ProbeFeature.self] }
    }

    /// The probe runs listed (after the filter), newest first.
    public var listedRuns: [ProbeRun] {
        let filter = (filters[.probe] ?? "").lowercased()
        let newestFirst = runs.reversed()
        guard !filter.isEmpty else { return Array(newestFirst) }
        return newestFirst.filter { $0.target.lowercased().contains(filter) }
    }
}

extension Command {
    /// Probe the selected host again.
    public static let reprobe = Command("reprobe")
}

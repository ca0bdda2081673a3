// The IP view (`i`): every address of the probed host from HTTPDNS and system DNS, ranked by
// TCP connect time as the SDKs rank them, with which scenario used which; Enter probes one IP.
import FoundationEssentials
import NameResolution
import Probe
import TerminalText

/// The IP view of one probed host: its addresses, their ranking, and probes started from it.
public struct IPViewState: Sendable, Equatable {
    /// What the probe was given (a host or URL), what a probe from this view is given too.
    public var target: String
    public var url: String
    public var host: String
    /// The URL's port: where the TCP connects of the ranking go.
    public var port: Int
    public var resolution: HostResolution
    /// The probe's attempts, to say which scenario used which address.
    public var attempts: [Attempt]
    /// The ranking shown; nil until the first measurement arrives.
    public var ranking: IPRanking?
    /// Counts rankings asked for; an answer to an older one is dropped.
    public var request = 0
    public var measuring = false
    /// The selected row.
    public var selected = 0
    /// The technique Enter probes against the selected address.
    public var technique: Scenario
    /// Probes started from this view, oldest first.
    public var probes: [PinnedProbe] = []

    /// The addresses in the order shown: ranked once measured, the answers' order before.
    public var rows: [RankedIP] {
        if let ranking { return ranking.ips }
        return IPRanking.candidates(resolution).map { candidate in
            RankedIP(
                ip: candidate.ip, sources: candidate.sources,
                usedBy: Scenario.allCases.filter { scenario in
                    attempts.contains { $0.scenario == scenario && $0.ip == candidate.ip }
                })
        }
    }

    /// The techniques Enter can use for this URL (a direct way needs the URL's scheme).
    public var techniques: [Scenario] {
        url.lowercased().hasPrefix("http://") ? [.directHTTP] : [.directSNI, .directHTTPS]
    }
}

/// One technique probed against one address from the IP view.
public struct PinnedProbe: Sendable, Equatable {
    public var runID: Int
    public var ip: IPAddress
    public var scenario: Scenario
    /// The attempt, once finished.
    public var attempt: Attempt?
    /// Why the probe could not run, as a sentence.
    public var failure: String?
}

/// Opens the IP view on the selected probe run and asks for a ranking.
func openIPView(_ state: inout ConsoleState) -> [ConsoleEffect] {
    let runs = state.listedRuns
    guard state.probeView.cursor.selected < runs.count else {
        state.message = "No IPs to rank: probe a host first (p), then press i"
        return []
    }
    let run = runs[state.probeView.cursor.selected]
    guard let resolution = run.resolution else {
        state.message = "No IPs to rank yet: wait until \(run.target) is resolved, then press i"
        return []
    }
    let url = run.report?.url ?? run.attempts.first?.url ?? run.target
    let port = (try? ProbeURL.parse(url))?.port ?? 443
    var view = IPViewState(
        target: run.target, url: url, host: resolution.host, port: port, resolution: resolution,
        attempts: run.attempts, technique: .directSNI)
    view.technique =
        run.report?.verdict.recommended.flatMap { view.techniques.contains($0) ? $0 : nil }
        ?? view.techniques[0]
    state.ipView = view
    return rankAgain(&state)
}

/// Asks the engine to measure every address again.
private func rankAgain(_ state: inout ConsoleState) -> [ConsoleEffect] {
    guard var view = state.ipView else { return [] }
    view.request += 1
    view.measuring = true
    state.ipView = view
    state.message = "Timing a TCP connect to port \(view.port) of every address of \(view.host)\u{2026}"
    return [.rankIPs(request: view.request, view.resolution, port: view.port, attempts: view.attempts)]
}

/// Takes a ranking from the engine when it answers the latest request.
func applyRanking(_ ranking: IPRanking, request: Int, state: inout ConsoleState) {
    guard var view = state.ipView, view.request == request else { return }
    // The first ranking selects the fastest; after that the same address stays selected.
    let selectedIP =
        view.ranking != nil && view.rows.indices.contains(view.selected) ? view.rows[view.selected].ip : nil
    view.ranking = ranking
    view.measuring = false
    view.selected = selectedIP.flatMap { ip in ranking.ips.firstIndex { $0.ip == ip } } ?? 0
    state.ipView = view
    let answered = ranking.ips.filter { $0.connectMs != nil }.count
    state.message = "\(ranking.host): \(answered) of \(ranking.ips.count) addresses answered on port \(ranking.port)"
}

/// A command while the IP view is open; nil when the view does not handle it.
func ipViewCommand(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
    guard var view = state.ipView else { return nil }
    let count = view.rows.count
    switch command {
    case .back, .showIPs:
        state.ipView = nil
        return []
    case .up: view.selected = max(0, view.selected - 1)
    case .down: view.selected = max(0, min(count - 1, view.selected + 1))
    case .top: view.selected = 0
    case .bottom: view.selected = max(0, count - 1)
    case .rerank:
        return rankAgain(&state)
    case .nextTechnique:
        let all = view.techniques
        view.technique = all[((all.firstIndex(of: view.technique) ?? -1) + 1) % all.count]
        state.message = "Enter now probes \(view.technique.rawValue) against the selected address"
    case .probeIP:
        guard view.rows.indices.contains(view.selected) else { return [] }
        let ip = view.rows[view.selected].ip
        let id = state.nextRunID
        state.nextRunID += 1
        view.probes.append(PinnedProbe(runID: id, ip: ip, scenario: view.technique))
        if view.probes.count > 20 { view.probes.removeFirst(view.probes.count - 20) }
        state.ipView = view
        state.message = "Probing \(view.technique.rawValue) against \(ip)\u{2026}"
        return [.probeIP(runID: id, target: view.target, scenario: view.technique, ip: ip)]
    default:
        return nil
    }
    state.ipView = view
    return []
}

/// Notes what a probe started from the IP view did.
func observeIPViewProbe(_ event: ProbeEvent, runID: Int, state: inout ConsoleState) {
    guard let index = state.ipView?.probes.firstIndex(where: { $0.runID == runID }) else { return }
    switch event {
    case .attemptFinished(let attempt):
        state.ipView?.probes[index].attempt = attempt
    case .finished(let report):
        if let attempt = report.attempts.first { state.ipView?.probes[index].attempt = attempt }
        if let probe = state.ipView?.probes[index], let attempt = probe.attempt {
            state.message = "\(probe.scenario.rawValue) against \(probe.ip): \(attemptWords(attempt))"
        }
    case .rejected(let error):
        state.ipView?.probes[index].failure = error.reason
    case .resolved, .attemptStarted:
        break
    }
}

/// "ok 200 5.6ms", an attempt in a few words.
private func attemptWords(_ attempt: Attempt) -> String {
    var text = attempt.outcome.rawValue
    if let status = attempt.status { text += " \(status)" }
    if !attempt.hops.isEmpty { text += " " + formatMilliseconds(attempt.timings.total) }
    return text
}

/// Draws the IP view over the probe view's body.
func drawIPView(_ state: ConsoleState, view: IPViewState, rows: Range<Int>, into buffer: inout CellBuffer) {
    let g = state.glyphs
    var y = rows.lowerBound
    var title: StyledLine = [
        Span(" IPs of ", .bold), Span(TerminalText.escaped(view.host), .bold),
        Span(g.separator + "TCP connect to port \(view.port), as the SDKs rank", .dim),
    ]
    if view.measuring { title.append(Span(g.separator + "measuring\(g.ellipsis)", .fg(.yellow))) }
    buffer.draw(title, x: 0, y: y, width: buffer.width)
    y += 1
    buffer.fill(x: 0, y: y, count: buffer.width, character: g.horizontal, style: .dim)
    y += 1

    let entries = view.rows
    let ipWidth = max(9, min(39, entries.map { $0.ip.text.unicodeScalars.count }.max() ?? 0))
    let widths = [2, ipWidth, 14, 9, 3, max(8, buffer.width - ipWidth - 35)]
    drawHeader(
        [("#", 2), ("IP", ipWidth), ("SOURCE", 14), ("CONNECT", 9), ("SDK", 3), ("USED BY", widths[5])], y: y,
        into: &buffer)
    y += 1
    for (index, entry) in entries.enumerated() where y < rows.upperBound {
        let connect: (String, CellStyle) =
            if let ms = entry.connectMs {
                (formatMilliseconds(ms), .fg(.green))
            } else if view.ranking == nil {
                ("\(g.ellipsis)", .dim)
            } else {
                ("failed", .fg(.red, bold: true))
            }
        let used = entry.usedBy.isEmpty ? "-" : entry.usedBy.map(\.rawValue).joined(separator: ", ")
        buffer.putRow(
            [
                ("\(index + 1)".leftPadded(2), .plain), (entry.ip.text, .bold),
                (entry.sources.map(\.rawValue).joined(separator: "+"), .plain), connect,
                (entry.sdkRank.map { "\($0)".leftPadded(3) } ?? "  -", .plain), (used, .dim),
            ], widths: widths, y: y, selected: index == view.selected)
        y += 1
    }
    y += 1

    // The SDK's order, the note, and why each failed address failed.
    var notes: [StyledLine] = []
    if let ranking = view.ranking {
        let order = ranking.sdkOrder.isEmpty ? "(none)" : ranking.sdkOrder.joined(separator: ", ")
        notes.append([Span(" SDK order after ranking: ", .bold), Span(TerminalText.escaped(order))])
        if let note = ranking.note { notes.append([Span(" note: ", .dim), Span(note, .fg(.yellow))]) }
        for entry in ranking.ips {
            guard let error = entry.error else { continue }
            notes.append([Span(" \(entry.ip): ", .dim), Span(error.sentence(.console), .fg(.red))])
        }
    }
    notes.append([
        Span(" Enter", .bold), Span(" probes ", .dim), Span(view.technique.rawValue, .fg(.cyan, bold: true)),
        Span(" against the selected address", .dim),
    ])
    for probe in view.probes.reversed() {
        var line: StyledLine = [Span("   \(probe.scenario.rawValue) @ \(probe.ip): ", .dim)]
        if let attempt = probe.attempt {
            line.append(Span(attemptWords(attempt), outcomeStyle(attempt.outcome)))
            if let error = attempt.error { line.append(Span("  " + error.sentence(.console), .dim)) }
        } else if let failure = probe.failure {
            line.append(Span("failed: " + failure, .fg(.red)))
        } else {
            line.append(Span("running\(g.ellipsis)", .fg(.yellow)))
        }
        notes.append(line)
    }
    for line in notes where y < rows.upperBound {
        buffer.draw(line, x: 0, y: y, width: buffer.width)
        y += 1
    }
}

// MARK: - The feature

/// The IP view (`i`), over the probe view while open.
enum IPViewFeature: ConsoleFeature {
    static let view = ConsoleView.probe
    static let isOverlay = true
    static let initialState: IPViewState? = nil

    static func isOpen(_ state: ConsoleState) -> Bool { state.ipView != nil }
    static let scope: KeyScope? = .ipView
    static let bindings: [KeyBinding] = [
        KeyBinding(keys: [.escape, .character("i")], command: .back, scope: .ipView, summary: "close the IP view"),
        KeyBinding(
            keys: [.character("r")], command: .rerank, scope: .ipView,
            summary: "time the connects again"),
        KeyBinding(
            keys: [.enter], command: .probeIP, scope: .ipView,
            summary: "probe the selected IP"),
        KeyBinding(
            keys: [.character("t"), .right], command: .nextTechnique, scope: .ipView,
            summary: "next technique for Enter"),
    ]

    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] {
        switch action {
        case .probeEvent(let runID, let event): observeIPViewProbe(event, runID: runID, state: &state)
        case .ipsRanked(let request, let ranking): applyRanking(ranking, request: request, state: &state)
        default: break
        }
        return []
    }

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        ipViewCommand(command, state: &state)
    }

    static func hostLineOpening(_ state: inout ConsoleState) { state.ipView = nil }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        guard let view = state.ipView else { return }
        drawIPView(state, view: view, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        [(.probeIP, "probe IP"), (.nextTechnique, "technique"), (.rerank, "re-rank"), (.back, "close")]
    }
}

extension KeyScope {
    public static let ipView = KeyScope("IP view (i)")
}

extension ConsoleState {
    /// The IP view (`i`), over the probe view while open.
    public var ipView: IPViewState? {
        get { features[IPViewFeature.self] }
        _modify { yield &features[IPViewFeature.self] }
    }
}

extension Command {
    /// Open the IP view of the selected host, and its own commands.
    public static let showIPs = Command("ips")
    public static let rerank = Command("rerank")
    public static let probeIP = Command("probe-ip")
    public static let nextTechnique = Command("next-technique")
}

// The doctor view (`D`): every check of the network as a row, filled in as each finishes, the
// summary and exit code at the end; Enter shows what one check sent and saw, `e` exports the report.
import Doctor
import FoundationEssentials
import TerminalText

/// One doctor run as the view shows it: the findings in so far, and the report once all are.
public struct DoctorViewState: Sendable, Equatable {
    /// Which run the rows belong to (0 before the first): findings of an earlier run, still
    /// arriving after `r` started another, are dropped.
    public var run = 0
    /// When the run began, for the elapsed time while it goes on.
    public var startedAt: Date?
    /// The findings in so far, by check.
    public var findings: [DoctorCheckID: DoctorFinding] = [:]
    /// The whole report, once every check has answered (or the run's bound passed).
    public var report: DoctorReport?
    /// The selected row, an index into `DoctorViewState.rows`.
    public var selected = 0
    /// Whether the selected check's detail is open, and how far it is scrolled.
    public var detailOpen = false
    public var detailScroll = 0

    public init() {}

    /// The checks in the order the rows list them, which is the report's order.
    public static let rows = DoctorCheckID.allCases

    /// The check of the selected row.
    public var selectedCheck: DoctorCheckID { Self.rows[max(0, min(selected, Self.rows.count - 1))] }

    /// Whether a run is under way.
    public var running: Bool { run > 0 && report == nil }
}

// MARK: - Reducing

/// Shows the doctor view; the first time, runs every check.
func openDoctor(_ state: inout ConsoleState) -> [ConsoleEffect] {
    if state.mode == .probeInput { state.mode = .command }
    state.view = .doctor
    guard state.doctor.run == 0 else {
        let again = state.keyMap.label(for: .doctor, in: [.doctor], lab: state.engine.lab) ?? "r"
        state.message = "The doctor's last run; \(again) runs every check again"
        return []
    }
    return startDoctorRun(&state)
}

/// Starts a run: every row back to running, the selection kept.
private func startDoctorRun(_ state: inout ConsoleState) -> [ConsoleEffect] {
    state.doctor.run += 1
    state.doctor.startedAt = state.now
    state.doctor.findings = [:]
    state.doctor.report = nil
    state.doctor.detailOpen = false
    state.doctor.detailScroll = 0
    state.message = "Running the doctor's \(DoctorViewState.rows.count) checks\u{2026}"
    return [.runDoctor(run: state.doctor.run)]
}

/// Fills in a check's row, if the finding is of the run on screen.
func applyDoctorFinding(_ finding: DoctorFinding, run: Int, state: inout ConsoleState) {
    guard run == state.doctor.run, state.doctor.report == nil else { return }
    state.doctor.findings[finding.check] = finding
}

/// Takes the run's report (every row, as the export will hold them), if it is of the run on screen.
func applyDoctorReport(_ report: DoctorReport, run: Int, state: inout ConsoleState) {
    guard run == state.doctor.run else { return }
    state.doctor.report = report
    state.doctor.findings = Dictionary(report.findings.map { ($0.check, $0) }, uniquingKeysWith: { _, last in last })
    state.message = "Doctor: " + doctorCounts(report) + "; exit code \(report.exitCode)"
}

/// A command while the doctor view is on screen; nil when the view leaves it to the rest.
func doctorCommand(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
    let check = state.doctor.selectedCheck
    switch command {
    case .open:
        guard state.doctor.findings[check] != nil else {
            state.message = "\(check.title) is still running"
            return []
        }
        state.doctor.detailOpen = true
        state.doctor.detailScroll = 0
        return []
    case .back:
        guard state.doctor.detailOpen else { return nil }
        state.doctor.detailOpen = false
        return []
    case .doctor:
        return startDoctorRun(&state)
    case .export:
        guard let report = state.doctor.report else {
            state.message = "Nothing to export yet: the checks are still running"
            return []
        }
        let path = exportBase(state, kind: "doctor") + ".json"
        state.message = "Exporting the doctor's report to \(path)\u{2026}"
        return [.exportDoctor(report, path: path)]
    case .reproduce:
        guard let finding = state.doctor.findings[check] else {
            state.message = "\(check.title) is still running"
            return []
        }
        guard !finding.reproduce.isEmpty else {
            state.message = "Nothing to reproduce: \(check.title) (\(finding.status.rawValue)) ran no command"
            return []
        }
        let commands = finding.reproduce.joined(separator: "\n")
        state.reproducePanel = ReproducePanel(title: "\(check.title): \(finding.status.rawValue)", command: commands)
        return [.copyToClipboard(commands)]
    default:
        return nil
    }
}

/// Moves the selection, or scrolls the open detail no further than its end.
func moveDoctor(by delta: Int, state: inout ConsoleState) {
    if state.doctor.detailOpen {
        let count = doctorDetailLines(state, width: state.size.width).count
        state.doctor.detailScroll = max(0, min(state.doctor.detailScroll &+ delta, count - bodyHeight(state)))
    } else {
        state.doctor.selected = max(0, min(state.doctor.selected &+ delta, DoctorViewState.rows.count - 1))
    }
}

/// "1 pass, 5 skipped, 1 warn, 1 fail".
private func doctorCounts(_ report: DoctorReport) -> String {
    DoctorStatus.allCases.map { status in
        "\(report.findings.filter { $0.status == status }.count) \(status.rawValue)"
    }.joined(separator: ", ")
}

/// "8 checks in 2.41s: 1 pass, 5 skipped, 1 warn, 1 fail; exit code 3, some check failed".
func doctorSummary(_ report: DoctorReport) -> String {
    let meaning: String
    switch report.exitCode {
    case 0: meaning = "nothing failed"
    case 1: meaning = "some check warns"
    default: meaning = "some check failed"
    }
    return "\(report.findings.count) checks in \(formatMilliseconds(report.durationMs)): "
        + doctorCounts(report) + "; exit code \(report.exitCode), \(meaning)"
}

// MARK: - Drawing

/// A status as a mark and a word, so colour only repeats what they say; nil is still running.
private func doctorMark(_ status: DoctorStatus?, glyphs: Glyphs) -> (text: String, style: CellStyle) {
    let ascii = glyphs == .ascii
    switch status {
    case nil: return ("\(glyphs.ellipsis) running", .fg(.yellow))
    case .pass?: return ((ascii ? "+" : "\u{2713}") + " pass", .fg(.green, bold: true))
    case .skipped?: return ("- skipped", .dim)
    case .warn?: return ("! warn", .fg(.yellow, bold: true))
    case .fail?: return ((ascii ? "x" : "\u{2717}") + " fail", .fg(.red, bold: true))
    }
}

/// Outside text (a finding quotes servers) escaped and cut to `cells`, the cut marked.
func clipped(_ text: String, _ cells: Int, _ glyphs: Glyphs) -> String {
    let safe = TerminalText.escaped(text)
    guard TerminalText.width(safe) > cells else { return safe }
    return TerminalText.prefix(safe, cells: max(0, cells - 1)) + String(glyphs.ellipsis)
}

/// The view's title line: who was asked, and how long the run has taken.
private func doctorTitle(_ state: ConsoleState) -> StyledLine {
    let g = state.glyphs
    var title: StyledLine = [
        Span(" Doctor", .bold),
        Span(g.separator + TerminalText.escaped("\(state.engine.provider) at \(state.engine.endpoint)"), .dim),
    ]
    if let report = state.doctor.report {
        title.append(Span(g.separator + "took " + formatMilliseconds(report.durationMs), .dim))
    } else if let startedAt = state.doctor.startedAt {
        let elapsed = max(0, Int(state.now.timeIntervalSince(startedAt).rounded(.down)))
        title.append(Span(g.separator + "running " + formatSeconds(elapsed) + String(g.ellipsis), .fg(.yellow)))
    }
    return title
}

/// Draws the doctor view: the checks, or the selected one's detail.
func drawDoctorView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    if state.doctor.detailOpen {
        buffer.draw(doctorDetailLines(state, width: buffer.width), scrolledBy: state.doctor.detailScroll, rows: rows)
        return
    }
    let g = state.glyphs
    var y = rows.lowerBound
    buffer.draw(doctorTitle(state), x: 0, y: y, width: buffer.width)
    y += 1
    buffer.fill(x: 0, y: y, count: buffer.width, character: g.horizontal, style: .dim)
    y += 1
    let showTime = buffer.width >= 100
    let fixed = [10, 21] + (showTime ? [7] : [])
    let seenWidth = max(10, buffer.width - 1 - fixed.reduce(0, +) - fixed.count - 1)
    let widths = [fixed[0], fixed[1], seenWidth] + (showTime ? [fixed[2]] : [])
    drawHeader(
        zip(["STATUS", "CHECK", "WHAT WAS SEEN", "TIME"], widths).map { ($0, $1) }, y: y, into: &buffer)
    y += 1
    // Every row fits at the smallest size but for a long message; then the selection stays in sight.
    let room = max(1, rows.upperBound - y)
    let first = max(0, state.doctor.selected - room + 1)
    for (index, check) in DoctorViewState.rows.enumerated().dropFirst(first) where y < rows.upperBound {
        let finding = state.doctor.findings[check]
        let mark = doctorMark(finding?.status, glyphs: g)
        var cells: [(String, CellStyle)] = [
            (mark.text, mark.style), (check.title, .bold),
            (finding.map { clipped($0.seen, seenWidth, g) } ?? "", .plain),
        ]
        if showTime {
            cells.append((finding.map { formatMilliseconds($0.durationMs) }?.leftPadded(fixed[2]) ?? "", .dim))
        }
        buffer.putRow(cells, widths: widths, y: y, selected: index == state.doctor.selected)
        y += 1
    }
    y += 1
    var closing: [StyledLine] = []
    if let report = state.doctor.report {
        closing = wrap(doctorSummary(report), width: buffer.width - 2).map { [Span(" " + $0, .bold)] }
    } else {
        let answered = state.doctor.findings.count
        closing = [
            [Span(" \(answered) of \(DoctorViewState.rows.count) checks answered; the others are running", .dim)]
        ]
    }
    for line in closing where y < rows.upperBound {
        buffer.draw(line, x: 0, y: y, width: buffer.width)
        y += 1
    }
}

/// The selected check's detail as lines: its status, sentences, what it sent and saw (in the
/// probe detail's trace style: `>` sent, `<` seen, `*` its own reading) and the commands that
/// repeat it. Render draws them and the reducer scrolls them.
func doctorDetailLines(_ state: ConsoleState, width: Int) -> [StyledLine] {
    let g = state.glyphs
    let check = state.doctor.selectedCheck
    guard let finding = state.doctor.findings[check] else { return [[Span(" \(check.title) is still running", .dim)]] }
    var lines: [StyledLine] = []
    func section(_ title: String) {
        lines.append([])
        lines.append([Span(" " + title, .fg(.cyan, bold: true))])
    }
    /// Outside text, escaped, wrapped under a label of `indent` columns.
    func paragraph(_ label: String, _ text: String, style: CellStyle = .plain, indent: Int = 9) {
        for (index, part) in wrap(TerminalText.escaped(text), width: max(10, width - indent - 1)).enumerated() {
            lines.append([Span((index == 0 ? label : "").padded(indent), .dim), Span(part, style)])
        }
    }
    let mark = doctorMark(finding.status, glyphs: g)
    lines.append([
        Span(" "), Span(mark.text, mark.style), Span("  "), Span(check.title, .bold),
        Span(g.separator + formatMilliseconds(finding.durationMs), .dim),
    ])
    paragraph("  seen", finding.seen)
    if let advice = finding.advice { paragraph("  do", advice, style: .bold) }

    section("Sent and seen")
    if finding.trace.isEmpty { lines.append([Span("  (nothing sent)", .dim)]) }
    for line in finding.trace {
        let sign: (text: String, style: CellStyle)
        switch line.direction {
        case .sent: sign = (">", .fg(.cyan))
        case .seen: sign = ("<", .plain)
        case .note: sign = ("*", .dim)
        }
        for (index, part) in wrap(TerminalText.escaped(line.text), width: max(10, width - 5)).enumerated() {
            lines.append([Span(index == 0 ? "  \(sign.text) " : "    ", .dim), Span(part, sign.style)])
        }
    }

    let copy = state.keyMap.label(for: .reproduce, in: [.doctor], lab: state.engine.lab) ?? "c"
    section(finding.reproduce.isEmpty ? "Reproduce" : "Reproduce (\(copy) copies these)")
    if finding.reproduce.isEmpty { lines.append([Span("  (no command: this check ran none)", .dim)]) }
    for text in reproduceLines(finding.reproduce.joined(separator: "\n"), width: width - 2) {
        lines.append([Span("  "), Span(text)])
    }
    return lines
}

// MARK: - The feature

/// The doctor view (`D`): every check of the network, filled in as they finish.
enum DoctorFeature: ConsoleFeature {
    static let view = ConsoleView.doctor
    static let initialState = DoctorViewState()

    static let scope: KeyScope? = .doctor
    static let bindings: [KeyBinding] = [
        KeyBinding(
            keys: [.enter], command: .open, scope: .doctor, summary: "what the selected check sent and saw"),
        KeyBinding(
            keys: [.escape, .backspace], command: .back, scope: .doctor,
            summary: "back to the checks, or close the doctor"),
        KeyBinding(
            keys: [.character("r"), .character("D")], command: .doctor, scope: .doctor, summary: "run every check again"
        ),
        KeyBinding(
            keys: [.character("e")], command: .export, scope: .doctor, summary: "export the report (JSON)"),
        KeyBinding(
            keys: [.character("c")], command: .reproduce, scope: .doctor,
            summary: "copy the commands that reproduce the selected check"),
    ]

    /// `D` (bound in the views that do not use it) opens the doctor from them.
    static func anywhere(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        command == .doctor ? openDoctor(&state) : nil
    }

    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] {
        switch action {
        case .doctorFinding(let run, let finding): applyDoctorFinding(finding, run: run, state: &state)
        case .doctorFinished(let run, let report): applyDoctorReport(report, run: run, state: &state)
        case .doctorExported(let path): recordExport("the doctor's report to \(path)", state: &state)
        default: break
        }
        return []
    }

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        doctorCommand(command, state: &state)
    }

    static func move(by delta: Int, state: inout ConsoleState) { moveDoctor(by: delta, state: &state) }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        drawDoctorView(state, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        (state.doctor.detailOpen
            ? [(.back, "back"), (.reproduce, "copy commands"), (.down, "scroll"), (.export, "export")]
            : [
                (.open, "detail"), (.doctor, "run again"), (.export, "export"), (.reproduce, "copy commands"),
                (.back, "close"),
            ]) + [(.nextView, "next view")]
    }

    static func scrolledLines(_ state: ConsoleState, width: Int) -> (count: Int, scroll: Int)? {
        guard state.doctor.detailOpen else { return nil }
        return (doctorDetailLines(state, width: width).count, state.doctor.detailScroll)
    }
}

extension KeyScope {
    public static let doctor = KeyScope("Doctor view (D)")
}

extension ConsoleView {
    public static let doctor = ConsoleView("Doctor")
}

extension KeyBinding {
    /// `D` opens the doctor in `scope`. D is the cache view's flush-all, so the doctor's key is
    /// bound in each other view rather than everywhere: a global D would be hidden there, which
    /// the key map refuses.
    static func doctor(in scope: KeyScope) -> KeyBinding {
        KeyBinding(keys: [.character("D")], command: .doctor, scope: scope, summary: "the doctor: is it the network?")
    }
}

extension ConsoleState {
    /// The doctor view (`D`): every check of the network, filled in as they finish.
    public var doctor: DoctorViewState {
        get { features[DoctorFeature.self] }
        _modify { yield &features[DoctorFeature.self] }
    }
}

extension Command {
    /// Open the doctor view and run every check; in that view, run them again.
    public static let doctor = Command("doctor")
}

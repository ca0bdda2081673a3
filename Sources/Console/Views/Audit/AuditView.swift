// The audit view (`A`): `ipdirect audit`'s traps in a lab beside the console, the setup an app
// needs to reach them, and each trap's verdict filling in on the console's tick as the app runs.
import Audit
import FoundationEssentials
import TerminalText

/// The audit as the view shows it: asked for, started (its setup), and the latest report.
public struct AuditViewState: Sendable, Equatable {
    /// Whether the audit's start was asked for (its lab starts once a console).
    public var starting = false
    /// What an app under audit needs, once the audit's lab is up.
    public var setup: AuditSetup?
    /// Why the audit could not start, in a sentence.
    public var failure: String?
    /// The traps' verdicts on the ledger at the last tick.
    public var report: AuditReport?
    /// Whether a report was asked for and has not come back (one asking at a time).
    public var loading = false
    /// The selected row, an index into `rows`.
    public var selected = 0
    /// Whether the selected trap's detail is open, and how far it is scrolled.
    public var detailOpen = false
    public var detailScroll = 0

    public init() {}

    /// The traps in the order the rows list them: the setup's, which is the report's.
    public var rows: [AuditTrapID] { setup.map { $0.traps.map(\.trap) } ?? AuditTrapID.allCases }

    /// The trap of the selected row.
    public var selectedTrap: AuditTrapID { rows[max(0, min(selected, rows.count - 1))] }

    /// A trap's verdict so far; nil before the audit started.
    public func finding(_ trap: AuditTrapID) -> AuditFinding? {
        report?.findings.first { $0.trap == trap }
    }

    /// A trap as the app meets it (its URLs, what it asks); nil before the audit started.
    public func trap(_ trap: AuditTrapID) -> AuditSetup.Trap? {
        setup?.traps.first { $0.trap == trap }
    }
}

// MARK: - Reducing

/// Shows the audit view; it starts nothing until asked (`A` again), since it opens ports.
func openAudit(_ state: inout ConsoleState) -> [ConsoleEffect] {
    switchView(to: .audit, state: &state)
    if state.audit.setup == nil && !state.audit.starting {
        let start = state.keyMap.label(for: .audit, in: [.audit], lab: state.engine.lab) ?? "A"
        state.message = "\(start) starts the audit's traps in a lab of their own on loopback"
        return []
    }
    return refreshAudit(&state)
}

/// Asks for the report, unless an asking is under way or no audit runs.
private func refreshAudit(_ state: inout ConsoleState) -> [ConsoleEffect] {
    guard state.audit.setup != nil, !state.audit.loading else { return [] }
    state.audit.loading = true
    return [.loadAuditReport]
}

/// A command while the audit view is on screen; nil when the view leaves it to the rest.
func auditCommand(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
    switch command {
    case .audit:
        if state.audit.setup != nil { return refreshAudit(&state) }
        guard !state.audit.starting else {
            state.message = "The audit's lab is starting\u{2026}"
            return []
        }
        state.audit.starting = true
        state.audit.failure = nil
        state.message = "Starting the audit's lab\u{2026}"
        return [.startAudit]
    case .open:
        guard state.audit.setup != nil else {
            state.message = "The audit has not started"
            return []
        }
        state.audit.detailOpen = true
        state.audit.detailScroll = 0
        return []
    case .back:
        guard state.audit.detailOpen else { return nil }
        state.audit.detailOpen = false
        return []
    default:
        return nil
    }
}

/// Moves the selection, or scrolls the open detail no further than its end.
func moveAudit(by delta: Int, state: inout ConsoleState) {
    if state.audit.detailOpen {
        let count = auditDetailLines(state, width: state.size.width).count
        state.audit.detailScroll = max(0, min(state.audit.detailScroll &+ delta, count - bodyHeight(state)))
    } else {
        state.audit.selected = max(0, min(state.audit.selected &+ delta, state.audit.rows.count - 1))
    }
}

/// "2 pass, 7 not exercised, 1 warn, 2 fail".
func auditCounts(_ report: AuditReport) -> String {
    AuditStatus.allCases.map { status in
        "\(report.findings.filter { $0.status == status }.count) \(status.label)"
    }.joined(separator: ", ")
}

// MARK: - Drawing

/// A status as a mark and a word, so colour only repeats what they say; nil is before the audit.
private func auditMark(_ status: AuditStatus?, glyphs: Glyphs) -> (text: String, style: CellStyle) {
    let ascii = glyphs == .ascii
    switch status {
    case nil: return ("- not started", .dim)
    case .pass?: return ((ascii ? "+" : "\u{2713}") + " pass", .fg(.green, bold: true))
    case .notExercised?: return ("- not exercised", .dim)
    case .warn?: return ("! warn", .fg(.yellow, bold: true))
    case .fail?: return ((ascii ? "x" : "\u{2717}") + " fail", .fg(.red, bold: true))
    }
}

/// The setup lines an app needs first: the HTTPDNS endpoint, system DNS, the proxy trap's proxy,
/// CA and token.
private func auditSetupLines(_ setup: AuditSetup, width: Int, glyphs: Glyphs) -> [StyledLine] {
    let rows = [
        ("HTTPDNS", setup.httpdns["ip"] ?? setup.httpdns.values.sorted().first ?? ""),
        ("DNS", setup.dns + "  (the fallback traps' system DNS)"),
        ("proxy", setup.proxy + "  (the proxy trap's, as if the user had set it)"),
        ("CA", setup.caPEM), ("token", setup.token),
    ]
    return rows.map { label, value in
        [Span("  " + label.padded(9), .dim), Span(clipped(value, max(10, width - 12), glyphs))]
    }
}

/// Draws the audit view: the setup and the traps, or the selected trap's detail.
func drawAuditView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    if state.audit.detailOpen {
        buffer.draw(auditDetailLines(state, width: buffer.width), scrolledBy: state.audit.detailScroll, rows: rows)
        return
    }
    let g = state.glyphs
    let audit = state.audit
    var y = rows.lowerBound
    var title: StyledLine = [Span(" Audit", .bold)]
    if let setup = audit.setup {
        title.append(Span(g.separator + "run " + TerminalText.escaped(setup.token), .dim))
        if let report = audit.report {
            title.append(Span(g.separator + auditCounts(report), .dim))
        }
    } else if audit.starting {
        title.append(Span(g.separator + "starting the lab" + String(g.ellipsis), .fg(.yellow)))
    } else {
        let start = state.keyMap.label(for: .audit, in: [.audit], lab: state.engine.lab) ?? "A"
        title.append(Span(g.separator + "\(start) starts the traps in a lab on loopback", .dim))
    }
    buffer.draw(title, x: 0, y: y, width: buffer.width)
    y += 1
    buffer.fill(x: 0, y: y, count: buffer.width, character: g.horizontal, style: .dim)
    y += 1
    if let failure = audit.failure {
        for line in wrap("The audit could not start: " + TerminalText.escaped(failure), width: buffer.width - 2)
        where y < rows.upperBound {
            buffer.draw([Span(" " + line, .fg(.red))], x: 0, y: y, width: buffer.width)
            y += 1
        }
    }
    if let setup = audit.setup {
        for line in auditSetupLines(setup, width: buffer.width, glyphs: g) where y < rows.upperBound {
            buffer.draw(line, x: 0, y: y, width: buffer.width)
            y += 1
        }
        y += 1
    }
    guard y < rows.upperBound else { return }
    let fixed = [15, 22]
    let restWidth = max(10, buffer.width - 1 - fixed.reduce(0, +) - fixed.count)
    let widths = fixed + [restWidth]
    drawHeader(
        zip(["STATUS", "TRAP", "WHAT WAS SEEN, OR ITS URL"], widths).map { ($0, $1) }, y: y, into: &buffer)
    y += 1
    let room = max(1, rows.upperBound - y)
    let first = max(0, audit.selected - room + 1)
    for (index, trap) in audit.rows.enumerated().dropFirst(first) where y < rows.upperBound {
        let finding = audit.finding(trap)
        let mark = auditMark(audit.setup == nil ? nil : finding?.status ?? .notExercised, glyphs: g)
        // Not exercised yet: the URL the app is to use; then what the lab saw.
        let rest: String
        if let finding, finding.status != .notExercised {
            rest = finding.seen
        } else {
            rest = audit.trap(trap)?.url ?? ""
        }
        buffer.putRow(
            [(mark.text, mark.style), (trap.title, .bold), (clipped(rest, restWidth, g), .plain)], widths: widths,
            y: y, selected: index == audit.selected)
        y += 1
    }
}

/// The selected trap's detail as lines: its status and URLs, what it exercises and asks, what was
/// seen, what to change, and the ledger's evidence. Render draws them and the reducer scrolls them.
func auditDetailLines(_ state: ConsoleState, width: Int) -> [StyledLine] {
    let audit = state.audit
    let trap = audit.selectedTrap
    var lines: [StyledLine] = []
    func section(_ title: String) {
        lines.append([])
        lines.append([Span(" " + title, .fg(.cyan, bold: true))])
    }
    /// Outside text (evidence quotes clients), escaped, wrapped under a label.
    func paragraph(_ label: String, _ text: String, style: CellStyle = .plain, indent: Int = 12) {
        for (index, part) in wrap(TerminalText.escaped(text), width: max(10, width - indent - 1)).enumerated() {
            lines.append([Span((index == 0 ? label : "").padded(indent), .dim), Span(part, style)])
        }
    }
    let finding = audit.finding(trap)
    let mark = auditMark(audit.setup == nil ? nil : finding?.status ?? .notExercised, glyphs: state.glyphs)
    lines.append([Span(" "), Span(mark.text, mark.style), Span("  "), Span(trap.title, .bold)])
    if let entry = audit.trap(trap) {
        for (index, url) in entry.urls.enumerated() { paragraph(index == 0 ? "  URL" : "", url) }
        paragraph("  exercises", entry.exercises)
        paragraph("  asks", entry.asks)
    }
    if let finding {
        paragraph("  seen", finding.seen)
        if let advice = finding.advice { paragraph("  do", advice, style: .bold) }
        section("Evidence (the lab's ledger)")
        if finding.evidence.isEmpty { lines.append([Span("  (nothing in the ledger for this trap)", .dim)]) }
        for line in finding.evidence {
            for (index, part) in wrap(TerminalText.escaped(line), width: max(10, width - 5)).enumerated() {
                lines.append([Span(index == 0 ? "  \u{00B7} " : "    ", .dim), Span(part)])
            }
        }
    }
    return lines
}

// MARK: - The feature

/// The audit view (`A`): the traps of `ipdirect audit` in a lab beside the console, live.
enum AuditFeature: ConsoleFeature {
    static let view = ConsoleView.audit
    static let initialState = AuditViewState()

    static let scope: KeyScope? = .audit
    static let bindings: [KeyBinding] = [
        KeyBinding(
            keys: [.character("A")], command: .audit, scope: .audit,
            summary: "start the audit's traps, or read the ledger again"),
        KeyBinding(keys: [.enter], command: .open, scope: .audit, summary: "the selected trap's evidence and advice"),
        KeyBinding(
            keys: [.escape, .backspace], command: .back, scope: .audit, summary: "back to the traps, or close the audit"
        ),
        KeyBinding(
            keys: [.character("A")], command: .audit, scope: .global,
            summary: "the audit: does an app do IP-direct right?"),
    ]

    /// `A` opens the audit view from any other view.
    static func anywhere(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        command == .audit ? openAudit(&state) : nil
    }

    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] {
        switch action {
        case .auditStarted(let setup):
            state.audit.starting = false
            state.audit.setup = setup
            state.message = "The audit runs: point the app at the setup above and use it"
            return refreshAudit(&state)
        case .auditFailed(let reason):
            state.audit.starting = false
            state.audit.failure = reason
            state.message = "The audit could not start"
        case .auditReport(let report):
            state.audit.loading = false
            state.audit.report = report
        case .tick:
            // The report fills in while the view is shown: the app is using the traps meanwhile.
            if state.view == .audit { return refreshAudit(&state) }
        default: break
        }
        return []
    }

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        auditCommand(command, state: &state)
    }

    static func move(by delta: Int, state: inout ConsoleState) { moveAudit(by: delta, state: &state) }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        drawAuditView(state, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        if state.audit.detailOpen { return [(.back, "back"), (.down, "scroll")] }
        return [(.audit, state.audit.setup == nil ? "start" : "refresh"), (.open, "detail"), (.back, "close")]
            + [(.nextView, "next view")]
    }

    static func scrolledLines(_ state: ConsoleState, width: Int) -> (count: Int, scroll: Int)? {
        guard state.audit.detailOpen else { return nil }
        return (auditDetailLines(state, width: width).count, state.audit.detailScroll)
    }
}

extension KeyScope {
    public static let audit = KeyScope("Audit view (A)")
}

extension ConsoleView {
    public static let audit = ConsoleView("Audit")
}

extension ConsoleState {
    /// The audit view (`A`): the traps of `ipdirect audit`, filled in as the app runs.
    public var audit: AuditViewState {
        get { features[AuditFeature.self] }
        _modify { yield &features[AuditFeature.self] }
    }
}

extension Command {
    /// Open the audit view; in it, start the audit, or read its ledger again.
    public static let audit = Command("audit")
}

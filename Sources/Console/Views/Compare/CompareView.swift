// The compare view (`v`): every configured provider asked for the selected host at once, beside
// the system column; answer, TTL, time, client IP seen and error, with agreements in letters.
import FoundationEssentials
import NameResolution
import Probe

/// What the compare view shows: the host asked about and, once in, the providers' answers.
public struct CompareState: Sendable, Equatable {
    public var host: String?
    public var result: ProviderComparison?
    public var running = false
    public var scroll = 0

    public init(host: String? = nil, result: ProviderComparison? = nil, running: Bool = false) {
        self.host = host
        self.result = result
        self.running = running
    }
}

/// The host the selection points at in the current view: the compare view's own, the
/// selected cache entry's, the selected trace's, or the selected probe's.
func selectedHost(_ state: ConsoleState) -> String? {
    ConsoleFeatures.base(state.view).selectedHost(state)
}

/// Opens the compare view on the selected host and asks the engine to compare.
func openCompare(_ state: inout ConsoleState) -> [ConsoleEffect] {
    guard let host = selectedHost(state) else {
        state.message = "Nothing to compare: probe a host first (p), or select one in the cache (2)"
        return []
    }
    state.compare = CompareState(
        host: host, result: state.compare.host == host ? state.compare.result : nil, running: true)
    state.view = .compare
    if state.mode == .probeInput { state.mode = .command }
    state.message = "Asking every provider for \(host)\u{2026}"
    return [.compareProviders(host: host)]
}

/// Takes a finished comparison, if it is for the host the view shows.
func applyComparison(_ comparison: ProviderComparison, state: inout ConsoleState) {
    guard comparison.host == state.compare.host || state.compare.host == nil else { return }
    state.compare.host = comparison.host
    state.compare.result = comparison
    state.compare.running = false
    state.message =
        comparison.providers.isEmpty
        ? "No providers to compare: add [[providers]] to the configuration file, or start with --lab"
        : "\(comparison.host): \(comparison.summary)"
}

/// The columns at a width: (name, kind or nil, answer, ttl, time, cip, agree).
private func compareColumns(_ width: Int) -> CompareColumns {
    let kind = width >= 110 ? 16 : 0
    let name = width >= 110 ? 20 : 16
    let fixed = 1 + name + (kind > 0 ? kind + 1 : 0) + 1 + 1 + 5 + 1 + 7 + 1 + 15 + 1 + 11
    return (name, kind, max(8, width - fixed), 5, 7, 15, 11)
}

/// The lines of the compare view, before scrolling.
func compareLines(_ state: ConsoleState, width: Int) -> [StyledLine] {
    let g = state.glyphs
    var lines: [StyledLine] = []
    guard let host = state.compare.host else {
        return [[Span(" Press v on a probed host (1), a cache entry (2) or a trace (3) to compare providers.", .dim)]]
    }
    var title: StyledLine = [Span(" Providers for ", .bold), Span(host, .fg(.cyan, bold: true))]
    if state.compare.running { title.append(Span("  asking\(g.ellipsis)", .fg(.yellow))) }
    lines.append(title)
    guard let result = state.compare.result else { return lines }
    if result.providers.isEmpty {
        lines.append([])
        for text in [
            "No providers to compare. Name them in the configuration file ([[providers]] tables, each with",
            "kind, endpoint, account, cipher and the names of the environment variables holding its secrets),",
            "or start the console with --lab for the lab's four.",
        ] {
            lines.append([Span(" " + text, .dim)])
        }
        return lines
    }
    for (index, text) in wrap(result.summary, width: width - 3).enumerated() {
        lines.append([Span(index == 0 ? " = " : "   ", .dim), Span(text, .bold)])
    }
    lines.append([Span(String(repeating: String(g.horizontal), count: width), .dim)])
    let columns = compareColumns(width)
    lines.append(compareHeader(columns))
    lines += result.providers.map { providerRow($0, columns: columns, glyphs: g) }
    lines.append(systemRow(result, columns: columns, glyphs: g))
    lines += compareErrors(result, glyphs: g, width: width)
    lines.append([])
    let legend = "Same letter, same addresses. AGREE also says how each answer compares with the system column."
    for text in wrap(legend, width: width - 2) { lines.append([Span(" " + text, .dim)]) }
    return lines
}

/// The widths of the compare table's columns, as `compareColumns` gives them.
private typealias CompareColumns = (name: Int, kind: Int, answer: Int, ttl: Int, time: Int, cip: Int, agree: Int)

/// The table's header row.
private func compareHeader(_ c: CompareColumns) -> StyledLine {
    var header: StyledLine = [Span(" "), Span("PROVIDER".padded(c.name + 1), .bold)]
    if c.kind > 0 { header.append(Span("KIND".padded(c.kind + 1), .bold)) }
    return header + [
        Span("ANSWER".padded(c.answer + 1), .bold), Span("TTL".leftPadded(c.ttl) + " ", .bold),
        Span("TIME".leftPadded(c.time) + " ", .bold), Span("CIP".padded(c.cip + 1), .bold),
        Span("AGREE".padded(c.agree), .bold),
    ]
}

/// The AGREE cell: the answer's letter and how it compares with the system column.
private func agreeSpans(_ group: String?, _ vsSystem: Agreement?, width: Int, glyphs g: Glyphs) -> [Span] {
    guard let group else { return [Span("-".padded(width), .dim)] }
    let words = vsSystem.map { " " + agreeWord($0) } ?? ""
    let style: CellStyle
    switch vsSystem {
    case .same?, nil: style = .fg(.green, bold: true)
    case .overlap?: style = .fg(.yellow, bold: true)
    default: style = .fg(.red, bold: true)
    }
    return [Span(g.clip(group + words, width).padded(width), style)]
}

/// One provider's row.
private func providerRow(_ row: ProviderRow, columns c: CompareColumns, glyphs g: Glyphs) -> StyledLine {
    var line: StyledLine = [Span(" "), Span(g.clip(row.name, c.name).padded(c.name + 1), .bold)]
    if c.kind > 0 { line.append(Span(row.kind.rawValue.padded(c.kind + 1), .dim)) }
    if row.error != nil {
        line.append(Span(g.clip("failed (below)", c.answer).padded(c.answer + 1), .fg(.red)))
    } else {
        line.append(Span(g.clip(row.addresses.joined(separator: ", "), c.answer).padded(c.answer + 1)))
    }
    line += [
        Span((row.ttl?.shown ?? "-").leftPadded(c.ttl) + " ", .dim),
        Span(formatMilliseconds(row.ms).leftPadded(c.time) + " ", .dim),
        Span(g.clip(row.clientIP?.text ?? "-", c.cip).padded(c.cip + 1)),
    ]
    return line + agreeSpans(row.group, row.error == nil ? row.vsSystem : nil, width: c.agree, glyphs: g)
}

/// The system column's row: who answered it, and at a width that allows, where it is.
private func systemRow(_ result: ProviderComparison, columns c: CompareColumns, glyphs g: Glyphs) -> StyledLine {
    let system = result.system
    let systemName: String
    let systemWhere: String
    switch system.resolver {
    case .getaddrinfo: (systemName, systemWhere) = ("system DNS", "getaddrinfo")
    case .dns(let server): (systemName, systemWhere) = ("DNS server", "\(server)")
    }
    var systemLine: StyledLine = [Span(" "), Span(systemName.padded(c.name + 1), .bold)]
    if c.kind > 0 { systemLine.append(Span(g.clip(systemWhere, c.kind).padded(c.kind + 1), .dim)) }
    if system.error != nil {
        systemLine.append(Span(g.clip("failed (below)", c.answer).padded(c.answer + 1), .fg(.red)))
    } else {
        systemLine.append(
            Span(g.clip((system.ipv4 + system.ipv6).joined(separator: ", "), c.answer).padded(c.answer + 1)))
    }
    systemLine += [
        Span((system.ttl.map { "\($0)s" } ?? "-").leftPadded(c.ttl) + " ", .dim),
        Span(formatMilliseconds(system.ms).leftPadded(c.time) + " ", .dim),
        Span("-".padded(c.cip + 1), .dim),
    ]
    return systemLine + agreeSpans(result.systemGroup, nil, width: c.agree, glyphs: g)
}

/// Each failure's sentence whole, under the table.
private func compareErrors(_ result: ProviderComparison, glyphs g: Glyphs, width: Int) -> [StyledLine] {
    let system = result.system
    let failures = result.providers.compactMap { row in row.error.map { (row.name, row.endpoint, $0.sentence) } }
    let systemFailure = system.error.map { [(system.resolver.label, "", $0.sentence)] } ?? []
    guard !(failures + systemFailure).isEmpty else { return [] }
    var lines: [StyledLine] = [[], [Span(" Errors", .bold)]]
    for (name, endpoint, error) in failures + systemFailure {
        let prefix = endpoint.isEmpty ? "\(name): " : "\(name) (\(endpoint)): "
        for (index, text) in wrap(prefix + error, width: width - 4).enumerated() {
            lines.append([Span(index == 0 ? "  \(g.selected) " : "    ", .fg(.red)), Span(text)])
        }
    }
    return lines
}

/// How an answer compares with the system column, in a word or two.
private func agreeWord(_ agreement: Agreement) -> String {
    switch agreement {
    case .same: "same"
    case .overlap: "overlap"
    case .disjoint: "differs"
    case .systemFailed: "sys failed"
    case .httpdnsFailed, .bothFailed: "failed"
    }
}

/// Draws the compare view from its scroll position.
func drawCompareView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    buffer.draw(compareLines(state, width: buffer.width), scrolledBy: state.compare.scroll, rows: rows)
}

// MARK: - The feature

/// The compare view (`v`): every provider's answer for one host.
enum CompareFeature: ConsoleFeature {
    static let view = ConsoleView.compare
    static let initialState = CompareState()

    static let scope: KeyScope? = .compare
    static let bindings: [KeyBinding] = [
        .doctor(in: .compare),
        KeyBinding(
            keys: [.character("r")], command: .compareProviders, scope: .compare, summary: "ask every provider again"),
        KeyBinding(
            keys: [.character("v")], command: .compareProviders, scope: .global,
            summary: "compare every provider's answer for the selected host"),
    ]

    /// `v` from any view asks every provider for the selected host.
    static func anywhere(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        command == .compareProviders ? openCompare(&state) : nil
    }

    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] {
        if case .providersCompared(let comparison) = action { applyComparison(comparison, state: &state) }
        return []
    }

    static func move(by delta: Int, state: inout ConsoleState) {
        state.compare.scroll = max(0, state.compare.scroll &+ delta)
    }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        drawCompareView(state, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        [(.compareProviders, "ask again"), (.down, "scroll"), (.back, "back"), (.nextView, "next view")]
    }

    static func selectedHost(_ state: ConsoleState) -> String? { state.compare.host }
}

extension KeyScope {
    public static let compare = KeyScope("Compare view")
}

extension ConsoleView {
    public static let compare = ConsoleView("Compare")
}

extension ConsoleState {
    /// The compare view (`v`): every provider's answer for one host.
    public var compare: CompareState {
        get { features[CompareFeature.self] }
        _modify { yield &features[CompareFeature.self] }
    }
}

extension Command {
    /// Ask every configured provider for the selected host.
    public static let compareProviders = Command("compare-providers")
}

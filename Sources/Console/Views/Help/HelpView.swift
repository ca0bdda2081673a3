// The help view: every key binding of the key map, grouped by where it applies, in one or two
// columns; generated from the KeyMap so a key cannot work and be missing here.
import FoundationEssentials

func drawHelpView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    let columns = helpColumns(state, width: buffer.width)
    let columnWidth = buffer.width / columns.count
    let scroll = clampedHelpScroll(state.helpView.scroll, columns: columns, height: rows.count)
    for (index, column) in columns.enumerated() {
        var y = rows.lowerBound
        for line in column.dropFirst(scroll).prefix(rows.count) {
            buffer.draw(line, x: index * columnWidth, y: y, width: columnWidth - 1)
            y += 1
        }
    }
}

/// The help view's columns for a terminal `width` wide: two, split where a section starts, on
/// a wide terminal; one otherwise. Render draws them and the reducer scrolls them.
func helpColumns(_ state: ConsoleState, width: Int) -> [[StyledLine]] {
    let twoColumns = width >= 100
    let lines = helpLines(state.keyMap, lab: state.engine.lab, width: (twoColumns ? width / 2 : width) - 1)
    guard twoColumns else { return [lines] }
    // The split that leaves the longer column shortest.
    let sectionStarts = lines.indices.filter { $0 > 0 && lines[$0].first?.style == .fg(.cyan, bold: true) }
    guard let split = sectionStarts.min(by: { max($0, lines.count - $0) < max($1, lines.count - $1) }) else {
        return [lines]
    }
    return [Array(lines[..<split]), Array(lines[split...])]
}

/// How far the help view is scrolled: both columns together, no further than the longer one's end.
func clampedHelpScroll(_ scroll: Int, columns: [[StyledLine]], height: Int) -> Int {
    max(0, min(scroll, (columns.map(\.count).max() ?? 0) - height))
}

/// The help text, generated from the key map: every binding, grouped by where it applies.
/// A summary too long for `width` columns goes on under itself rather than being cut.
func helpLines(_ keyMap: KeyMap, lab: Bool, width: Int) -> [StyledLine] {
    var lines: [StyledLine] = []
    let keyWidth = 16
    // Two columns of sections when the terminal is wide enough.
    for scope in KeyScope.all {
        let bindings = keyMap.bindings.filter { $0.scope == scope && (lab || !$0.labOnly) }
        guard !bindings.isEmpty else { continue }
        lines.append([Span(" " + scope.title, .fg(.cyan, bold: true))])
        for binding in bindings {
            let keys = binding.keys.map(\.label).joined(separator: ", ")
            // The action's name is what `[keys]` in the configuration file remaps.
            let summary = wrap(binding.summary + "  [\(binding.command.name)]", width: max(10, width - 3 - keyWidth))
            lines.append([Span("   " + keys.padded(keyWidth), .bold), Span(summary[0])])
            for more in summary.dropFirst() { lines.append([Span(String(repeating: " ", count: 3 + keyWidth) + more)]) }
        }
    }
    return lines
}

// MARK: - The feature

/// The help view (5, `?`): every key, from the key map.
enum HelpFeature: ConsoleFeature {
    static let view = ConsoleView.help
    static let isTab = true
    static let bindings: [KeyBinding] = [
        KeyBinding(keys: [.character("?"), .character("5")], command: .help, scope: .global, summary: "this help")
    ]

    static let initialState = HelpViewState()

    /// `?` from any view opens help at its top, however far it was scrolled last time.
    static func anywhere(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        guard command == .help else { return nil }
        state.helpView.scroll = 0
        switchView(to: .help, state: &state)
        return []
    }

    static func move(by delta: Int, state: inout ConsoleState) {
        // Clamped here, so Up after scrolling past the end moves at once.
        state.helpView.scroll = clampedHelpScroll(
            state.helpView.scroll &+ delta, columns: helpColumns(state, width: state.size.width),
            height: bodyHeight(state))
    }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        drawHelpView(state, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        [(.down, "scroll"), (.back, "back"), (.nextView, "next view")]
    }

    static func scrolledLines(_ state: ConsoleState, width: Int) -> (count: Int, scroll: Int)? {
        (helpColumns(state, width: width).map(\.count).max() ?? 0, state.helpView.scroll)
    }
}

extension ConsoleView {
    public static let help = ConsoleView("Help")
}

/// How far the help view is scrolled.
public struct HelpViewState: Sendable, Equatable {
    public var scroll = 0
}

extension ConsoleState {
    /// The help view's state.
    public var helpView: HelpViewState {
        get { features[HelpFeature.self] }
        _modify { yield &features[HelpFeature.self] }
    }
}

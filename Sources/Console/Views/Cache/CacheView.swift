// The cache view: every resolver cache entry with a TTL that counts down live, its source
// and state; sorted by the column `s` picks, filtered by `/`.
import FoundationEssentials
import NameResolution

func drawCacheView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    let g = state.glyphs
    var y = rows.lowerBound
    let summary: StyledLine = [
        Span(" family ", .dim), Span(state.family.rawValue, .bold),
        Span(g.separator + "expired-IP reuse ", .dim), Span(state.reuseExpired ? "on" : "off", .bold),
        Span(
            g.separator + "\(state.cacheView.order.count) of \(state.cache.count) entries" + g.separator + "sorted by ",
            .dim
        ),
        Span(state.cacheView.sort.rawValue + (state.cacheView.descending ? " (reversed)" : ""), .bold),
    ]
    buffer.draw(summary, x: 0, y: y, width: buffer.width)
    y += 1

    // NAME and IPS share what the fixed columns leave.
    let fixed = [3, 6, 15, 10, 4, 5]
    let flexible = max(20, buffer.width - 2 - fixed.reduce(0, +) - 7)
    let nameWidth = flexible * 11 / 20
    let ipsWidth = flexible - nameWidth
    let widths = [nameWidth, fixed[0], ipsWidth, fixed[1], fixed[2], fixed[3], fixed[4], fixed[5]]
    let titles = ["NAME", "FAM", "IPS", "TTL", "SOURCE", "STATE", "HITS", "AGE"]
    let sortIndex = CacheSortColumn.allCases.firstIndex(of: state.cacheView.sort) ?? 0
    let mark = String(state.cacheView.descending ? g.descending : g.ascending)
    drawHeader(
        titles.enumerated().map { index, title in (index == sortIndex ? title + mark : title, widths[index]) }, y: y,
        into: &buffer)
    y += 1

    if state.cacheView.order.isEmpty {
        // The key that opens the host line, as the key map has it (`[keys]` may move it).
        let type = state.keyMap.label(for: .typeHost, in: [.cache, .global], lab: state.engine.lab) ?? "p"
        let text =
            state.cache.isEmpty
            ? "The cache is empty. Probe a host (\(type), then type it) and its answers appear here."
            : "No entry matches the filter."
        buffer.put(" " + text, x: 0, y: y, style: .dim)
        return
    }
    let cursor = state.cacheView.cursor
    let visible = rows.upperBound - y
    let end = min(state.cacheView.order.count, cursor.offset + visible)
    for row in cursor.offset..<end {
        let entry = state.cache[state.cacheView.order[row]]
        let remaining = entry.remaining(at: state.now)
        let seconds = entry.secondsLeft(at: state.now, rounded: .up)
        let expired = remaining <= 0
        let entryState = entry.refreshing ? "refreshing" : (expired ? "expired" : "fresh")
        let stateStyle: CellStyle = entry.refreshing ? .fg(.yellow) : (expired ? .fg(.red) : .fg(.green))
        let age = entry.age(at: state.now)
        let ips = entry.ips.joined(separator: ",")
        let cells: [(String, CellStyle)] = [
            (g.clip(entry.host, widths[0]), .plain),
            (entry.family.rawValue, .plain),
            (ips.isEmpty ? "(none)" : g.clip(ips, widths[2]), ips.isEmpty ? .dim : .plain),
            (formatSeconds(seconds).leftPadded(widths[3] - 1), expired ? .fg(.red) : .bold),
            (entry.source.rawValue, entry.source == .systemFallback ? .fg(.yellow) : .plain),
            (entryState, stateStyle),
            (String(entry.hits).leftPadded(widths[6] - 1), .plain),
            (formatSeconds(max(0, age)).leftPadded(widths[7] - 1), .dim),
        ]
        buffer.putRow(cells, widths: widths, y: y, selected: row == cursor.selected)
        y += 1
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
    let column = state.cacheView.sort
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
    if state.cacheView.descending { order.reverse() }
    state.cacheView.order = order
    let visible = max(1, bodyHeight(state) - 2)
    state.cacheView.cursor.selected = max(0, min(state.cacheView.cursor.selected, order.count - 1))
    if state.cacheView.cursor.selected >= state.cacheView.cursor.offset + visible {
        state.cacheView.cursor.offset = state.cacheView.cursor.selected - visible + 1
    }
    state.cacheView.cursor.offset = min(state.cacheView.cursor.offset, state.cacheView.cursor.selected)
}

// MARK: - The feature

/// The cache view (2): the resolver cache, live.
enum CacheFeature: ConsoleFeature {
    static let view = ConsoleView.cache
    static let isTab = true
    static let initialState = CacheViewState()
    static let filters = true

    static let scope: KeyScope? = .cache
    static let bindings: [KeyBinding] = [
        KeyBinding(keys: [.character("s")], command: .sortNext, scope: .cache, summary: "sort by the next column"),
        KeyBinding(keys: [.character("S")], command: .sortReverse, scope: .cache, summary: "reverse the sort order"),
        KeyBinding(keys: [.character("d")], command: .flushEntry, scope: .cache, summary: "flush the selected name"),
        KeyBinding(
            keys: [.character("D")], command: .flushAll, scope: .cache, summary: "flush every name (asks first)"),
        KeyBinding(
            keys: [.character("r")], command: .refreshEntry, scope: .cache,
            summary: "refresh the selected name from HTTPDNS"),
        KeyBinding(
            keys: [.character("f")], command: .cycleFamily, scope: .cache,
            summary: "next address family (auto, v4, v6, both)"),
        KeyBinding(
            keys: [.character("x")], command: .toggleReuseExpired, scope: .cache,
            summary: "turn expired-IP reuse on or off"),
        KeyBinding(keys: [.character("2")], command: .showView(.cache), scope: .global, summary: "Cache view"),
    ]

    static func reduce(_ action: ConsoleAction, state: inout ConsoleState) -> [ConsoleEffect] {
        switch action {
        case .tick:
            // The cache view shows hit counts and refreshes as they happen.
            return state.view == .cache ? [.loadCache] : []
        case .cacheEntries(let entries):
            state.cache = entries
            resortCache(&state)
        default: break
        }
        return []
    }

    static func command(_ command: Command, state: inout ConsoleState) -> [ConsoleEffect]? {
        switch command {
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
            state.cacheView.sort = all[((all.firstIndex(of: state.cacheView.sort) ?? 0) + 1) % all.count]
            state.cacheView.descending = false
            resortCache(&state)
            state.message = "Sorted by \(state.cacheView.sort.rawValue)"
        case .sortReverse:
            state.cacheView.descending.toggle()
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
        default:
            return nil
        }
        return []
    }

    static func move(by delta: Int, state: inout ConsoleState) {
        state.cacheView.cursor.step(by: delta, count: state.cacheView.order.count, visible: listRows(state))
    }

    static func filterChanged(_ state: inout ConsoleState) {
        resortCache(&state)
        state.cacheView.cursor = ListCursor()
    }

    static func bodyResized(_ state: inout ConsoleState) {
        state.cacheView.cursor.clamp(count: state.cacheView.order.count, visible: listRows(state))
    }

    static func shown(_ state: inout ConsoleState) -> [ConsoleEffect] { [.loadCache] }

    static func draw(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
        drawCacheView(state, rows: rows, into: &buffer)
    }

    static func hints(_ state: ConsoleState) -> [(Command, String)] {
        [
            (.sortNext, "sort"), (.flushEntry, "flush"), (.flushAll, "flush all"), (.refreshEntry, "refresh"),
            (.cycleFamily, "family"), (.toggleReuseExpired, "reuse"), (.nextView, "next view"),
        ]
    }

    static func selectedHost(_ state: ConsoleState) -> String? { state.selectedCacheEntry?.host }
}

extension KeyScope {
    public static let cache = KeyScope("Cache view")
}

extension ConsoleView {
    public static let cache = ConsoleView("Cache")
}

/// The cache view's order, sort and selection; the entries are `ConsoleState.cache`.
public struct CacheViewState: Sendable, Equatable {
    /// Indices into `ConsoleState.cache` in display order (sorted, filtered).
    public var order: [Int] = []
    public var sort: CacheSortColumn = .name
    public var descending = false
    public var cursor = ListCursor()
}

/// The columns the cache view sorts by, in the order `s` cycles them.
public enum CacheSortColumn: String, Sendable, CaseIterable {
    case name, family, ips, ttl, source, state, hits, age
}

extension ConsoleState {
    /// The cache view's state.
    public var cacheView: CacheViewState {
        get { features[CacheFeature.self] }
        _modify { yield &features[CacheFeature.self] }
    }

    /// The cache entry selected in the cache view.
    public var selectedCacheEntry: CacheEntrySnapshot? {
        let row = cacheView.cursor.selected
        guard row >= 0, row < cacheView.order.count else { return nil }
        return cache[cacheView.order[row]]
    }
}

extension Command {
    /// The cache view's own commands.
    public static let refreshEntry = Command("refresh")
    public static let sortNext = Command("sort")
    public static let sortReverse = Command("sort-reverse")
    public static let flushEntry = Command("flush")
    public static let flushAll = Command("flush-all")
    public static let cycleFamily = Command("family")
    public static let toggleReuseExpired = Command("reuse-expired")
}

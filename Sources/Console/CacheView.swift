// The cache view: every resolver cache entry with a TTL that counts down live, its source
// and state; sorted by the column `s` picks, filtered by `/`.
import Foundation
import NameResolution

func drawCacheView(_ state: ConsoleState, rows: Range<Int>, into buffer: inout CellBuffer) {
    let g = state.glyphs
    var y = rows.lowerBound
    let summary: StyledLine = [
        Span(" family ", .dim), Span(state.family.rawValue, .bold),
        Span(g.separator + "expired-IP reuse ", .dim), Span(state.reuseExpired ? "on" : "off", .bold),
        Span(
            g.separator + "\(state.cacheOrder.count) of \(state.cache.count) entries" + g.separator + "sorted by ", .dim
        ),
        Span(state.cacheSort.rawValue + (state.cacheSortDescending ? " (reversed)" : ""), .bold),
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
    let sortIndex = CacheSortColumn.allCases.firstIndex(of: state.cacheSort) ?? 0
    let mark = String(state.cacheSortDescending ? g.descending : g.ascending)
    drawHeader(
        titles.enumerated().map { index, title in (index == sortIndex ? title + mark : title, widths[index]) }, y: y,
        into: &buffer)
    y += 1

    if state.cacheOrder.isEmpty {
        let text =
            state.cache.isEmpty
            ? "The cache is empty. Probe a host (1, then type it) and its answers appear here."
            : "No entry matches the filter."
        buffer.put(" " + text, x: 0, y: y, style: .dim)
        return
    }
    let cursor = state.cacheCursor
    let visible = rows.upperBound - y
    let end = min(state.cacheOrder.count, cursor.offset + visible)
    for row in cursor.offset..<end {
        let entry = state.cache[state.cacheOrder[row]]
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

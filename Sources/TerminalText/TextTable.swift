// Aligned plain-text tables for the command line: `probe`'s attempts and rankings, `resolve`'s
// names and providers, `cache list`'s entries and the doctor's report print through this one function.
import FoundationEssentials

/// Columns padded to their widest cell (in terminal cells), two spaces apart, trailing
/// spaces trimmed. Cells from outside must already be escaped (`TerminalText.escaped`).
public enum TextTable {
    /// The table as lines (no newline at the end of each), header first.
    ///
    /// - Parameters:
    ///   - header: the column titles.
    ///   - rows: one array of cells per row, as many as `header` has, already escaped.
    ///   - rightAligned: the columns (by index) whose cells are right-aligned, such as numbers.
    ///   - indent: put before every line.
    ///   - paint: wraps a data cell (row, column, text) in colour codes after its width is measured;
    ///     nil leaves every cell plain.
    ///   - minimumWidths: columns (by index) at least this wide, whatever their cells (the
    ///     doctor's title column is as wide as the longest title of every check, shown or not).
    ///   - wrap: when given, the last column's sentences are wrapped so each line fits this
    ///     width, the lines after the first under the column, `hanging(row)` cells further in.
    public static func lines(
        header: [String]?, rows: [[String]], rightAligned: Set<Int> = [], indent: String = "",
        paint: ((_ row: Int, _ column: Int, _ cell: String) -> String)? = nil,
        minimumWidths: [Int: Int] = [:], wrap: LastColumnWrap? = nil
    ) -> [String] {
        let columns = max(header?.count ?? 0, rows.map(\.count).max() ?? 0)
        var widths = (0..<columns).map { minimumWidths[$0] ?? 0 }
        for row in (header.map { [$0] } ?? []) + rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], TerminalText.width(cell))
            }
        }
        let lead = header == nil ? 0 : 1
        return ((header.map { [$0] } ?? []) + rows).enumerated().flatMap { index, cells -> [String] in
            var line = indent
            var start = TerminalText.width(indent)
            for (column, cell) in cells.enumerated() {
                if column > 0 {
                    line += "  "
                    start += 2
                }
                if let wrap, column == cells.count - 1, index >= lead {
                    return wrapped(line, start: start, cell, wrap: wrap, hanging: wrap.hanging(index - lead))
                }
                let width = widths[min(column, widths.count - 1)]
                let pad = String(repeating: " ", count: max(0, width - TerminalText.width(cell)))
                let shown = index >= lead ? paint?(index - lead, column, cell) ?? cell : cell
                line += rightAligned.contains(column) ? pad + shown : shown + pad
                start += width
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return [line]
        }
    }

    /// How the last column wraps: the whole line's width, and how much further in the lines
    /// after a row's first go (`→ ` advice hangs 2 cells in).
    public struct LastColumnWrap {
        public var width: Int?
        public var hanging: (_ row: Int) -> Int

        /// `width` nil leaves each sentence on one line.
        public init(width: Int?, hanging: @escaping (_ row: Int) -> Int = { _ in 0 }) {
            self.width = width
            self.hanging = hanging
        }
    }

    /// `head` then `text`, wrapped to what is left of the width, at least 20 cells; the lines
    /// after the first start under the column, `hanging` cells further in.
    private static func wrapped(
        _ head: String, start: Int, _ text: String, wrap: LastColumnWrap, hanging: Int
    ) -> [String] {
        guard let width = wrap.width else { return [head + text] }
        let under = String(repeating: " ", count: start + hanging)
        return TerminalText.wrapped(text, width: max(20, width - under.count - 1)).enumerated().map { index, line in
            (index == 0 ? head : under) + line
        }
    }
}

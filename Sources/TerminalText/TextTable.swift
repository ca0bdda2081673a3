// Aligned plain-text tables for the command line: `probe`'s attempts and rankings, `resolve`'s
// names and providers, `cache list`'s entries all print through this one function, widths in cells.
import Foundation

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
    public static func lines(
        header: [String], rows: [[String]], rightAligned: Set<Int> = [], indent: String = "",
        paint: ((_ row: Int, _ column: Int, _ cell: String) -> String)? = nil
    ) -> [String] {
        var widths = header.map(TerminalText.width)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], TerminalText.width(cell))
            }
        }
        return ([header] + rows).enumerated().map { index, cells in
            var line = indent
            for (column, cell) in cells.enumerated() {
                let width = widths[min(column, widths.count - 1)]
                let pad = String(repeating: " ", count: max(0, width - TerminalText.width(cell)))
                let shown = index > 0 ? paint?(index - 1, column, cell) ?? cell : cell
                if column > 0 { line += "  " }
                line += rightAligned.contains(column) ? pad + shown : shown + pad
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }
}

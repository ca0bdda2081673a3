// Text broken into lines that fit a width in terminal cells: the console's panels and the
// command line's table (verdicts, error sentences) wrap through this one function.
import FoundationEssentials

extension TerminalText {
    /// Breaks `text` into lines of at most `width` cells at spaces; a word longer than a line
    /// is cut. Cells are counted as the text shows once escaped (`width(_:)`).
    ///
    /// - Returns: at least one line (an empty text is one empty line); `text` whole when
    ///   `width` is too small to wrap to (4 cells or fewer).
    public static func wrapped(_ text: String, width: Int) -> [String] {
        guard width > 4 else { return [text] }
        var lines: [String] = []
        var current = ""
        var used = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            var word = String(word)
            while Self.width(word) > width {
                if !current.isEmpty {
                    lines.append(current)
                    current = ""
                    used = 0
                }
                let head = prefix(word, cells: width)
                lines.append(head)
                word = String(escaped(word).dropFirst(head.count))
            }
            let cells = Self.width(word)
            if current.isEmpty {
                current = word
                used = cells
            } else if used + 1 + cells <= width {
                current += " " + word
                used += 1 + cells
            } else {
                lines.append(current)
                current = word
                used = cells
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines.isEmpty ? [""] : lines
    }
}

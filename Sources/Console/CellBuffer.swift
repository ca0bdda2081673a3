// The frame the pure render produces: a grid of cells (character, colors, attributes).
// The ncurses screen copies it to the terminal; tests read it back as text.
import FoundationEssentials
import FoundationGaps
import TerminalText

/// The eight colors every terminal has; `.default` leaves the terminal's own color.
public enum CellColor: UInt8, Sendable, Hashable, CaseIterable {
    case `default`, black, red, green, yellow, blue, magenta, cyan, white
}

/// How one cell looks, apart from its character.
public struct CellStyle: Sendable, Hashable {
    public var foreground: CellColor
    public var background: CellColor
    public var bold: Bool
    public var reverse: Bool
    public var dim: Bool

    public init(
        foreground: CellColor = .default, background: CellColor = .default, bold: Bool = false,
        reverse: Bool = false, dim: Bool = false
    ) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.reverse = reverse
        self.dim = dim
    }

    public static let plain = CellStyle()
    public static let bold = CellStyle(bold: true)
    public static let dim = CellStyle(dim: true)
    public static let reverse = CellStyle(reverse: true)
    public static func fg(_ color: CellColor, bold: Bool = false) -> CellStyle {
        CellStyle(foreground: color, bold: bold)
    }
}

/// One character position of the terminal.
public struct Cell: Sendable, Hashable {
    public var character: Unicode.Scalar
    public var style: CellStyle

    public init(_ character: Unicode.Scalar = " ", style: CellStyle = .plain) {
        self.character = character
        self.style = style
    }
}

/// The size of the terminal in cells.
public struct TerminalSize: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// A frame: `height` rows of `width` cells, written by the views and read by the screen.
public struct CellBuffer: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: Cell(), count: self.width * self.height)
    }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// The character of the cell under the right half of a wide character: the screen skips
    /// it and `line(_:)` leaves it out. `put` never stores it otherwise (NUL is escaped).
    public static let continuation: Unicode.Scalar = "\u{0}"

    /// Writes `text` from (x, y), clipped at `limit` columns (default: the right edge).
    ///
    /// Text from outside goes through `TerminalText`: controls, bidi and zero-width characters
    /// show as escapes (`\x1b`, `\u202e`), a wide character takes two cells (the second a
    /// `continuation`), so the grid never shifts.
    ///
    /// - Returns: the column after the last character written.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, style: CellStyle = .plain, limit: Int? = nil) -> Int {
        guard y >= 0, y < height, x < width else { return x }
        let end = min(width, limit.map { x + $0 } ?? width)
        var column = x
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            for byte in text.utf8 {
                if column >= end { break }
                if column >= 0 { set(column, y, Cell(Unicode.Scalar(byte), style: style)) }
                column += 1
            }
            return column
        }
        for character in TerminalText.escaped(text) {
            let cells = TerminalText.width(of: character)
            guard cells > 0 else { continue }
            if column + cells > end { break }
            if cells == 2 {
                if column >= 0 { set(column, y, Cell(Self.scalar(character), style: style)) }
                if column + 1 >= 0 {
                    set(column + 1, y, Cell(column >= 0 ? Self.continuation : " ", style: style))
                }
            } else if column >= 0 {
                set(column, y, Cell(Self.scalar(character), style: style))
            }
            column += cells
        }
        return column
    }

    /// One scalar for a grapheme of escaped text: itself, its composed form, or its base
    /// character (a cell holds one scalar; marks past composition are not shown).
    private static func scalar(_ character: Character) -> Unicode.Scalar {
        let scalars = character.unicodeScalars
        if scalars.count == 1, let only = scalars.first { return only }
        let composed = String(character).canonicallyComposed.unicodeScalars
        return (composed.count == 1 ? composed.first : scalars.first) ?? "?"
    }

    /// Stores a cell without leaving half of a wide character behind: writing over either
    /// half of one blanks the other half.
    private mutating func set(_ column: Int, _ y: Int, _ cell: Cell) {
        let index = y * width + column
        if cells[index].character == Self.continuation, column > 0, cell.character != Self.continuation {
            cells[index - 1].character = " "
        }
        if column + 1 < width, cells[index + 1].character == Self.continuation {
            cells[index + 1].character = " "
        }
        cells[index] = cell
    }

    /// Paints `count` cells of row `y` from `x` with `character` in `style`.
    public mutating func fill(x: Int, y: Int, count: Int, character: Unicode.Scalar = " ", style: CellStyle = .plain) {
        guard y >= 0, y < height else { return }
        let start = max(0, x)
        let end = min(width, x + count)
        guard start < end else { return }
        for column in start..<end { cells[y * width + column] = Cell(character, style: style) }
    }

    /// Sets the style of `count` cells of row `y` from `x`, keeping their characters.
    public mutating func restyle(x: Int, y: Int, count: Int, style: CellStyle) {
        guard y >= 0, y < height else { return }
        let start = max(0, x)
        let end = min(width, x + count)
        guard start < end else { return }
        for column in start..<end { cells[y * width + column].style = style }
    }

    /// Row `y` as plain text, trailing spaces kept (snapshots show the full width).
    public func line(_ y: Int) -> String {
        var text = String.UnicodeScalarView()
        for column in 0..<width where cells[y * width + column].character != Self.continuation {
            text.append(cells[y * width + column].character)
        }
        return String(text)
    }

    /// The whole frame as text, one line per row, trailing spaces trimmed.
    public var text: String {
        (0..<height).map { y in
            var line = self.line(y)
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    /// Whether row `y` differs between two frames of the same width.
    public func rowDiffers(from other: CellBuffer, row y: Int) -> Bool {
        guard other.width == width, other.height == height else { return true }
        let start = y * width
        for index in start..<(start + width) where cells[index] != other.cells[index] { return true }
        return false
    }
}

extension CellBuffer {
    /// Draws one row of a list table: each cell in its column (one space between columns),
    /// the whole line in reverse video when it is the selected row.
    mutating func putRow(_ cells: [(String, CellStyle)], widths: [Int], y: Int, selected: Bool) {
        if selected { fill(x: 0, y: y, count: width, style: .reverse) }
        var x = 1
        for (index, cell) in cells.enumerated() {
            var style = cell.1
            if selected { style.reverse = true }
            put(cell.0, x: x, y: y, style: style, limit: widths[index])
            x += widths[index] + 1
        }
    }
}

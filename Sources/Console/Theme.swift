// Light and dark themes: the views draw in the eight basic colours; a theme maps them to ones
// that read on the terminal's background. Meaning is always in the text too, never colour alone.
import ConfigurationSources
import FoundationEssentials
import NameResolution

/// The colours the console draws with, for a dark or a light terminal background.
public enum ConsoleTheme: String, Sendable, CaseIterable {
    /// Colours as the views choose them: yellow, cyan and green read well on black.
    case dark
    /// Yellow, cyan and white fade on white: they become magenta, blue and black.
    case light

    /// The theme for a `theme` setting: `auto` (or none) reads `COLORFGBG` ("15;0": light text
    /// on a dark background) when the terminal sets it, and is dark otherwise.
    public static func resolve(_ choice: ThemeChoice?, environment: [String: String]) -> ConsoleTheme {
        switch choice ?? .auto {
        case .light: return .light
        case .dark: return .dark
        case .auto:
            return environment["COLORFGBG"].flatMap(fromColorFGBG) ?? .dark
        }
    }

    /// The theme `COLORFGBG` implies: its last field is the background's colour number; 0-6
    /// and 8 are dark, 7 and 9-15 light (as rxvt, Konsole and vim read it). Nil when unreadable.
    static func fromColorFGBG(_ value: String) -> ConsoleTheme? {
        guard let last = value.split(separator: ";").last, let background = Int(last), (0...15).contains(background)
        else { return nil }
        return (0...6).contains(background) || background == 8 ? .dark : .light
    }

    /// The colour a view's colour is drawn in under this theme.
    public func color(_ color: CellColor) -> CellColor {
        guard self == .light else { return color }
        switch color {
        case .yellow: return .magenta
        case .cyan: return .blue
        case .white: return .black
        default: return color
        }
    }
}

extension CellBuffer {
    /// Maps every cell's colours through `theme` (a dark theme leaves the frame as drawn).
    mutating func apply(_ theme: ConsoleTheme) {
        guard theme != .dark else { return }
        for y in 0..<height {
            for x in 0..<width {
                var cell = self[x, y]
                guard cell.style.foreground != .default || cell.style.background != .default else { continue }
                cell.style.foreground = theme.color(cell.style.foreground)
                cell.style.background = theme.color(cell.style.background)
                self[x, y] = cell
            }
        }
    }

    /// The colours and attributes of the frame as text, one line per row that has any: runs of
    /// cells in one style, "3: 1-8 cyan bold", for snapshots that check what colour says.
    public var styleText: String {
        var lines: [String] = []
        for y in 0..<height {
            var runs: [String] = []
            var x = 0
            while x < width {
                let style = self[x, y].style
                var end = x
                while end + 1 < width && self[end + 1, y].style == style { end += 1 }
                if style != .plain {
                    var words: [String] = []
                    if style.foreground != .default { words.append("\(style.foreground)") }
                    if style.background != .default { words.append("on-\(style.background)") }
                    if style.bold { words.append("bold") }
                    if style.dim { words.append("dim") }
                    if style.reverse { words.append("reverse") }
                    runs.append("\(x)-\(end) " + words.joined(separator: " "))
                }
                x = end + 1
            }
            if !runs.isEmpty { lines.append("\(y): " + runs.joined(separator: ", ")) }
        }
        return lines.joined(separator: "\n")
    }
}

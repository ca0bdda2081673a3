// The few non-ASCII characters the views draw, with ASCII stand-ins for terminals whose
// locale is not UTF-8 (chosen once at start from nl_langinfo(CODESET)).
import FoundationEssentials

/// The line, bar and marker characters of one character set.
public struct Glyphs: Sendable, Equatable {
    public var horizontal: Unicode.Scalar
    public var vertical: Unicode.Scalar
    public var barFull: Unicode.Scalar
    public var barEmpty: Unicode.Scalar
    public var ascending: Unicode.Scalar
    public var descending: Unicode.Scalar
    public var ellipsis: Unicode.Scalar
    public var separator: String
    public var arrow: String
    public var selected: Unicode.Scalar

    /// Box drawing and block elements, for UTF-8 terminals.
    public static let unicode = Glyphs(
        horizontal: "\u{2500}", vertical: "\u{2502}", barFull: "\u{2588}", barEmpty: "\u{2591}",
        ascending: "\u{25B2}", descending: "\u{25BC}", ellipsis: "\u{2026}", separator: " \u{00B7} ",
        arrow: " \u{2192} ", selected: "\u{25B6}")

    /// Plain ASCII, for any other locale.
    public static let ascii = Glyphs(
        horizontal: "-", vertical: "|", barFull: "#", barEmpty: ".", ascending: "^", descending: "v",
        ellipsis: "~", separator: " | ", arrow: " -> ", selected: ">")

    /// Picks the set for a locale's codeset name ("UTF-8", "ANSI_X3.4-1968", ...).
    public static func forCodeset(_ codeset: String) -> Glyphs {
        let normalized = codeset.uppercased().replacing("-", with: "")
        return normalized == "UTF8" ? .unicode : .ascii
    }

    /// Cuts `text` to `width` columns, marking the cut with an ellipsis.
    public func clip(_ text: String, _ width: Int) -> String {
        guard width > 0 else { return "" }
        let scalars = text.unicodeScalars
        if scalars.count <= width { return text }
        var view = String.UnicodeScalarView(scalars.prefix(width - 1))
        view.append(ellipsis)
        return String(view)
    }
}

extension String {
    /// Pads with spaces (or cuts) to exactly `width` columns.
    func padded(_ width: Int) -> String {
        let count = unicodeScalars.count
        if count >= width { return String(String.UnicodeScalarView(unicodeScalars.prefix(width))) }
        return self + String(repeating: " ", count: width - count)
    }

    /// Pads on the left with spaces to `width` columns.
    func leftPadded(_ width: Int) -> String {
        let count = unicodeScalars.count
        if count >= width { return self }
        return String(repeating: " ", count: width - count) + self
    }
}

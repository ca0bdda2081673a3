// The one sanitizer for text from outside: controls, bidi and other format characters become visible
// escapes, widths are per grapheme. A service's words (codes, messages, headers, reason phrases) are
// escaped where they enter, so every output holds them escaped; bodies only on their way to a screen.

/// Makes untrusted text safe to show in a terminal and measures it in cells.
///
/// Every C0 control, DEL, C1 control, format character (Unicode `Cf`: bidi overrides and
/// isolates, zero-width spaces and joiners, the BOM, tags), line and paragraph separator,
/// unassigned code point and combining mark without a base is replaced by an ASCII escape
/// (`\x1b`, `\u202e`), so nothing moves the cursor, changes the terminal's state, reorders or
/// hides text. What remains is measured per grapheme: wide (East Asian wide and fullwidth,
/// emoji presentation) take two cells, everything else one.
public enum TerminalText {
    /// The most combining marks kept on one base character; the rest are escaped, so a
    /// "zalgo" string cannot paint over the lines above and below it.
    public static let maximumMarksPerCharacter = 4

    /// The text with everything a terminal would act on, or not show, replaced by an escape.
    ///
    /// - Parameter text: text from outside, on one line (a newline becomes `\n`).
    /// - Returns: text made of printable graphemes only.
    public static func escaped(_ text: String) -> String {
        if isPlainASCII(text.utf8) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text { append(character, to: &out) }
        return out
    }

    /// Bytes from outside shown as text: valid UTF-8 as `escaped(_:)` does, every byte that is
    /// not part of valid UTF-8 as `\xNN`.
    ///
    /// - Parameter bytes: raw bytes (a header line, a provider's answer).
    /// - Returns: text made of printable graphemes only.
    public static func escaped(bytes: some Collection<UInt8>) -> String {
        var out = ""
        var pending = String.UnicodeScalarView()
        func flush() {
            guard !pending.isEmpty else { return }
            out += escaped(String(pending))
            pending = String.UnicodeScalarView()
        }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var consumed = bytes.startIndex
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                pending.append(Unicode.UTF8.decode(encoded))
                consumed = bytes.index(consumed, offsetBy: encoded.count)
            case .error(let length):
                flush()
                for _ in 0..<length {
                    out += hexEscape(bytes[consumed])
                    consumed = bytes.index(after: consumed)
                }
            case .emptyInput:
                flush()
                return out
            }
        }
    }

    /// Text of several lines (an error sentence with a usage line under it): each line
    /// escaped, the line breaks kept.
    public static func escapedLines(_ text: String) -> String {
        if isPlainASCII(text.utf8, allowingNewlines: true) { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }
            .joined(separator: "\n")
    }

    /// Text from outside as it is kept, cleaned where it enters (a service's code or message,
    /// `extra`, a header, a reason phrase, a certificate's name): escaped as `escaped(_:)` does and
    /// cut after `limit` Unicode scalars, "..." marking the cut.
    ///
    /// An escape is printable ASCII, so escaping again changes nothing: text cleaned here reaches
    /// every output (table, JSON, the console's cells, logs) as it was kept.
    ///
    /// - Parameters:
    ///   - text: text from outside.
    ///   - limit: the most scalars of `text` kept (each may become an escape of several characters).
    /// - Returns: text made of printable graphemes only.
    public static func escaped(_ text: String, cutAt limit: Int) -> String {
        let kept = text.unicodeScalars.prefix(max(0, limit) + 1)
        guard kept.count > limit else { return escaped(text) }
        return escaped(String(String.UnicodeScalarView(kept.dropLast()))) + "..."
    }

    /// Outside text inside a sentence: escaped, cut after `limit` scalars, in single quotes.
    ///
    /// - Parameters:
    ///   - text: text from outside (a rejected address, a code, a media type).
    ///   - limit: the most scalars of `text` shown.
    public static func quoted(_ text: String, cutAt limit: Int = 60) -> String {
        "'" + escaped(text, cutAt: limit) + "'"
    }

    /// Outside bytes inside a sentence (the start of a body): `escaped(bytes:)` of the first
    /// `limit` bytes, in single quotes, "..." marking a cut.
    public static func quoted(bytes: some Collection<UInt8>, cutAt limit: Int = 40) -> String {
        "'" + escaped(bytes: bytes.prefix(max(0, limit))) + (bytes.count > limit ? "..." : "") + "'"
    }

    /// How many cells the text takes once escaped.
    public static func width(_ text: String) -> Int {
        if isPlainASCII(text.utf8) { return text.utf8.count }
        return escaped(text).reduce(0) { $0 + width(of: $1) }
    }

    /// The text escaped and cut to at most `limit` cells (a wide character that would straddle
    /// the limit is left out).
    public static func prefix(_ text: String, cells limit: Int) -> String {
        let safe = escaped(text)
        if isPlainASCII(safe.utf8) { return String(safe.prefix(max(0, limit))) }
        var out = ""
        var used = 0
        for character in safe {
            let cells = width(of: character)
            if used + cells > limit { break }
            out.append(character)
            used += cells
        }
        return out
    }

    /// The text escaped and padded with spaces to `cells` (longer text is left as it is).
    public static func padded(_ text: String, to cells: Int) -> String {
        let safe = escaped(text)
        let used = width(safe)
        return used >= cells ? safe : safe + String(repeating: " ", count: cells - used)
    }

    /// The cells one grapheme of escaped text takes: 2 for wide, 0 for a lone zero-width
    /// character, else 1.
    public static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x7F { return first.value >= 0x20 ? 1 : 0 }
        if isZeroWidth(first) { return 0 }
        if isWide(first) { return 2 }
        // A text-default emoji followed by VS16 is shown as an emoji, two cells wide.
        if first.properties.isEmoji && scalars.contains("\u{FE0F}") { return 2 }
        return 1
    }

    /// Whether the scalar would be acted on or hidden by a terminal, and so must be escaped.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || value == 0x7F { return true }
        if value < 0x7F { return false }
        if value < 0xA0 { return true }  // C1
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate: return true
        default: return false
        }
    }

    // MARK: Internals

    private static func isPlainASCII(_ bytes: String.UTF8View, allowingNewlines: Bool = false) -> Bool {
        for byte in bytes where byte < 0x20 || byte >= 0x7F {
            if allowingNewlines && byte == 0x0A { continue }
            return false
        }
        return true
    }

    private static func append(_ character: Character, to out: inout String) {
        let scalars = character.unicodeScalars
        // The common case: one printable scalar.
        if scalars.count == 1, let only = scalars.first {
            if needsEscape(only) || isMark(only) { out += escape(only) } else { out.unicodeScalars.append(only) }
            return
        }
        var kept = String.UnicodeScalarView()
        var marks = 0
        var hasBase = false
        func flushKept() {
            if !kept.isEmpty { out.unicodeScalars.append(contentsOf: kept) }
            kept = String.UnicodeScalarView()
        }
        for scalar in scalars {
            if needsEscape(scalar) {
                flushKept()
                out += escape(scalar)
                // What follows an escape no longer has a base in the output.
                hasBase = false
            } else if isMark(scalar) {
                marks += 1
                if hasBase && marks <= maximumMarksPerCharacter {
                    kept.append(scalar)
                } else {
                    flushKept()
                    out += escape(scalar)
                }
            } else {
                marks = 0
                hasBase = true
                kept.append(scalar)
            }
        }
        flushKept()
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.value >= 0x300 else { return false }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return true
        default: return false
        }
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x09: return "\\t"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0..<0x80: return hexEscape(UInt8(scalar.value))
        default:
            let hex = String(scalar.value, radix: 16)
            return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }

    private static func hexEscape(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16)
        return "\\x" + (hex.count == 1 ? "0" + hex : hex)
    }

    private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return true
        default: return false
        }
    }

    /// East Asian Wide and Fullwidth (Unicode 15 EastAsianWidth.txt, the large blocks) and
    /// emoji shown as emoji by default.
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x1100 { return false }
        for range in wideRanges where range.contains(v) { return true }
        return scalar.properties.isEmojiPresentation
    }

    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
        0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
        0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
        0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF,
        0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]
}

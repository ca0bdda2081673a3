// Refuses, with a sentence, the configuration-file shapes that make the TOML library abort the
// process (found by `make fuzz`), before the text reaches it: a user's file must never crash ipdirect.
import FoundationEssentials

/// Checks a configuration file's text for what TOMLKit's parser (toml++) cannot survive.
///
/// toml++ asserts (and, built without assertions, reads on undefined) when a table header's
/// `[` or `[[` is followed by anything but a key: `[=`, `[#`, `[` at the end of a line, a
/// control character. And TOMLKit hands the text over as a C string, so a NUL byte would cut
/// the file short without a word. Both are errors in TOML anyway, so refusing them here loses
/// no valid file: TOML 1.0 allows no control character but tab, LF and CR (before LF) anywhere,
/// comments included. A line inside a multi-line string that starts with such a `[` is refused
/// too (none of ipdirect's settings is a multi-line string).
enum TOMLPreflight {
    /// The first problem in `text`, as a sentence with its line and what to change; nil when
    /// the text is safe to hand to the parser.
    static func problem(in text: String) -> String? {
        var lineNumber = 0
        for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            var column = 0
            for byte in line {
                column += 1
                let allowed =
                    byte == UInt8(ascii: "\t") || (byte == UInt8(ascii: "\r") && column == line.count)
                if (byte < 0x20 || byte == 0x7F) && !allowed {
                    let shown = byte == 0 ? "a NUL byte" : "the control character \\x" + hex(byte)
                    return
                        "line \(lineNumber), byte \(column) is \(shown), which TOML does not allow; remove it (inside a quoted string, write it as \\u00\(hex(byte)))"
                }
            }
            if let column = badTableHeader(Array(line), firstLine: lineNumber == 1) {
                return
                    "line \(lineNumber), column \(column): a table header '[' must be followed by a name (letters, digits, '_' or '-', or a quoted name) and ']'"
            }
        }
        if let line = braceAfterOpener(Array(text.utf8)) {
            return
                "line \(line): a '}' right after '[' or ',' closes nothing TOML allows; end the array with ']' or remove the ','"
        }
        return nil
    }

    /// The line of a `}` whose previous character outside strings and comments (blanks and
    /// newlines skipped) is `[` or `,`: toml++ asserts on it inside an array (`a=[}`, found by
    /// `make fuzz`), and no valid TOML has it.
    private static func braceAfterOpener(_ bytes: [UInt8]) -> Int? {
        let newline = UInt8(ascii: "\n")
        var line = 1
        var index = 0
        var last: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case newline:
                line += 1
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != newline { index += 1 }
                continue
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                let triple = index + 2 < bytes.count && bytes[index + 1] == byte && bytes[index + 2] == byte
                index += triple ? 3 : 1
                while index < bytes.count {
                    let inner = bytes[index]
                    if inner == UInt8(ascii: "\\") && byte == UInt8(ascii: "\"") {
                        index += 2
                        continue
                    }
                    if inner == newline {
                        if !triple { break }  // the outer loop counts it
                        line += 1
                    }
                    if inner == byte
                        && (!triple
                            || (index + 2 < bytes.count && bytes[index + 1] == byte && bytes[index + 2] == byte))
                    {
                        index += triple ? 3 : 1
                        break
                    }
                    index += 1
                }
                last = byte
                continue
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                break
            case UInt8(ascii: "}") where last == UInt8(ascii: "[") || last == UInt8(ascii: ","):
                return line
            default:
                last = byte
            }
            index += 1
        }
        return nil
    }

    /// The column of the character after a statement-opening `[` (or `[[`) that is not where a
    /// key can start, or nil.
    private static func badTableHeader(_ line: [UInt8], firstLine: Bool) -> Int? {
        var index = 0
        // A UTF-8 byte order mark may open the file; toml++ skips it.
        if firstLine, line.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        func skipBlanks() {
            while index < line.count, line[index] == UInt8(ascii: " ") || line[index] == UInt8(ascii: "\t") {
                index += 1
            }
        }
        skipBlanks()
        guard index < line.count, line[index] == UInt8(ascii: "[") else { return nil }
        index += 1
        skipBlanks()
        if index < line.count, line[index] == UInt8(ascii: "[") {
            index += 1
            skipBlanks()
        }
        // The end of the whole text after `[` is a parse error toml++ reports; the end of a line is not.
        guard index < line.count else { return line.count + 1 }
        let byte = line[index]
        let keyStart =
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "\"")
            || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "]")
        return keyStart ? nil : index + 1
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}

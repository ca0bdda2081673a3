// One line of a `--input` list: a URL, then optional `key=value` words that set that URL's own
// scenarios, method and headers (`scenario=direct-sni method=HEAD header="X-A: b"`); one header parser.
import CurlTransport
import FoundationEssentials
import FoundationGaps

/// The methods a probe may send; accepted in any case (`head` is HEAD).
public enum RequestMethod: String, Sendable, Codable, CaseIterable, Hashable {
    case get = "GET"
    case head = "HEAD"
    case post = "POST"

    /// - Parameter text: the method in any case.
    public init?(anyCase text: String) {
        self.init(rawValue: text.uppercased())
    }
}

/// A setting of one target that cannot be used, in words.
public struct TargetSettingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and what to write instead.
    public let reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

extension HeaderField {
    /// Parses `Name: value` (the form of `--header` and of a list's `header=` word).
    ///
    /// - Throws: `TargetSettingError` when there is no name before a colon.
    public init(parsing line: String) throws(TargetSettingError) {
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
            !line[..<colon].trimmingWhitespace().isEmpty
        else {
            throw TargetSettingError("a header is 'Name: value', not \(InputQuote.quoted(line))")
        }
        self.init(
            name: String(line[..<colon]).trimmingWhitespace(),
            value: line[line.index(after: colon)...].trimmingWhitespace())
    }
}

/// What one target sets for itself over the command line's options.
public struct TargetSettings: Sendable, Hashable {
    /// The scenarios to try; nil keeps the command line's.
    public var scenarios: [Scenario]?
    /// The method; nil keeps the command line's.
    public var method: RequestMethod?
    /// Headers added to the command line's; one of the same name replaces the command line's.
    public var headers: [HeaderField]

    public init(scenarios: [Scenario]? = nil, method: RequestMethod? = nil, headers: [HeaderField] = []) {
        self.scenarios = scenarios
        self.method = method
        self.headers = headers
    }

    /// Whether the target sets nothing of its own.
    public var isEmpty: Bool { scenarios == nil && method == nil && headers.isEmpty }

    /// `base` with these settings over it.
    public func applied(to base: ProbeOptions) -> ProbeOptions {
        var options = base
        if let scenarios { options.scenarios = scenarios }
        if let method { options.method = method }
        if !headers.isEmpty {
            let names = Set(headers.map { $0.name.lowercased() })
            options.headers = base.headers.filter { !names.contains($0.name.lowercased()) } + headers
        }
        return options
    }

    /// Parses a comma-separated scenario list (`direct-sni,direct-https`), the form of the
    /// list's `scenario=` word and of the configuration's `scenarios` entries.
    ///
    /// - Throws: `TargetSettingError` naming a scenario not in the set.
    public static func scenario(_ text: String) throws(TargetSettingError) -> [Scenario] {
        var found: [Scenario] = []
        for name in text.split(separator: ",").map({ $0.trimmingWhitespace() }) where !name.isEmpty {
            guard let scenario = Scenario(rawValue: name) else {
                throw TargetSettingError(
                    "\(InputQuote.quoted(name)) is not a scenario; use \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            if !found.contains(scenario) { found.append(scenario) }
        }
        guard !found.isEmpty else { throw TargetSettingError("scenario= names at least one scenario") }
        return found
    }

    /// Parses a method name.
    ///
    /// - Throws: `TargetSettingError` for a method not in the set.
    public static func method(_ text: String) throws(TargetSettingError) -> RequestMethod {
        guard let method = RequestMethod(anyCase: text) else {
            throw TargetSettingError(
                "\(InputQuote.quoted(text)) is not a method; use \(RequestMethod.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        return method
    }
}

/// Input as an error sentence quotes it: in single quotes, and past `limit` bytes cut with its
/// length said, so a line of megabytes is not echoed whole (a 50 MB URL line once took 9 s and
/// 262 MB of stderr to be called bad). Every error that quotes a list line or a URL uses it.
public enum InputQuote {
    /// The most bytes of input an error quotes.
    public static let limit = 200

    /// `'text'`, or `'first 200 bytes…' (N bytes)` for longer text; the cut never splits a character's bytes.
    public static func quoted(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count > limit else { return "'\(text)'" }
        var end = utf8.index(utf8.startIndex, offsetBy: limit)
        // Back to the start of the scalar the cut falls in (continuation bytes are 10xxxxxx).
        while end > utf8.startIndex && utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return "'\(String(decoding: utf8[..<end], as: UTF8.self))…' (\(utf8.count) bytes)"
    }
}

/// A list entry: the URL and what it sets for itself.
public struct TargetLine: Sendable, Hashable {
    /// The URL as written.
    public var url: String
    public var settings: TargetSettings

    public init(url: String, settings: TargetSettings = TargetSettings()) {
        self.url = url
        self.settings = settings
    }

    /// The words that may follow the URL.
    public static let keys = ["scenario", "method", "header"]

    /// The entries of a list (`probe --input`, the agent's targets): one a line, with its line
    /// number (from 1); blank lines and comments left out.
    public static func entries(_ text: String) -> [(line: Int, text: String)] {
        var found: [(Int, String)] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let entry = withoutComment(line).trimmingWhitespaceAndNewlines()
            if !entry.isEmpty { found.append((index + 1, entry)) }
        }
        return found
    }

    /// A line up to the `#` that starts its comment: one outside quotes, so a quoted header
    /// value may hold a `#` (`header="X-Tag: a#b"`). Quotes read as `parse` reads them.
    static func withoutComment(_ line: Substring) -> Substring {
        // Most lines have no '#': found on bytes, since a line may be megabytes long and reading
        // one a Character at a time took most of a minute for a 50 MB line.
        guard line.utf8.contains(UInt8(ascii: "#")) else { return line }
        var quoting = Quoting()
        for index in line.indices where quoting.read(line[index]) == .plain && line[index] == "#" {
            return line[..<index]
        }
        return line
    }

    /// Parses one entry (comments already cut): the URL, then `key=value` words. A value with
    /// spaces is quoted (`header="X-A: b"`, or with single quotes); `scenario=` takes a
    /// comma-separated list and may be repeated, as may `header=`.
    ///
    /// - Throws: `TargetSettingError` for an unknown key, a bad value or an unclosed quote.
    public static func parse(_ text: String) throws(TargetSettingError) -> TargetLine {
        let words = try split(text)
        guard let url = words.first else { throw TargetSettingError("the line is empty") }
        var line = TargetLine(url: url)
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                throw TargetSettingError(
                    "\(InputQuote.quoted(word)) after the URL is not a setting; write key=value with a key of \(keys.joined(separator: ", "))"
                )
            }
            let key = String(word[..<equals])
            let value = String(word[word.index(after: equals)...])
            switch key {
            case "scenario", "scenarios":
                let more = try TargetSettings.scenario(value)
                line.settings.scenarios =
                    (line.settings.scenarios ?? [])
                    + more.filter {
                        !(line.settings.scenarios ?? []).contains($0)
                    }
            case "method":
                line.settings.method = try TargetSettings.method(value)
            case "header":
                line.settings.headers.append(try HeaderField(parsing: value))
            default:
                throw TargetSettingError(
                    "\(InputQuote.quoted(key)) is not a setting; use \(keys.joined(separator: ", "))")
            }
        }
        return line
    }

    /// Splits at spaces outside quotes; quotes group and are removed, `\` escapes in double quotes.
    private static func split(_ text: String) throws(TargetSettingError) -> [String] {
        // A line of one plain word (a URL with no settings: most lines) is that word, found on
        // bytes for the same reason: printable ASCII with no quote holds no space to split at.
        let plain = text.utf8.allSatisfy {
            $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "'")
        }
        if plain { return text.isEmpty ? [] : [text] }
        var words: [String] = []
        var current = ""
        var inWord = false
        var quoting = Quoting()
        for character in text {
            switch quoting.read(character) {
            case .mark:
                inWord = true  // an opening quote starts a word, even an empty one
            case .quoted:
                current.append(character)
            case .plain where character.isWhitespace:
                if inWord { words.append(current) }
                current = ""
                inWord = false
            case .plain:
                current.append(character)
                inWord = true
            }
        }
        if let quote = quoting.unclosed {
            throw TargetSettingError("a value opened with \(quote) is not closed; add the closing \(quote)")
        }
        if inWord { words.append(current) }
        return words
    }

    /// How a list line quotes, read one character at a time: `"..."` with `\` escapes, or
    /// `'...'` as written. One reader for splitting words and for finding a comment.
    struct Quoting {
        /// What a character is to the line.
        enum Reading { case mark, quoted, plain }

        private var open: Character?
        private var escaped = false

        /// The quote still open at the end of a line, if one is.
        var unclosed: Character? { open }

        /// A quote or escape mark (dropped from the word), a character inside quotes, or one outside.
        mutating func read(_ character: Character) -> Reading {
            if escaped {
                escaped = false
                return .quoted
            }
            if let quote = open {
                if character == quote {
                    open = nil
                    return .mark
                }
                if character == "\\" && quote == "\"" {
                    escaped = true
                    return .mark
                }
                return .quoted
            }
            if character == "\"" || character == "'" {
                open = character
                return .mark
            }
            return .plain
        }
    }
}

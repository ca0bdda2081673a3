// Keeps secrets out of traces and exports: cookies, passwords in URLs, and the values of headers and
// query parameters whose names hold a secret word or one `redact` adds. `--no-redact` turns it off.
import CurlTransport
import FoundationEssentials
import FoundationGaps

/// Which names are secret: a header, query parameter or cookie whose name holds one of the
/// built-in words or one the configuration adds (`redact = [...]`), in any case.
///
/// Broad on purpose (`X-Session`, `access_key`, `sessionid`, `X-Upstream-Sig`): hiding a harmless
/// value costs a trace a detail, showing a credential costs the credential.
public struct RedactionNames: Sendable, Equatable {
    /// The words every run hides.
    public static let words = ["token", "secret", "key", "session", "password", "passwd", "auth", "sig"]
    /// The built-in words alone.
    public static let builtIn = RedactionNames()

    /// The words added to the built-in ones, lowercased.
    public let added: [String]
    /// Every word as bytes: the search runs for every header of every hop.
    private let wordBytes: [[UInt8]]

    /// The built-in words and `added` (empty ones ignored).
    public init(adding added: [String] = []) {
        let extra = added.map { $0.lowercased() }.filter { !$0.isEmpty && !Self.words.contains($0) }
        self.added = extra
        wordBytes = (Self.words + extra).map { Array($0.utf8) }
    }

    /// Whether an ASCII-lowercased name holds a secret word.
    func matches(lowercased name: [UInt8]) -> Bool {
        for word in wordBytes where word.count <= name.count {
            for start in 0...(name.count - word.count) {
                var match = true
                for offset in 0..<word.count where name[start + offset] != word[offset] {
                    match = false
                    break
                }
                if match { return true }
            }
        }
        return false
    }

    public static func == (lhs: RedactionNames, rhs: RedactionNames) -> Bool { lhs.added == rhs.added }
}

/// Replaces secret values with a marker, keeping names so a trace still shows what was sent.
public enum Redaction {
    public static let marker = "[redacted]"

    /// Cookies are secret whatever their names; every other header by `RedactionNames`.
    private static let secretHeaders = ["cookie", "set-cookie"].map { Array($0.utf8) }

    /// Whether a header's value should be hidden.
    public static func isSecretHeader(_ name: String, _ names: RedactionNames = .builtIn) -> Bool {
        isSecretHeader(lowercased: asciiLowercased(name.utf8), names)
    }

    private static func isSecretHeader(lowercased lower: [UInt8], _ names: RedactionNames) -> Bool {
        secretHeaders.contains(lower) || names.matches(lowercased: lower)
    }

    /// Whether a query parameter's value should be hidden: Alibaba's signature `s`, and every
    /// name `RedactionNames` calls secret.
    public static func isSecretParameter(_ name: String, _ names: RedactionNames = .builtIn) -> Bool {
        let lower = asciiLowercased(name.utf8)
        return lower == [UInt8(ascii: "s")] || names.matches(lowercased: lower)
    }

    private static func asciiLowercased(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
    }

    /// The name of a `Name: value` line when that header is secret (as `HeaderField(line:)`
    /// reads names), found on bytes: every line of every hop's log passes through here.
    private static func secretHeaderName(inLine text: String, _ names: RedactionNames) -> String? {
        let utf8 = text.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")), colon != utf8.startIndex else { return nil }
        let name = utf8[..<colon]
        guard !name.contains(UInt8(ascii: " ")), isSecretHeader(lowercased: asciiLowercased(name), names)
        else { return nil }
        return String(text[..<colon])
    }

    /// Header fields with the values of secret ones replaced by the marker.
    public static func headers(_ fields: [HeaderField], _ names: RedactionNames = .builtIn) -> [HeaderField] {
        fields.map { isSecretHeader($0.name, names) ? HeaderField(name: $0.name, value: marker) : $0 }
    }

    /// A URL with the password of its user information (`user:pass@`) and the values of
    /// secret query parameters hidden; scheme, user name, host and path untouched.
    public static func url(_ text: String, _ names: RedactionNames = .builtIn) -> String {
        let text = withoutPassword(text)
        guard let question = text.firstIndex(of: "?") else { return text }
        let fragmentStart = text[question...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: question)..<fragmentStart]
        let pairs = QueryString.pairs(query).map { pair -> String in
            guard pair.value != nil, isSecretParameter(String(pair.name), names) else {
                return pair.value.map { "\(pair.name)=\($0)" } ?? String(pair.name)
            }
            return "\(pair.name)=\(marker)"
        }
        return String(text[...question]) + pairs.joined(separator: "&") + String(text[fragmentStart...])
    }

    /// Where the password of a URL's user information lies (`https://user:pass@host/`), if any.
    private static func passwordRange(_ text: String) -> Range<String.Index>? {
        guard let schemeEnd = ProbeURL.schemeSeparator(in: text) else { return nil }
        let authority = text[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
            return nil
        }
        return text.index(after: colon)..<at
    }

    private static func withoutPassword(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "@")), let range = passwordRange(text) else { return text }
        var hidden = text
        hidden.replaceSubrange(range, with: marker)
        return hidden
    }

    /// The password written in a URL's user information, as written and decoded.
    static func password(in text: String) -> [String] {
        guard let range = passwordRange(text), !range.isEmpty else { return [] }
        let written = String(text[range])
        let decoded = written.percentDecoded ?? written
        return decoded == written ? [written] : [written, decoded]
    }

    /// One line of curl's log with a secret header value or query value hidden.
    public static func logLine(_ line: CurlLogLine, _ names: RedactionNames = .builtIn) -> CurlLogLine {
        var copy = line
        if line.kind != .info, let name = secretHeaderName(inLine: line.text, names) {
            copy.text = "\(name): \(marker)"
        } else if line.text.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "@") }) {
            copy.text = line.text.split(separator: " ", omittingEmptySubsequences: false)
                .map { word in
                    word.utf8.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "@") }
                        ? url(String(word), names) : String(word)
                }
                .joined(separator: " ")
        }
        return copy
    }

    /// A hop with secrets hidden: by name (headers, query parameters, `Location`), and every
    /// occurrence of a known secret value anywhere, since a server may echo one back.
    ///
    /// - Parameters:
    ///   - hop: the hop as recorded.
    ///   - secrets: values known to be secret (from the request the user asked for).
    ///   - names: which names are secret.
    public static func hop(_ hop: Hop, secrets: [String] = [], names: RedactionNames = .builtIn) -> Hop {
        var copy = hop
        let secrets = secrets.filter { $0.count >= 3 && $0 != marker }
        func scrub(_ text: String) -> String {
            secrets.isEmpty ? text : secrets.reduce(text) { $0.replacing($1, with: marker) }
        }
        copy.url = scrub(url(hop.url, names))
        copy.originalURL = scrub(url(hop.originalURL, names))
        copy.requestHeaders = headers(hop.requestHeaders, names).map {
            HeaderField(name: $0.name, value: scrub($0.value))
        }
        copy.responseHeaders = headers(hop.responseHeaders, names).map { field in
            let value = field.name.lowercased() == "location" ? url(field.value, names) : field.value
            return HeaderField(name: field.name, value: scrub(value))
        }
        copy.log = hop.log.map { line in
            var redacted = logLine(line, names)
            redacted.text = scrub(redacted.text)
            return redacted
        }
        copy.bodyPreview = scrub(hop.bodyPreview)
        copy.error = hop.error.map { $0.scrubbed(scrub) }
        return copy
    }

    /// The secret values of a request: values of secret headers (and the token after an
    /// auth scheme) and of secret query parameters.
    public static func secrets(
        headers: [HeaderField], url: ProbeURL, names: RedactionNames = .builtIn
    ) -> [String] {
        var values: [String] = []
        for field in headers where isSecretHeader(field.name, names) {
            values.append(field.value)
            if let space = field.value.firstIndex(of: " ") {
                values.append(String(field.value[field.value.index(after: space)...]))
            }
        }
        values += password(in: url.text)
        let queryItems = url.text.utf8.contains(UInt8(ascii: "?")) ? url.queryItems : []
        for item in queryItems where isSecretParameter(item.name, names) && !item.value.isEmpty {
            values.append(item.value)
            values.append(item.value.percentEncoded())
        }
        return values.sorted { $0.count > $1.count }
    }

    public static func attempt(_ attempt: Attempt) -> Attempt {
        var copy = attempt
        copy.url = url(attempt.url)
        copy.hops = attempt.hops.map { hop($0) }
        return copy
    }

    public static func report(_ report: URLReport) -> URLReport {
        var copy = report
        copy.url = url(report.url)
        copy.attempts = report.attempts.map(attempt)
        return copy
    }
}

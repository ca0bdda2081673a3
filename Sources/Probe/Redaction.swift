// Keeps secrets out of traces and exports: credentials in headers, cookies, passwords in URLs
// and query values whose names say they are secret. On by default; `--no-redact` turns it off.
import Foundation

/// Replaces secret values with a marker, keeping names so a trace still shows what was sent.
public enum Redaction {
    public static let marker = "[redacted]"

    private static let secretHeaders = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key",
    ].map { Array($0.utf8) }
    private static let secretWords = [
        "token", "secret", "signature", "password", "passwd", "apikey", "api_key", "auth",
    ]

    /// Whether a header's value should be hidden.
    public static func isSecretHeader(_ name: String) -> Bool {
        isSecretHeader(lowercased: asciiLowercased(name.utf8))
    }

    private static func isSecretHeader(lowercased lower: [UInt8]) -> Bool {
        secretHeaders.contains(lower) || containsSecretWord(lower)
    }

    /// Whether a query parameter's value should be hidden.
    public static func isSecretParameter(_ name: String) -> Bool {
        let lower = asciiLowercased(name.utf8)
        return ["s", "sig", "key", "sign"].contains(String(decoding: lower, as: UTF8.self)) || containsSecretWord(lower)
    }

    private static let secretWordBytes = secretWords.map { Array($0.utf8) }

    /// Runs for every header of every hop, so it searches bytes rather than Strings.
    private static func containsSecretWord(_ lower: [UInt8]) -> Bool {
        for word in secretWordBytes where word.count <= lower.count {
            for start in 0...(lower.count - word.count) {
                var match = true
                for offset in 0..<word.count where lower[start + offset] != word[offset] {
                    match = false
                    break
                }
                if match { return true }
            }
        }
        return false
    }

    private static func asciiLowercased(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
    }

    /// The name of a `Name: value` line when that header is secret (as `HeaderField(line:)`
    /// reads names), found on bytes: every line of every hop's log passes through here.
    private static func secretHeaderName(inLine text: String) -> String? {
        let utf8 = text.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")), colon != utf8.startIndex else { return nil }
        let name = utf8[..<colon]
        guard !name.contains(UInt8(ascii: " ")), isSecretHeader(lowercased: asciiLowercased(name)) else { return nil }
        return String(text[..<colon])
    }

    public static func headers(_ fields: [HeaderField]) -> [HeaderField] {
        fields.map { isSecretHeader($0.name) ? HeaderField(name: $0.name, value: marker) : $0 }
    }

    /// A URL with the password of its user information (`user:pass@`) and the values of
    /// secret query parameters hidden; scheme, user name, host and path untouched.
    public static func url(_ text: String) -> String {
        let text = withoutPassword(text)
        guard let question = text.firstIndex(of: "?") else { return text }
        let fragmentStart = text[question...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: question)..<fragmentStart]
        let pairs = QueryString.pairs(query).map { pair -> String in
            guard pair.value != nil, isSecretParameter(String(pair.name)) else {
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
        return text.replacingCharacters(in: range, with: marker)
    }

    /// The password written in a URL's user information, as written and decoded.
    static func password(in text: String) -> [String] {
        guard let range = passwordRange(text), !range.isEmpty else { return [] }
        let written = String(text[range])
        let decoded = written.removingPercentEncoding ?? written
        return decoded == written ? [written] : [written, decoded]
    }

    /// One line of curl's log with a secret header value or query value hidden.
    public static func logLine(_ line: CurlLogLine) -> CurlLogLine {
        var copy = line
        if line.kind != .info, let name = secretHeaderName(inLine: line.text) {
            copy.text = "\(name): \(marker)"
        } else if line.text.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "@") }) {
            copy.text = line.text.split(separator: " ", omittingEmptySubsequences: false)
                .map { word in
                    word.utf8.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "@") }
                        ? url(String(word)) : String(word)
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
    public static func hop(_ hop: Hop, secrets: [String] = []) -> Hop {
        var copy = hop
        let secrets = secrets.filter { $0.count >= 3 && $0 != marker }
        func scrub(_ text: String) -> String {
            secrets.isEmpty ? text : secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: marker) }
        }
        copy.url = scrub(url(hop.url))
        copy.originalURL = scrub(url(hop.originalURL))
        copy.requestHeaders = headers(hop.requestHeaders).map { HeaderField(name: $0.name, value: scrub($0.value)) }
        copy.responseHeaders = headers(hop.responseHeaders).map { field in
            let value = field.name.lowercased() == "location" ? url(field.value) : field.value
            return HeaderField(name: field.name, value: scrub(value))
        }
        copy.log = hop.log.map { line in
            var redacted = logLine(line)
            redacted.text = scrub(redacted.text)
            return redacted
        }
        copy.bodyPreview = scrub(hop.bodyPreview)
        copy.error = hop.error.map(scrub)
        return copy
    }

    /// The secret values of a request: values of secret headers (and the token after an
    /// auth scheme) and of secret query parameters.
    public static func secrets(headers: [HeaderField], url: ProbeURL) -> [String] {
        var values: [String] = []
        for field in headers where isSecretHeader(field.name) {
            values.append(field.value)
            if let space = field.value.firstIndex(of: " ") {
                values.append(String(field.value[field.value.index(after: space)...]))
            }
        }
        values += password(in: url.text)
        let queryItems = url.text.utf8.contains(UInt8(ascii: "?")) ? url.queryItems : []
        for item in queryItems where isSecretParameter(item.name) && !item.value.isEmpty {
            values.append(item.value)
            if let encoded = item.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
                values.append(encoded)
            }
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

// The shell command that reproduces one exchange of an attempt with stock tools (curl, and
// openssl s_client where curl cannot do what the attempt did), quoted for a POSIX shell.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution

/// Builds the command a person pastes into a shell to repeat what an attempt did.
///
/// Secrets never appear in the text: a secret header's value, a URL's password and the value
/// of a secret query parameter become `$VAR` references (`IPDIRECT_AUTHORIZATION`,
/// `IPDIRECT_URL_PASSWORD`, `IPDIRECT_QUERY_TOKEN`, ...), named in a comment line on top.
public enum ReproduceCommand {
    /// One exchange to reproduce: what the engine asked libcurl for.
    public struct Exchange: Sendable, Equatable {
        public var scenario: Scenario
        public var url: ProbeURL
        /// The address connected to; nil for system-dns when system DNS gave none (the command
        /// then asks system DNS itself, as the attempt did).
        public var ip: IPAddress?
        /// For system-dns: every address system DNS gave (pinned together, in order).
        public var pins: [IPAddress]
        public var method: RequestMethod
        /// The request headers the user asked for (`Host` is the engine's own).
        public var headers: [HeaderField]
        public var body: [UInt8]?
        /// The file the body was read from, when it came from one (`--data @FILE`).
        public var bodyFile: String?
        /// The PEM file of trusted CAs, when one was given.
        public var caFile: String?
        /// How long the attempt may take before it gives up.
        public var timeout: Duration
        /// For system-dns: the DNS server asked instead of getaddrinfo (`--dns-server`); the
        /// command then asks it with `dig` first, as the attempt did.
        public var dnsServer: DNSServer?
        /// Which header and query names are secret: their values become variables.
        public var secretNames: RedactionNames

        public init(
            scenario: Scenario, url: ProbeURL, ip: IPAddress?, pins: [IPAddress] = [], method: RequestMethod = .get,
            headers: [HeaderField] = [], body: [UInt8]? = nil, bodyFile: String? = nil, caFile: String? = nil,
            timeout: Duration = ProbeOptions.defaultTimeout, dnsServer: DNSServer? = nil,
            secretNames: RedactionNames = .builtIn
        ) {
            self.secretNames = secretNames
            self.scenario = scenario
            self.url = url
            self.ip = ip
            self.pins = pins
            self.method = method
            self.headers = headers
            self.body = body
            self.bodyFile = bodyFile
            self.caFile = caFile
            self.timeout = timeout
            self.dnsServer = dnsServer
        }
    }

    /// The command for one exchange: one line for curl, or for direct-https the openssl pair
    /// (handshake and certificate check, then the request over a handshake without SNI).
    ///
    /// - Parameter exchange: what was requested.
    /// - Returns: shell text, possibly several lines; comment lines name the variables it reads.
    public static func command(for exchange: Exchange) -> String {
        var variables: [(name: String, meaning: String)] = []
        var lines: [String] = []
        if exchange.scenario == .systemDNS, let server = exchange.dnsServer, !exchange.url.hostIsIPLiteral {
            lines.append(dig(exchange.url.host, at: server, timeout: exchange.timeout))
            // Nothing answered: the lookup is the whole attempt; curl alone would ask getaddrinfo.
            if exchange.ip == nil { return lines[0] }
        }
        switch exchange.scenario {
        case .directHTTPS where exchange.url.isHTTPS: lines.append(openSSLPair(exchange, variables: &variables))
        default: lines.append(curl(exchange, variables: &variables))
        }
        let comments = variables.map { "# \($0.name): \($0.meaning) (set it first; never written here)" }
        return (comments + lines).joined(separator: "\n")
    }

    /// The commands of several exchanges (the hops of one attempt), in order.
    ///
    /// - Parameter exchanges: the hops, first to last.
    /// - Returns: the commands, a comment line before each redirect hop.
    public static func command(for exchanges: [Exchange]) -> String {
        exchanges.enumerated().map { index, exchange in
            let command = command(for: exchange)
            // The comment names the hop without its secrets, as the command's variables do.
            let shown = Redaction.url(exchange.url.text, exchange.secretNames)
            return index == 0 ? command : "# hop \(index + 1): the redirect to \(shown)\n" + command
        }
        .joined(separator: "\n")
    }

    // MARK: curl

    private static func curl(_ exchange: Exchange, variables: inout [(name: String, meaning: String)]) -> String {
        let url = exchange.url
        let ipInURL = exchange.scenario == .directHTTP || exchange.scenario == .directHTTPS
        var words = ["curl", "-sS", "-i", "--max-time", seconds(exchange.timeout)]
        var input: String?
        if !url.hostIsIPLiteral, let ip = exchange.ip {
            switch exchange.scenario {
            case .systemDNS:
                words += ["--resolve", quoted(url.resolvePin(toAll: exchange.pins.isEmpty ? [ip] : exchange.pins))]
            case .directSNI:
                words += ["--resolve", quoted(url.resolvePin(to: ip))]
            default:
                break
            }
        }
        if let caFile = exchange.caFile, url.isHTTPS { words += ["--cacert", quoted(caFile)] }
        switch exchange.method {
        case .get: break
        case .head: words.append("-I")
        case .post where exchange.body != nil: break
        case .post: words += ["-X", "POST"]
        }
        if ipInURL { words += ["-H", quoted("Host: \(url.hostHeader)")] }
        for field in exchange.headers where field.name.lowercased() != "host" {
            words += ["-H", headerWord(field, exchange.secretNames, variables: &variables)]
        }
        if let body = exchange.body {
            if let file = exchange.bodyFile {
                words += ["--data-binary", quoted("@" + file)]
            } else if let text = printableText(body) {
                words += ["--data-raw", quoted(text)]
            } else {
                input = "printf \(octalFormat(body))"
                words += ["--data-binary", "@-"]
            }
        }
        let address = exchange.ip ?? url.literalHost
        let target = ipInURL ? (address.flatMap { try? url.replacingHost(with: $0) } ?? url.text) : url.text
        words.append(urlWord(target, exchange.secretNames, variables: &variables))
        let line = words.joined(separator: " ")
        return input.map { "\($0) | \(line)" } ?? line
    }

    // MARK: dig

    /// The lookup the system column made at a chosen server: A and AAAA, addresses only. The
    /// `grep` keeps the address lines, so the line fails, as the attempt did, when the server gave
    /// no address (NXDOMAIN, no answer, a timeout that dig reports on stdout).
    private static func dig(_ name: String, at server: DNSServer, timeout: Duration) -> String {
        var words = ["dig", "@" + server.address.text]
        if server.port != 53 { words += ["-p", String(server.port)] }
        words += [
            "+short", "+tries=1", "+time=\(max(1, Int(timeout.inSeconds.rounded(.up))))", quoted(name), "A",
            quoted(name), "AAAA",
            "|", "grep", "-E", quoted("^([0-9]+[.]){3}[0-9]+$|^[0-9a-fA-F:]*:[0-9a-fA-F:.]*$"),
        ]
        return words.joined(separator: " ")
    }

    // MARK: openssl

    /// curl cannot leave SNI out and still check the certificate against the name, so both
    /// the check and the request go through `openssl s_client -noservername -verify_hostname`.
    private static func openSSLPair(
        _ exchange: Exchange, variables: inout [(name: String, meaning: String)]
    )
        -> String
    {
        let url = exchange.url
        var client = [
            "openssl", "s_client", "-connect",
            quoted(exchange.ip?.hostPort(url.port) ?? IPLiteral.hostPort(url.host, port: url.port)),
            "-noservername", "-verify_hostname", quoted(url.host), "-verify_return_error",
        ]
        if let caFile = exchange.caFile { client += ["-CAfile", quoted(caFile)] }
        let check = (client + ["-brief", "</dev/null"]).joined(separator: " ")

        let userHeaders = exchange.headers.filter { !["host", "connection"].contains($0.name.lowercased()) }
        let requestLine =
            [Piece.text("\(exchange.method.rawValue) ")]
            + urlPieces(url.pathAndQuery, exchange.secretNames, variables: &variables)
            + [.text(" HTTP/1.1")]
        var quotedLines = [word(requestLine), quoted("Host: \(url.hostHeader)")]
        if !userHeaders.contains(where: { $0.name.lowercased() == "accept" }) {
            quotedLines.append(quoted("Accept: */*"))
        }
        for field in userHeaders { quotedLines.append(headerWord(field, exchange.secretNames, variables: &variables)) }
        if let body = exchange.body {
            quotedLines.append(quoted("Content-Length: \(body.count)"))
            if !userHeaders.contains(where: { $0.name.lowercased() == "content-type" }) {
                quotedLines.append(quoted("Content-Type: application/x-www-form-urlencoded"))
            }
        }
        // The server closes after answering, so s_client ends instead of waiting.
        quotedLines += [quoted("Connection: close"), "''"]
        var request = "printf '%s\\r\\n' " + quotedLines.joined(separator: " ")
        if let body = exchange.body {
            let bodyCommand: String
            if let file = exchange.bodyFile {
                bodyCommand = "cat \(quoted(file))"
            } else if let text = printableText(body) {
                bodyCommand = "printf '%s' \(quoted(text))"
            } else {
                bodyCommand = "printf \(octalFormat(body))"
            }
            request = "{ \(request); \(bodyCommand); }"
        }
        let send =
            "\(request) |\n  timeout \(seconds(exchange.timeout)) " + (client + ["-quiet"]).joined(separator: " ")
        return "\(check) &&\n\(send)"
    }

    // MARK: Words

    /// A header as one `-H` word (or one printf argument); a secret value becomes a variable.
    private static func headerWord(
        _ field: HeaderField, _ names: RedactionNames, variables: inout [(name: String, meaning: String)]
    )
        -> String
    {
        guard Redaction.isSecretHeader(field.name, names) else { return quoted("\(field.name): \(field.value)") }
        let name = variableName("IPDIRECT", field.name)
        remember(name, "the value of the \(field.name) header", in: &variables)
        return doubleQuoted([.text("\(field.name): "), .variable(name)])
    }

    /// A URL as one word: its password and secret query values become variables.
    private static func urlWord(
        _ text: String, _ names: RedactionNames, variables: inout [(name: String, meaning: String)]
    ) -> String {
        word(urlPieces(text, names, variables: &variables))
    }

    /// One word of pieces: single-quoted when no variable is in it, double-quoted otherwise.
    private static func word(_ pieces: [Piece]) -> String {
        guard pieces.contains(where: { if case .variable = $0 { true } else { false } }) else {
            return quoted(pieces.map { if case .text(let text) = $0 { text } else { "" } }.joined())
        }
        return doubleQuoted(pieces)
    }

    /// A URL (or a path and query) as pieces: its password and secret query values as variables.
    private static func urlPieces(
        _ text: String, _ names: RedactionNames, variables: inout [(name: String, meaning: String)]
    ) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(text)
        if let schemeEnd = ProbeURL.schemeSeparator(in: text) {
            let authority = text[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":"),
                text.index(after: colon) < at
            {
                pieces.append(.text(String(text[..<text.index(after: colon)])))
                remember("IPDIRECT_URL_PASSWORD", "the password in the URL", in: &variables)
                pieces.append(.variable("IPDIRECT_URL_PASSWORD"))
                rest = text[at...]
            }
        }
        if let question = rest.firstIndex(of: "?") {
            let end = rest[question...].firstIndex(of: "#") ?? rest.endIndex
            pieces.append(.text(String(rest[...question])))
            let pairs = QueryString.pairs(rest[rest.index(after: question)..<end])
            for (index, pair) in pairs.enumerated() {
                if index > 0 { pieces.append(.text("&")) }
                if let value = pair.value, !value.isEmpty, Redaction.isSecretParameter(String(pair.name), names) {
                    let name = variableName("IPDIRECT_QUERY", String(pair.name))
                    remember(name, "the value of the query parameter '\(pair.name)'", in: &variables)
                    pieces += [.text("\(pair.name)="), .variable(name)]
                } else {
                    pieces.append(.text(pair.value.map { "\(pair.name)=\($0)" } ?? String(pair.name)))
                }
            }
            pieces.append(.text(String(rest[end...])))
        } else {
            pieces.append(.text(String(rest)))
        }
        return pieces
    }

    private static func remember(
        _ name: String, _ meaning: String, in variables: inout [(name: String, meaning: String)]
    ) {
        if !variables.contains(where: { $0.name == name }) { variables.append((name, meaning)) }
    }

    /// `IPDIRECT_` plus the name in upper case, anything but letters and digits as `_`.
    static func variableName(_ prefix: String, _ name: String) -> String {
        let body = name.unicodeScalars.map { scalar -> String in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9": String(scalar).uppercased()
            default: "_"
            }
        }
        return prefix + "_" + body.joined()
    }

    private enum Piece {
        case text(String)
        case variable(String)
    }

    /// One word in double quotes: `$`, `` ` ``, `"` and `\` of the text escaped, variables as `${NAME}`.
    private static func doubleQuoted(_ pieces: [Piece]) -> String {
        var out = "\""
        for piece in pieces {
            switch piece {
            case .text(let text):
                // By scalar: a `$` or `` ` `` with a combining mark after it is one Character
                // that no special character equals, and the shell would still see it.
                for scalar in text.unicodeScalars {
                    if "$`\"\\".unicodeScalars.contains(scalar) { out.append("\\") }
                    out.unicodeScalars.append(scalar)
                }
            case .variable(let name):
                out += "${\(name)}"
            }
        }
        return out + "\""
    }

    /// One word for a POSIX shell: bare when it is made of safe characters, else in single
    /// quotes (a single quote inside as `'\''`, found by scalar: with a combining mark after it,
    /// a quote is part of a longer Character, and the shell still ends the quotes there).
    public static func quoted(_ text: String) -> String {
        if !text.isEmpty, text.utf8.allSatisfy({ $0 < 0x80 && safeBytes[Int($0)] }) { return text }
        guard text.utf8.contains(UInt8(ascii: "'")) else { return "'" + text + "'" }
        return "'" + String(text.unicodeScalars.replacing("'".unicodeScalars, with: "'\\''".unicodeScalars)) + "'"
    }

    /// The ASCII bytes a word may hold bare, by value (every reproduce command quotes several
    /// words: a CharacterSet built for each was a percent of a probe's CPU).
    private static let safeBytes: [Bool] = {
        var table = [Bool](repeating: false, count: 0x80)
        for byte in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_-+=:,./".utf8 {
            table[Int(byte)] = true
        }
        return table
    }()

    /// The body as text when it can travel in a quoted word exactly: UTF-8, no NUL.
    private static func printableText(_ body: [UInt8]) -> String? {
        guard !body.contains(0), let text = String(validating: body, as: UTF8.self) else { return nil }
        return text
    }

    /// A printf format writing exactly these bytes (octal escapes, `%` doubled), quoted.
    private static func octalFormat(_ bytes: [UInt8]) -> String {
        "'" + bytes.map { String(cFormat: "\\%03o", $0) }.joined() + "'"
    }

    private static func seconds(_ duration: Duration) -> String {
        let value = duration.inSeconds
        return value == value.rounded() ? String(Int(value)) : String(cFormat: "%.3g", value)
    }
}

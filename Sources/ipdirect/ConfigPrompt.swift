// `ipdirect config init` on a terminal: asks for the provider, account, endpoint and secret (the
// secret without echo), and writes them into the commented default file.
import FoundationEssentials
import FoundationGaps
import NameResolution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The answers `config init` asks for on a terminal, and the file they make.
struct ConfigAnswers {
    var provider: ProviderKind
    var account = ""
    var endpoint = ""
    /// Empty: left to `IPDIRECT_HTTPDNS_SECRET` (or `secret` in the file, added later by hand).
    var secret = ""

    /// Whether `config init` may ask: both standard input and output are a terminal.
    static var canAsk: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Asks each question on the terminal; nil when input ends (Ctrl-D) before the answers do.
    static func ask() -> ConfigAnswers? {
        let names = ProviderKind.allCases.map(\.rawValue).joined(separator: ", ")
        var provider: ProviderKind?
        while provider == nil {
            guard let line = prompt("Provider (\(names)) [doh-json]: ") else { return nil }
            provider = line.isEmpty ? .dohJSON : ProviderKind(rawValue: line)
            if provider == nil { say("'\(line)' is not a provider: one of \(names)\n") }
        }
        guard let provider else { return nil }
        var answers = ConfigAnswers(provider: provider)
        let hasAccount = [.alicloud, .alicloudLegacy, .tencent].contains(provider)
        if hasAccount {
            guard let account = prompt("Account ID (empty: none yet): ") else { return nil }
            answers.account = account
        }
        if provider != .system {
            guard let endpoint = prompt("Endpoint (empty: the provider's default or service discovery): ") else {
                return nil
            }
            answers.endpoint = endpoint
        }
        if provider == .alicloud || provider == .alicloudLegacy {
            guard
                let secret = prompt(
                    "Signing secret (not shown; empty: leave it to IPDIRECT_HTTPDNS_SECRET): ", echo: false)
            else { return nil }
            answers.secret = secret
        }
        return answers
    }

    /// The default file with these answers in place of its empty settings.
    func applied(to template: String) -> String {
        var lines = template.components(separatedBy: "\n")
        let values = [
            "provider": provider.rawValue, "account": account, "endpoint": endpoint, "secret": secret,
        ]
        for (index, line) in lines.enumerated() {
            for (key, value) in values where line.hasPrefix("\(key) = ") {
                lines[index] = "\(key) = \(Self.quoted(value))"
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A TOML basic string: quotes, backslashes and control characters escaped.
    static func quoted(_ value: String) -> String {
        var text = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                text += String(cFormat: "\\u%04X", scalar.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    /// Writes `text` to the terminal at once (the question stands before the answer is typed).
    private static func say(_ text: String) { StandardStream.output.write(text) }

    /// One line from the terminal after `question`, blanks around it dropped; nil at end of input.
    /// Without echo, the terminal's echo is off while the line is typed and restored after.
    private static func prompt(_ question: String, echo: Bool = true) -> String? {
        say(question)
        var saved = termios()
        let quiet = !echo && tcgetattr(STDIN_FILENO, &saved) == 0
        if quiet {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        }
        let line = readLine(strippingNewline: true)
        if quiet {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            say("\n")
        }
        return line?.trimmingWhitespace()
    }
}

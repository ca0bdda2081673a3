// Where the words of a command line lead through the subcommands, read before ArgumentParser
// parses them: "did you mean probe" for a mistyped command, and whose examples end a --help.
import ArgumentParser

/// The command a command line names, found from its leading words.
struct CommandPath {
    /// The deepest command the words name (`ProbeCommand` for `ipdirect probe --lab`).
    var command: any ParsableCommand.Type
    /// Its names from the root: ["ipdirect", "cache", "list"].
    var names: [String]
    /// A word where a command was expected, as a sentence with the nearest command; nil when none.
    var unknownSubcommand: String?
    /// The line asks for help (`-h`, `--help`, `ipdirect help probe`).
    var asksForHelp: Bool

    /// Follows `arguments` (without the program's name) through the subcommands of `root`.
    static func walk(_ arguments: [String], root: any ParsableCommand.Type = IPDirect.self) -> CommandPath {
        var words = arguments[...]
        let helpWord = words.first == "help"
        if helpWord { words = words.dropFirst() }
        var path = CommandPath(
            command: root, names: [root._commandName], unknownSubcommand: nil,
            asksForHelp: helpWord || arguments.contains("-h") || arguments.contains("--help"))
        // Leading words only: after the first option, a word may be that option's value.
        while let word = words.first, !word.hasPrefix("-") {
            let subcommands = path.command.configuration.subcommands
            if let next = subcommands.first(where: { $0._commandName == word }) {
                path.command = next
                path.names.append(word)
                words = words.dropFirst()
                continue
            }
            // A word after a command without subcommands is its argument (a URL, a name). The
            // root's default, the console, takes none: a word there is a mistyped command.
            guard !subcommands.isEmpty else { break }
            let names = subcommands.map { $0._commandName }
            let nearest = names.filter { Self.distance(word, $0) <= 2 || $0.hasPrefix(word) }
                .min { Self.distance(word, $0) < Self.distance(word, $1) }
            let command = path.names.joined(separator: " ")
            let looksLikeURL = word.contains("://") || word.contains(".")
            path.unknownSubcommand =
                nearest.map { "'\(word)' is not a command of \(command); did you mean '\($0)'?" }
                ?? (looksLikeURL && path.names.count == 1
                    ? "'\(word)' is not a command; to probe it: ipdirect probe \(word)"
                    : "'\(word)' is not a command of \(command); its commands are \(names.joined(separator: ", "))")
            break
        }
        return path
    }

    /// The Levenshtein distance between two words: how many letters to add, remove or change.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// A command whose `--help` ends with examples that run as printed.
protocol CommandExamples {
    /// Each example: the command line and what it shows.
    static var examples: [(command: String, shows: String)] { get }
}

extension ParsableCommand {
    /// The EXAMPLES block that ends this command's help; nil for a command without examples.
    static var examplesBlock: String? {
        guard let listed = (self as? any CommandExamples.Type)?.examples else { return nil }
        return "EXAMPLES:\n" + listed.map { "  \($0.command)\n      \($0.shows)" }.joined(separator: "\n")
    }
}

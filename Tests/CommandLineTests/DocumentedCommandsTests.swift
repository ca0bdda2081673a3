// Every `ipdirect` command the README and docs/ show, run as written in a network namespace of
// its own (the lab where it says --lab), so no documented command rots into a usage error.
import Foundation
import TestSupport
import Testing

/// One command line of a fenced `sh` block, with the variables the block exported before it.
struct DocumentedCommand: CustomStringConvertible, Sendable {
    /// The markdown file, relative to the repository.
    let file: String
    /// The line the command starts on.
    let line: Int
    /// The command as a shell reads it, continuation lines joined, its comment dropped.
    let text: String
    /// `export NAME=VALUE` lines of the same block above it.
    let exports: [String: String]

    var description: String { "\(file):\(line): \(text)" }

    /// The first word of a command that runs ipdirect, as a reader would type it.
    static let programs = ["ipdirect", ".build/debug/ipdirect", ".build-release/release/ipdirect"]

    /// The subcommands that run until stopped (an agent, the lab, an audit without --for, a watch
    /// without a count).
    var runsUntilStopped: Bool {
        let words = arguments
        return words.first == "agent" || words.first == "lab"
            || (words.first == "audit" && !words.contains("--for"))
            || (words.contains("--watch") && !words.contains("--count"))
    }

    /// Whether it is the interactive console, which needs a terminal (the tmux tests run it).
    var isConsole: Bool {
        let words = arguments
        return words.first == nil || words.first == "console" || words.first?.hasPrefix("-") == true
    }

    /// The words after the program's name (split on blanks: the docs quote nothing that matters here).
    var arguments: [String] { Array(text.split(separator: " ").dropFirst().map(String.init)) }

    /// The `ipdirect` commands of every fenced `sh` block in `markdown`.
    static func all(in markdown: String, file: String) -> [DocumentedCommand] {
        var commands: [DocumentedCommand] = []
        var inBlock = false
        var exports: [String: String] = [:]
        var pending: (line: Int, text: String)?
        for (index, raw) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.hasPrefix("```") {
                inBlock = !inBlock && line.trimmingCharacters(in: .whitespaces) == "```sh"
                exports = [:]
                pending = nil
                continue
            }
            guard inBlock else { continue }
            let code = withoutComment(line).trimmingCharacters(in: .whitespaces)
            let joined = (pending?.text ?? "") + (pending == nil ? "" : " ") + code
            let start = pending?.line ?? index + 1
            if joined.hasSuffix("\\") {
                pending = (start, String(joined.dropLast()).trimmingCharacters(in: .whitespaces))
                continue
            }
            pending = nil
            let text = joined.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            if text.hasPrefix("export "), let equals = text.firstIndex(of: "=") {
                let name = text[text.index(text.startIndex, offsetBy: 7)..<equals]
                exports[String(name)] = String(text[text.index(after: equals)...])
            } else if let first = text.split(separator: " ").first, programs.contains(String(first)) {
                commands.append(DocumentedCommand(file: file, line: start, text: text, exports: exports))
            }
        }
        return commands
    }

    /// The line without a shell comment (` #` outside quotes).
    private static func withoutComment(_ line: String) -> String {
        var quote: Character?
        var previous: Character = " "
        for (offset, character) in line.enumerated() {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "#" && (previous == " " || offset == 0) {
                return String(line.prefix(offset))
            }
            previous = character
        }
        return line
    }
}

@Suite(
    "The README's and docs/'s commands run as written",
    .enabled(if: geteuid() == 0, "it runs each command in a network namespace of its own, which needs root"),
    .enabled(if: BuiltBinary.ipdirect != nil, "the ipdirect binary is not built"))
struct DocumentedCommandsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every command of README.md and docs/*.md.
    static func documented() throws -> [DocumentedCommand] {
        let docs = root.appendingPathComponent("docs")
        let pages = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
            .sorted()
        return try (["README.md"] + pages.map { "docs/" + $0 }).flatMap { file in
            DocumentedCommand.all(
                in: try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8), file: file)
        }
    }

    @Test("the commands are found: the README shows the quick start's probe and a provider of one's own")
    func found() throws {
        let commands = try Self.documented()
        #expect(commands.contains { $0.file == "README.md" && $0.text.contains("probe --lab") })
        #expect(commands.contains { $0.file == "README.md" && $0.text.contains("--provider alicloud") })
        let block = """
            ```sh
            export IPDIRECT_HTTPDNS_SECRET=00ff   # hex
            ipdirect resolve a.example \\
                --provider alicloud   # the v2 API
            make run
            ```
            """
        let parsed = DocumentedCommand.all(in: block, file: "x.md")
        #expect(parsed.map(\.text) == ["ipdirect resolve a.example --provider alicloud"])
        #expect(parsed.first?.exports == ["IPDIRECT_HTTPDNS_SECRET": "00ff"])
    }

    @Test("every documented command parses and ends without a signal (status 0, 1 or 3; a long-running one runs)")
    func everyCommandRuns() async throws {
        let binary = try #require(BuiltBinary.ipdirect)
        let commands = try Self.documented().filter { !$0.isConsole }
        #expect(commands.count >= 12, "only \(commands.count) commands found in the docs")
        let failures = await withTaskGroup(of: String?.self) { group in
            var running = 0
            var failures: [String] = []
            for command in commands {
                if running == 4, let failure = await group.next() {
                    running -= 1
                    if let failure { failures.append(failure) }
                }
                running += 1
                group.addTask { await Self.failure(of: command, binary: binary) }
            }
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.count) documented commands failed:\n\(failures.joined(separator: "\n"))")
    }

    /// Runs one command in a scratch directory with files the docs name (urls.txt, targets.txt),
    /// in a network namespace with only loopback; nil when it did what a reader expects.
    static func failure(of command: DocumentedCommand, binary: String) async -> String? {
        guard let scratch = try? ScratchDirectory("doc-command") else { return "\(command): no scratch directory" }
        defer { scratch.remove() }
        let urls = "https://sni-a.lab.test/\nhttps://hijacked.lab.test/\n"
        for name in ["urls.txt", "targets.txt"] {
            try? urls.write(toFile: scratch.file(name), atomically: true, encoding: .utf8)
        }
        var environment = [
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": scratch.path, "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": scratch.file("config"), "XDG_CACHE_HOME": scratch.file("cache"),
        ]
        environment.merge(command.exports) { _, new in new }
        let program = command.text.split(separator: " ", maxSplits: 1)
        let line = "'\(binary)' " + (program.count > 1 ? String(program[1]) : "")
        let seconds: Double = command.runsUntilStopped ? 6 : 60
        do {
            // A network namespace with only loopback, and a PID namespace whose end (the shell's,
            // or this test killing it at the bound) ends every process the command started. The
            // PID namespace gets its own /proc: libdispatch's worker monitor opens /proc/TID/stat
            // for each busy worker and traps (SIGILL) when it is missing, as it is when /proc is
            // still the parent namespace's, whose TIDs differ.
            let result = try await ChildProcess.run(
                "/usr/bin/unshare",
                [
                    "-n", "--fork", "--pid", "--mount-proc", "--kill-child", "/bin/bash", "-o", "pipefail", "-c",
                    "ip link set lo up && \(line)",
                ],
                environment: environment, directory: scratch.path, seconds: seconds)
            let killedAtBound = result.status == 128 + SIGKILL && command.runsUntilStopped
            if killedAtBound || [0, 1, 3].contains(result.status) { return nil }
            let said = result.errors.split(separator: "\n").suffix(3).joined(separator: " / ")
            return "\(command)\n    exit \(result.status): \(said)"
        } catch {
            return "\(command): could not run: \(error)"
        }
    }
}

// The ipdirect binary's one voice: every error is `ipdirect: <sentence>` on stderr, every command
// uses the exit statuses of one table (help, man page, README), and a mistyped command is named.
import Foundation
import TestSupport
import Testing

@Suite struct CommandLineVoiceTests {
    /// The exit-status rows `ipdirect --help` prints, as "STATUS  MEANING" lines.
    private static func helpRows() async throws -> [String] {
        // Wide enough that no row is wrapped.
        let help = try await ChildProcess.run(
            BuiltBinary.ipdirectPath, ["--help"],
            environment: ProcessInfo.processInfo.environment.merging(["COLUMNS": "400"]) { $1 }
        )
        let lines = help.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let start = lines.firstIndex(where: { $0.hasPrefix("EXIT STATUS") }) else { return [] }
        return lines[(start + 1)...].prefix { $0.first?.isNumber == true }.map { $0 }
    }

    @Test(
        "an error in any command is one line after 'ipdirect:', with the table's status",
        arguments: [
            (["resolve"], Int32(2), "give at least one host name"),
            (["resolve", "--format", "xml", "a.test"], 2, "'table' and 'json'"),
            (["probe", "--frobnicate", "a.test"], 2, "Unknown option '--frobnicate'"),
            (["probe", "--method", "head", "--data", "x", "a.test"], 2, "--data goes with POST"),
            (["cache", "list", "--format", "xml"], 2, "'table' and 'json'"),
            (["lab", "--port-base", "0"], 2, "--port-base must be"),
            (["agent", "--input", "-"], 2, "--input - cannot be reloaded"),
            (["config", "show", "--timeout", "0"], 2, "--timeout must be"),
            (["console", "--max-traces", "0"], 2, "--max-traces must be"),
            (["resolve", "--lab", "@https://a.test/resolve", "a.test"], 2, "--lab is one: give one of them"),
            (["probe", "--watch", "1", "--format", "table", "a.test"], 2, "--watch prints one JSON line per round"),
        ])
    func oneVoice(arguments: [String], status: Int32, says expected: String) async throws {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, arguments)
        #expect(result.status == status, "\(arguments): \(result.errors)")
        let lines = result.errors.split(separator: "\n")
        #expect(!lines.isEmpty, "\(arguments): nothing said")
        for line in lines {
            #expect(line.hasPrefix("ipdirect: "), "\(arguments): \(line)")
        }
        #expect(lines.first?.contains(expected) == true, "\(arguments): \(result.errors)")
        for other in ["Error:", "error:", "Usage:", "ipdirect probe:", "ipdirect agent:"] {
            #expect(!result.errors.contains(other), "\(arguments): \(result.errors)")
        }
    }

    @Test(
        "a mistyped command gets the nearest one; a word that is none gets the list",
        arguments: [
            (["prob", "x"], "'prob' is not a command of ipdirect; did you mean 'probe'?"),
            (["reslove", "a.test"], "did you mean 'resolve'?"),
            (["cache", "lst"], "'lst' is not a command of ipdirect cache; did you mean 'list'?"),
            (["zzzzzz"], "its commands are console, probe, resolve, lab, cache, config, agent"),
            (["https://a.test/"], "'https://a.test/' is not a command; to probe it: ipdirect probe https://a.test/"),
        ])
    func didYouMean(arguments: [String], says expected: String) async throws {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, arguments)
        #expect(result.status == 2, "\(arguments): \(result.errors)")
        #expect(result.errors.contains(expected), "\(arguments): \(result.errors)")
        #expect(!result.errors.contains("Usage: ipdirect console"), "\(result.errors)")
    }

    @Test("config init over an existing file is bad usage (2) and says how to overwrite it")
    func configInitExisting() async throws {
        let scratch = try ScratchDirectory("voice")
        defer { scratch.remove() }
        let path = scratch.file("config.toml")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("# mine\n".utf8)))
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["config", "init", "--config", path])
        #expect(result.status == 2, "\(result.errors)")
        #expect(
            result.errors
                == "ipdirect: \(path) already exists: add --force to overwrite it, or --config FILE to write elsewhere\n"
        )
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "# mine\n")
    }

    // toml++ (inside TOMLKit) throws its parse error as a C++ exception and catches it itself: the
    // release link keeps that module's unwind tables alone (scripts/drop-unwind-tables.py), and
    // without them this file ended the process ("terminate called after throwing...", status 134).
    @Test("a config.toml that does not parse is one sentence with status 2, not a crash")
    func configDoesNotParse() async throws {
        let scratch = try ScratchDirectory("voice")
        defer { scratch.remove() }
        let path = scratch.file("config.toml")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("a = [\n".utf8)))
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["config", "show", "--config", path])
        #expect(result.status == 2, "\(result.errors)")
        #expect(
            result.errors
                == "ipdirect: cannot read \(path): Error while parsing array: encountered end-of-file at line 1\n")
    }

    @Test(
        "a full disk is said as a full disk, and the run ends with status 1",
        .enabled(if: FullDisk.available, "a full file system is a tmpfs this test mounts, which needs root"))
    func fullDisk() async throws {
        let disk = try await FullDisk()
        defer { disk.remove() }
        let har = disk.path + "/out.har"
        // An address literal over plain HTTP: nothing is resolved and nothing leaves loopback.
        let result = try await ChildProcess.run(
            BuiltBinary.ipdirectPath,
            ["probe", "--provider", "system", "--timeout", "2", "--har", har, "http://127.0.0.1:9/"],
            seconds: 60)
        #expect(result.status == 1, "\(result.errors)")
        #expect(
            result.errors.contains("ipdirect: cannot write \(har): the disk is full (No space left on device)"),
            "\(result.errors)")
    }

    @Test("the exit statuses are one table, in --help (so the man page) and in the README's Exit codes")
    func exitCodeTable() async throws {
        let rows = try await Self.helpRows()
        #expect(rows.map { $0.split(separator: " ").first.map(String.init) } == ["0", "1", "2", "3", "130"], "\(rows)")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section =
            try #require(readme.components(separatedBy: "\n## Exit codes\n").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        for row in rows {
            let status = row.prefix { $0 != " " }
            let meaning = row.dropFirst(status.count).trimmingCharacters(in: .whitespaces)
            #expect(section.contains("| \(status) | \(meaning) |"), "README lacks: | \(status) | \(meaning) |")
        }
    }

    @Test(
        "every command's --help ends with 2 to 4 examples and names values one way (<FILE>, <SECONDS>)",
        arguments: [
            ["console"], ["probe"], ["resolve"], ["lab"], ["agent"], ["cache", "list"], ["cache", "clear"],
            ["cache", "path"], ["config", "init"], ["config", "path"], ["config", "show"], ["doctor"], ["audit"],
        ])
    func helpExamples(command: [String]) async throws {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, command + ["--help"])
        #expect(result.status == 0, "\(result.errors)")
        let blocks = result.output.components(separatedBy: "\nEXAMPLES:\n")
        #expect(blocks.count == 2, "\(command): no EXAMPLES block")
        let examples = (blocks.last ?? "").split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("    ") }
        #expect((2...4).contains(examples.count), "\(command): \(examples)")
        for example in examples {
            #expect(example.contains("ipdirect "), "\(command): \(example)")
        }
        // ArgumentParser's own `<options>` in the usage line is the one lowercase name left.
        let lowercase = try Regex("<(?!options>)[a-z][a-z-]*>")
        #expect(
            result.output.firstMatch(of: lowercase) == nil,
            "\(command): \(result.output.firstMatch(of: lowercase).map { String(result.output[$0.range]) } ?? "")")
    }

    @Test("-k is refused with why: the certificate check is the point of a probe")
    func insecureRefused() async throws {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["probe", "-k", "https://a.test/"])
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.errors.hasPrefix("ipdirect: -k (--insecure) is refused: "), "\(result.errors)")
        #expect(result.errors.contains("certificate check"), "\(result.errors)")
        #expect(result.errors.contains("--cacert FILE"), "\(result.errors)")
    }
}

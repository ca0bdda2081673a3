// What a user installs, checked with the tools they would use: completions loaded by their shells,
// man pages rendered by man and groff, the .deb unpacked by dpkg and its binary run with no Swift.
import Foundation
import Lab
import TestSupport
import Testing

/// The package's root folder, where `make docs` and `make deb` leave what they build (`out/`).
private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
private let docs = packageRoot.appendingPathComponent("out/docs")
private let manPages: [String] = {
    let folder = docs.appendingPathComponent("man")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { $0.hasSuffix(".1") }.sorted().map { folder.appendingPathComponent($0).path }
}()
private let debianPackage: String? = {
    let out = packageRoot.appendingPathComponent("out")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []
    return names.filter { $0.hasPrefix("ipdirect_") && $0.hasSuffix(".deb") }.sorted().last
        .map { out.appendingPathComponent($0).path }
}()

/// Runs a program found on the PATH, as a user's shell would.
private func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> ChildProcess.Result {
    try await ChildProcess.run("/usr/bin/env", arguments, environment: environment)
}

@Suite("Shell completions")
struct CompletionTests {
    /// The script ArgumentParser writes for `shell`, from the binary this build made.
    static func script(for shell: String, in scratch: ScratchDirectory) async throws -> String {
        let binary = try #require(BuiltBinary.ipdirect, "the ipdirect binary is not built")
        let result = try await ChildProcess.run(binary, ["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.errors)")
        let file = scratch.file("ipdirect.\(shell)")
        try Data(result.output.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    @Test(
        "each completion script loads in its shell without a syntax error",
        arguments: [("bash", ["bash", "-n"]), ("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])])
    func scriptsParse(shell: String, check: [String]) async throws {
        let scratch = try ScratchDirectory("completion")
        defer { scratch.remove() }
        let file = try await Self.script(for: shell, in: scratch)
        // The README's test command installs bash, zsh and fish: a missing shell is a failure here.
        let result = try await run(check + [file])
        #expect(result.status == 0, "\(shell) refused the completion script: \(result.errors)")
    }

    /// What bash offers after `words` (the last one being completed), through the function the
    /// script registers for `ipdirect` with `complete -F`.
    static func bashCompletions(_ words: [String], script: String) async throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = """
            source '\(script)'
            function=$(complete -p ipdirect | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p')
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            "$function" ipdirect "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let binary = try #require(BuiltBinary.ipdirect)
        // The script may ask the binary itself for some completions: it must find this build's.
        let path = URL(fileURLWithPath: binary).deletingLastPathComponent().path
        let environment = ProcessInfo.processInfo.environment.merging(
            ["PATH": path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]) { $1 }
        let result = try await ChildProcess.run("/bin/bash", ["-c", program], environment: environment)
        #expect(result.status == 0, "\(result.errors)")
        return result.output.split(separator: "\n").map(String.init)
    }

    @Test("bash completes `ipdirect pro` to probe, and --provider to its six kinds")
    func bashCompletes() async throws {
        let scratch = try ScratchDirectory("completion")
        defer { scratch.remove() }
        let file = try await Self.script(for: "bash", in: scratch)
        let subcommands = try await Self.bashCompletions(["ipdirect", "pro"], script: file)
        #expect(Set(subcommands) == ["probe"], "\(subcommands)")
        let providers = try await Self.bashCompletions(["ipdirect", "resolve", "--provider", ""], script: file)
        #expect(
            Set(providers) == ["alicloud", "alicloud-legacy", "tencent", "doh", "doh-json", "system"], "\(providers)")
    }
}

/// Runs only where `make docs` / `make deb` left their output (`make package-test` builds both and
/// runs this suite): a release build is too slow for every `make test`.
@Suite("Release package")
struct ReleasePackageTests {
    @Test(
        "the man page renders with man -l, and groff -ww finds nothing to warn about",
        .enabled(if: !manPages.isEmpty, "no man pages in out/docs/man: run make package-test"))
    func manPagesRender() async throws {
        #expect(manPages.contains { $0.hasSuffix("/ipdirect.1") }, "\(manPages)")
        for page in manPages {
            let lint = try await run(["groff", "-ww", "-man", "-Tutf8", "-z", page])
            #expect(lint.status == 0 && lint.errors.isEmpty, "groff warns on \(page): \(lint.errors)")
            let shown = try await run(
                ["man", "-l", page],
                environment: ProcessInfo.processInfo.environment.merging(["MANPAGER": "cat", "MANWIDTH": "80"]) { $1 })
            #expect(shown.status == 0 && shown.errors.isEmpty, "man -l \(page): \(shown.errors)")
            #expect(shown.output.contains("NAME") && shown.output.contains("ipdirect"), "\(page)")
        }
        // Generated from the command definitions: probe's options are in the page, and whatis reads it.
        let page = try #require(manPages.first { $0.hasSuffix("/ipdirect.1") })
        let text = try await run(["man", "-l", page], environment: ["MANPAGER": "cat", "MANWIDTH": "200"])
        #expect(
            text.output.contains("--concurrency") && text.output.contains("--all-ips"), "\(text.output.prefix(400))")
        let whatis = try await run(["lexgrog", page])
        #expect(whatis.status == 0 && whatis.output.contains("ipdirect - "), "\(whatis.output)")
    }

    @Test(
        "the .deb unpacks, and its binary runs with no Swift on any path: --version, and a lab name resolved",
        .enabled(if: debianPackage != nil, "no out/ipdirect_*.deb: run make package-test"))
    func unpackedBinaryRuns() async throws {
        let deb = try #require(debianPackage)
        let scratch = try ScratchDirectory("deb")
        defer { scratch.remove() }
        let unpack = try await run(["dpkg-deb", "-x", deb, scratch.path])
        try #require(unpack.status == 0, "\(unpack.errors)")
        let binary = scratch.file("usr/bin/ipdirect")

        let libraries = try await run(["ldd", binary])
        #expect(
            !libraries.output.contains("libswift") && !libraries.output.contains("libFoundation"), "\(libraries.output)"
        )

        let built = try #require(BuiltBinary.ipdirect)
        let expected = try await ChildProcess.run(built, ["--version"]).output
        let version = try await ChildProcess.run("/usr/bin/env", ["-i", binary, "--version"])
        #expect(version.status == 0 && version.output == expected, "\(version.output) \(version.errors)")

        let lab = try ChildProcess(built, ["lab"], errors: .discarded)
        defer { lab.signal(SIGTERM) }
        let line = try #require(try await lab.nextLine(within: 60), "ipdirect lab printed no endpoints")
        let endpoints = try JSONDecoder().decode(LabEndpoints.self, from: Data(line.utf8))
        let resolved = try await ChildProcess.run(
            "/usr/bin/env",
            [
                "-i", binary, "resolve", "single.lab.test", "--provider", "doh-json", "--endpoint",
                endpoints.httpdns + "/resolve", "--format", "json",
            ])
        #expect(resolved.status == 0, "\(resolved.output) \(resolved.errors)")
        let answers = try #require(
            try JSONSerialization.jsonObject(with: Data(resolved.output.utf8)) as? [[String: Any]], "\(resolved.output)"
        )
        let httpdns = try #require(answers.first?["httpdns"] as? [String: Any])
        #expect(httpdns["ipv4"] as? [String] == ["127.0.0.1"], "\(resolved.output)")
    }

    @Test(
        "dpkg-deb -I shows Depends computed from the binary, and the configuration as conffiles",
        .enabled(if: debianPackage != nil, "no out/ipdirect_*.deb: run make package-test"))
    func controlFields() async throws {
        let deb = try #require(debianPackage)
        let info = try await run(["dpkg-deb", "-I", deb])
        try #require(info.status == 0, "\(info.errors)")
        let depends = try #require(
            info.output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("Depends:") })
        for library in ["libc6", "libcurl4", "libssl3", "libncursesw6", "libc-ares2"] {
            #expect(depends.contains(library), "\(depends)")
        }
        #expect(!depends.contains("swift"), "\(depends)")
        let conffiles = try await run(["dpkg-deb", "-I", deb, "conffiles"])
        #expect(
            conffiles.output.split(separator: "\n").map(String.init)
                == ["/etc/ipdirect/config.toml", "/etc/ipdirect/targets.txt", "/etc/ipdirect/agent.env"],
            "\(conffiles.output)")
    }

    @Test(
        "systemd-analyze verify accepts the agent's unit",
        .enabled(if: debianPackage != nil, "no out/ipdirect_*.deb: run make package-test"),
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
            "systemd-analyze is not installed here"))
    func unitVerifies() async throws {
        let deb = try #require(debianPackage)
        let scratch = try ScratchDirectory("unit")
        defer { scratch.remove() }
        _ = try await run(["dpkg-deb", "-x", deb, scratch.path])
        // verify checks that ExecStart's program exists and that man finds the Documentation=
        // pages: both point into the unpacked package, not at an installed ipdirect.
        let unit = try String(
            contentsOfFile: scratch.file("lib/systemd/system/ipdirect-agent.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/ipdirect agent"))
        let copy = scratch.file("ipdirect-agent.service")
        try unit.replacingOccurrences(of: "/usr/bin/ipdirect", with: scratch.file("usr/bin/ipdirect"))
            .write(toFile: copy, atomically: true, encoding: .utf8)
        let verify = try await run(
            ["systemd-analyze", "verify", copy],
            environment: ProcessInfo.processInfo.environment.merging(["MANPATH": scratch.file("usr/share/man")]) { $1 })
        #expect(verify.status == 0 && verify.errors.isEmpty, "\(verify.output)\(verify.errors)")
    }
}

/// The man page's EXAMPLES and EXIT STATUS as `--help` prints them (scripts/man-sections.py
/// copies them into the page), and each example run as a reader would paste it.
@Suite("Man page examples")
struct ManPageExampleTests {
    /// Every command's path (`["cache", "list"]`), in the order of `--experimental-dump-help`.
    static func commandPaths(_ binary: String) async throws -> [[String]] {
        let dump = try await ChildProcess.run(binary, ["--experimental-dump-help"])
        let tree = try #require(try JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])
        func walk(_ node: [String: Any], _ path: [String]) -> [[String]] {
            let subcommands = (node["subcommands"] as? [[String: Any]]) ?? []
            return [path]
                + subcommands.filter { $0["commandName"] as? String != "help" }.flatMap {
                    walk($0, path + [$0["commandName"] as? String ?? ""])
                }
        }
        return walk(try #require(tree["command"] as? [String: Any]), [])
    }

    /// A command's examples as its `--help` ends with them: each command line and what it shows.
    static func helpExamples(_ binary: String, _ path: [String]) async throws -> [String] {
        let help = try await ChildProcess.run(
            binary, path + ["--help"],
            environment: ProcessInfo.processInfo.environment.merging(["COLUMNS": "400"]) { $1 })
        let lines = help.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "EXAMPLES:") else { return [] }
        return lines[(start + 1)...].prefix { $0.hasPrefix("  ") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The page as man shows it, wide enough that no line wraps.
    static func rendered(_ page: String) async throws -> [String] {
        let text = try await run(["man", "-l", page], environment: ["MANPAGER": "cat", "MANWIDTH": "400"])
        return text.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test(
        "the man page's examples and exit-status table are --help's, the doctor's 3 included",
        .enabled(if: !manPages.isEmpty, "no man pages in out/docs/man: run make package-test"))
    func sameAsHelp() async throws {
        let binary = try #require(BuiltBinary.ipdirect, "the ipdirect binary is not built")
        let page = try #require(manPages.first { $0.hasSuffix("/ipdirect.1") })
        let lines = try await Self.rendered(page)
        let examples = try #require(lines.firstIndex(of: "EXAMPLES"), "no EXAMPLES section")
        let exitStatus = try #require(lines.firstIndex(of: "EXIT STATUS"), "no EXIT STATUS section")
        let shown = Array(lines[(examples + 1)..<exitStatus])
        var expected: [String] = []
        for path in try await Self.commandPaths(binary) {
            let pairs = try await Self.helpExamples(binary, path)
            // The page shows what each example shows above its command line.
            if !pairs.isEmpty { expected.append((["ipdirect"] + path).joined(separator: " ")) }
            for index in stride(from: 0, to: pairs.count - 1, by: 2) { expected += [pairs[index + 1], pairs[index]] }
        }
        #expect(expected.count > 20, "\(expected)")
        #expect(shown == expected)

        let root = try await ChildProcess.run(
            binary, ["--help"], environment: ProcessInfo.processInfo.environment.merging(["COLUMNS": "400"]) { $1 })
        let helpLines = root.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let table = try #require(helpLines.firstIndex { $0.hasPrefix("EXIT STATUS") })
        let helpRows = helpLines[(table + 1)...].prefix { $0.first?.isNumber == true }
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        let pageRows = lines[(exitStatus + 1)...].prefix { $0 != "AUTHORS" }.filter { $0.first?.isNumber == true }
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(Array(pageRows) == Array(helpRows))
        #expect(helpRows.map { $0.prefix { $0 != " " } } == ["0", "1", "2", "3", "130"])
        #expect(!lines.contains { $0.contains(">0 if an error occurs") || $0.contains("exits 0 on success") })
    }

    @Test(
        "every example in the man page runs: none is bad usage (2) or dies of a signal",
        .enabled(if: !manPages.isEmpty, "no man pages in out/docs/man: run make package-test"))
    func examplesRun() async throws {
        let binary = try #require(BuiltBinary.ipdirect, "the ipdirect binary is not built")
        var commands: [String] = []
        for path in try await Self.commandPaths(binary) {
            let pairs = try await Self.helpExamples(binary, path)
            commands += stride(from: 0, to: pairs.count, by: 2).map { pairs[$0] }
        }
        let page = try #require(manPages.first { $0.hasSuffix("/ipdirect.1") })
        let lines = try await Self.rendered(page)
        for command in commands { #expect(lines.contains(command), "not in the man page: \(command)") }

        let scratch = try ScratchDirectory("man-examples")
        defer { scratch.remove() }
        // The files the examples name, each with a URL of the lab's zone.
        for name in ["urls.txt", "targets.txt"] {
            try "https://sni-a.lab.test/\n".write(toFile: scratch.file(name), atomically: true, encoding: .utf8)
        }
        let directory = (binary as NSString).deletingLastPathComponent
        for (index, command) in commands.enumerated() {
            let script = scratch.file("example-\(index).sh")
            try (command + "\n").write(toFile: script, atomically: true, encoding: .utf8)
            // No network but loopback (and the addresses an example listens on, as a namespace's):
            // --lab examples meet the embedded lab, the others fail to reach anything (1), never
            // with a usage error. A terminal (script) for the console; 8 s for servers, then 124.
            let shell = """
                ip link set lo up; ip addr add 192.0.2.1/32 dev lo; ip addr add 192.0.2.2/32 dev lo
                cd \(scratch.path) && HOME=\(scratch.path) PATH=\(directory):$PATH \
                timeout -s TERM 8 script -qec 'bash -o pipefail \(script)' /dev/null
                """
            // A PID namespace of its own: when the shell ends, the kernel ends whatever the example
            // left behind (an agent ignores the SIGHUP the terminal's close sends: it reloads on it).
            // With a /proc of its own: libdispatch's worker monitor opens /proc/TID/stat for each
            // busy worker and traps (SIGILL) when the parent's /proc has no such TID.
            let result = try await ChildProcess.run(
                "/usr/bin/unshare", ["-n", "--fork", "--pid", "--mount-proc", "--kill-child", "sh", "-c", shell],
                seconds: 60)
            #expect(
                result.status != 2 && (result.status < 128 || result.status == 124),
                "\(command): exit \(result.status)\n\(result.output.suffix(600))\n\(result.errors.suffix(600))")
        }
    }
}

// Where ipdirect expects a regular file (its configuration, its cache, a CA file) a FIFO, a device
// or a directory is refused at once with a sentence naming what it is, instead of blocking forever.
import Foundation
import TestSupport
import Testing

/// Runs the ipdirect binary with HOME in `home` (no user configuration or cache); a run that
/// blocks is killed after a minute and reads as 128 + SIGKILL.
func runIPDirect(_ arguments: [String], home: ScratchDirectory) async throws -> ChildProcess.Result {
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = home.path
    environment["XDG_CONFIG_HOME"] = nil
    environment["XDG_CACHE_HOME"] = nil
    return try await ChildProcess.run(BuiltBinary.ipdirectPath, arguments, environment: environment, seconds: 60)
}

@Suite("Special files where a regular file is expected")
struct SpecialFileTests {

    @Test("config show with a FIFO as the configuration ends at once and says it is a FIFO")
    func fifoConfiguration() async throws {
        let home = try ScratchDirectory("special")
        defer { home.remove() }
        let fifo = home.file("config.toml")
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try await runIPDirect(["config", "show", "--config", fifo], home: home)
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.errors.contains("\(fifo): it is a FIFO, not a regular file"), "\(result.errors)")
    }

    @Test(
        "--cacert names a device or a directory: refused as bad usage with what it is",
        arguments: [("/dev/zero", "it is a character device, not a regular file"), ("dir", "it is a directory")])
    func caFileNotRegular(path: String, says expected: String) async throws {
        let home = try ScratchDirectory("special")
        defer { home.remove() }
        let file = path == "dir" ? home.path : path
        // An address literal over plain HTTP: nothing is resolved and nothing leaves loopback.
        let result = try await runIPDirect(
            ["probe", "--provider", "system", "--timeout", "1", "--cacert", file, "http://127.0.0.1:9/"], home: home)
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.errors.contains("--cacert \(file): \(expected)"), "\(result.errors)")
    }

    @Test("--httpdns-ca names a directory: refused as bad usage naming the setting, its flag and what it is")
    func serviceCAFileNotRegular() async throws {
        let home = try ScratchDirectory("special")
        defer { home.remove() }
        let result = try await runIPDirect(
            ["resolve", "--provider", "system", "--httpdns-ca", home.path, "example.test"], home: home)
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.errors.contains("ca_file (--httpdns-ca) \(home.path): it is a directory"), "\(result.errors)")
    }

    @Test("the agent's --input as a FIFO is refused (it re-reads the file on change); probe's still reads a pipe")
    func fifoAgentInput() async throws {
        let home = try ScratchDirectory("special")
        defer { home.remove() }
        let fifo = home.file("targets.txt")
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try await runIPDirect(["agent", "--provider", "system", "--input", fifo], home: home)
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.errors.contains("\(fifo): it is a FIFO, not a regular file"), "\(result.errors)")

        // probe --input - still reads a pipe to its end: the list's bad line is named.
        let probe = try await ChildProcess.run(
            "/bin/sh",
            [
                "-c", "printf 'not a url at all\\n' | \"$0\" probe --provider system --input -",
                BuiltBinary.ipdirectPath,
            ],
            environment: ["HOME": home.path, "PATH": "/usr/bin:/bin"], seconds: 60)
        #expect(probe.status == 2, "\(probe.errors)")
        #expect(probe.errors.contains("cannot probe 'not a url at all'"), "\(probe.errors)")
    }

    @Test(
        "config init --force and probe --jsonl / --har over a device node: refused with a sentence, the node left as it was",
        arguments: [
            ["config", "init", "--force", "--config", "NODE"],
            ["probe", "--provider", "system", "--timeout", "1", "--jsonl", "NODE", "http://127.0.0.1:9/"],
            ["probe", "--provider", "system", "--timeout", "1", "--har", "NODE", "http://127.0.0.1:9/"],
        ])
    func deviceNodeLeftAlone(arguments: [String]) async throws {
        let home = try ScratchDirectory("special")
        defer { home.remove() }
        // A character device like /dev/full (1, 7), made in the scratch folder.
        let node = home.file("full")
        #expect(mknod(node, S_IFCHR | 0o666, dev_t((1 << 8) | 7)) == 0, "mknod needs root")
        #expect(chmod(node, 0o666) == 0)  // past the umask
        let result = try await runIPDirect(arguments.map { $0 == "NODE" ? node : $0 }, home: home)
        #expect(result.status != 0, "\(result.errors)")
        #expect(
            result.errors.contains("\(node): it is a character device, not a regular file"), "\(result.errors)")
        var info = stat()
        #expect(lstat(node, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFCHR && info.st_mode & 0o777 == 0o666)
    }

    @Test("config init --force through a symlink writes the file it names and keeps the link")
    func configInitThroughSymlink() async throws {
        let home = try ScratchDirectory("special")
        defer { home.remove() }
        let real = home.file("real.toml")
        try "old = 1\n".write(toFile: real, atomically: true, encoding: .utf8)
        let link = home.file("config.toml")
        #expect(symlink("real.toml", link) == 0)
        let result = try await runIPDirect(["config", "init", "--force", "--config", link], home: home)
        #expect(result.status == 0, "\(result.errors)")
        var info = stat()
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(try String(contentsOfFile: real, encoding: .utf8).contains("provider"))
    }
}

@Suite("config show over a hostile configuration")
struct ConfigShowEscapesTests {
    @Test("config show prints export_dir's control bytes (TOML \\u escapes) as escapes, never raw")
    func exportDirEscaped() async throws {
        let home = try ScratchDirectory("config-show")
        defer { home.remove() }
        let config = home.file("config.toml")
        try #"export_dir = "/tmp/x\u001b[2J\u009b31my\u2028z""#.write(toFile: config, atomically: true, encoding: .utf8)
        let result = try await runIPDirect(["config", "show", "--config", config], home: home)
        #expect(result.status == 0, "\(result.errors)")
        let line = result.output.split(separator: "\n").first { $0.hasPrefix("export_dir") }
        #expect(line?.contains("\\x1b[2J") == true, "\(result.output)")
        #expect(
            !result.output.unicodeScalars.contains {
                $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028
            })
    }
}

@Suite("config init with a bare file name")
struct ConfigInitBareNameTests {
    @Test("config init --config bare.toml writes bare.toml in the working directory")
    func bareName() async throws {
        let home = try ScratchDirectory("config-init")
        defer { home.remove() }
        let result = try await ChildProcess.run(
            "/bin/sh",
            ["-c", "cd \"$1\" && \"$0\" config init --config bare.toml", BuiltBinary.ipdirectPath, home.path],
            environment: ["HOME": home.path, "PATH": "/usr/bin:/bin"], seconds: 60)
        #expect(result.status == 0, "\(result.errors)")
        #expect(!result.errors.contains("doesn"), "\(result.errors)")
        #expect(try String(contentsOfFile: home.file("bare.toml"), encoding: .utf8).contains("provider"))
    }
}

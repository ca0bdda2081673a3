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
}

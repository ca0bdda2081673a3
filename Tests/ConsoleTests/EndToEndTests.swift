// The real binary under tmux, driven the way a person would: type a lab name, read the
// matrix, watch a TTL tick, open a trace, export, resize, quit, and find the terminal restored.
import Foundation
import Testing

/// A private tmux server (its own socket) running one pane of a given size.
final class TmuxPane {
    let socket = "ipdirect-e2e-\(UUID().uuidString.prefix(8))"
    let session = "e2e"

    static var available: Bool { Tmux.path != nil }

    init(width: Int, height: Int, command: String) throws {
        // The first command starts the tmux server, which would keep a captured pipe open for
        // good: nothing of it is captured.
        // remain-on-exit keeps the pane (and what the shell printed last) after the command ends.
        try tmux(
            [
                "new-session", "-d", "-s", session, "-x", String(width), "-y", String(height), command, ";",
                "set-option",
                "-t", session, "remain-on-exit", "on",
            ], capture: false)
    }

    /// Stops the tmux server and everything in it, and removes its socket.
    func close() {
        _ = try? tmux(["kill-server"], capture: false)
        unlink("/tmp/tmux-\(getuid())/\(socket)")
    }

    /// Runs one tmux command and returns what it printed.
    ///
    /// posix_spawn and waitpid rather than Foundation's Process: the first command forks the
    /// tmux server, which keeps inherited pipes open and confuses Process's exit monitoring.
    @discardableResult
    func tmux(_ arguments: [String], capture: Bool = true) throws -> String {
        let output = NSTemporaryDirectory() + "ipdirect-tmux-\(UUID().uuidString).out"
        defer { unlink(output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions, 1, capture ? output : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else of the test process: the tmux server outlives this call and would hold
        // other tests' sockets (NIO does not mark them close-on-exec), keeping their ports taken
        // and their connections open after their labs closed them.
        _ = closeFrom?(&actions, 3)
        let path = Tmux.path ?? "/usr/bin/tmux"
        let argv = ([path, "-L", socket, "-f", "/dev/null"] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // The test runner may ignore SIGHUP; tmux, its panes and ipdirect must not inherit that.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGHUP, SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, signalNumber) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard capture else { return "" }
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    /// The pane's text as a person sees it.
    func screen() -> String { (try? tmux(["capture-pane", "-p", "-t", session])) ?? "" }

    /// The pane's text with its scrollback, for what the shell printed after the console left.
    func screenAndHistory() -> String { (try? tmux(["capture-pane", "-p", "-S", "-200", "-t", session])) ?? "" }

    func send(_ keys: String...) throws { try tmux(["send-keys", "-t", session] + keys) }

    /// Types text literally (no key-name lookup).
    func type(_ text: String) throws { try tmux(["send-keys", "-t", session, "-l", text]) }

    func resize(width: Int, height: Int) throws {
        try tmux(["resize-window", "-t", session, "-x", String(width), "-y", String(height)])
    }

    func format(_ format: String) -> String {
        ((try? tmux(["display-message", "-p", "-t", session, format])) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// Waits until the screen satisfies `condition`; returns the last screen either way.
    @discardableResult
    func wait(seconds: Double = 20, until condition: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var text = screen()
        while !condition(text) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            text = screen()
        }
        return text
    }

    func wait(for needle: String, seconds: Double = 20) -> String {
        wait(seconds: seconds) { $0.contains(needle) }
    }
}

/// glibc's posix_spawn_file_actions_addclosefrom_np (2.34 and later), which Swift's Glibc module
/// does not export; nil where the C library lacks it.
private let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt)? = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt).self)
}()

enum Tmux {
    static let path: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// The `ipdirect` binary built beside the test bundle.
    static var binary: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("ipdirect").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/ipdirect").path
    }
}

@Suite("Console end to end under tmux", .serialized, .enabled(if: TmuxPane.available, "tmux is not installed"))
struct EndToEndTests {
    /// The shell line tmux runs: the console, then what the terminal looks like after it.
    static func command(directory: String, extra: String = "") -> String {
        "cd '\(directory)' && LANG=C.UTF-8 LC_ALL=C.UTF-8 '\(Tmux.binary)' --lab \(extra); "
            + "echo IPDIRECT-EXITED-$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e '-\\?icanon' -e '-\\?echo'"
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "ipdirect-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("probe, cache countdown, trace detail, export, resize, quit")
    func session() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pane = try TmuxPane(width: 120, height: 40, command: Self.command(directory: directory))
        defer { pane.close() }
        try #require(pane.wait(for: "Host or URL").contains("Host or URL"), "the console did not start")

        // Probe a lab name with several certificates chosen by SNI.
        try pane.type("sni-a.lab.test")
        try pane.send("Enter")
        func row(_ scenario: String, _ screen: String) -> String? {
            screen.split(separator: "\n").map(String.init).first { $0.contains(scenario + " ") }
        }
        // Wait for the settled matrix, not the first frame that shows a verdict.
        let matrix = pane.wait { screen in
            screen.contains("Verdict:") && row("direct-sni", screen)?.contains("ok 200") == true
                && row("direct-https", screen)?.contains("cert-name-mismatch") == true
        }
        let sni = row("direct-sni", matrix)
        let https = row("direct-https", matrix)
        #expect(sni?.contains("ok 200") == true, "direct-sni should work:\n\(matrix)")
        #expect(https?.contains("cert-name-mismatch") == true, "direct-https should fail on the name:\n\(matrix)")

        // The cache view: the entry's TTL drops as time passes.
        try pane.send("2")
        func ttl(_ screen: String) -> Int? {
            guard
                let row = screen.split(separator: "\n").first(where: {
                    $0.contains("sni-a.lab.test") && $0.contains(" v4 ")
                }),
                let match = row.firstMatch(of: /\s(\d+)s\s+httpdns/)
            else { return nil }
            return Int(match.1)
        }
        let before = try #require(
            ttl(pane.wait { ttl($0) != nil }), "no cache row for sni-a.lab.test:\n\(pane.screen())")
        let seen = Date()
        let after = try #require(
            ttl(pane.wait { (ttl($0) ?? before) < before }), "the TTL stayed at \(before):\n\(pane.screen())")
        // It ticks with the clock: never faster than the seconds that passed (however slow the machine).
        let elapsed = Int(Date().timeIntervalSince(seen).rounded(.up))
        #expect(before - after <= elapsed + 1, "TTL \(before) then \(after) after \(elapsed) s")

        // The traces view: open the direct-sni request and see its phases.
        try pane.send("3")
        _ = pane.wait(for: "SCENARIO")
        try pane.type("/direct-sni")
        try pane.send("Enter")
        try pane.send("Enter")
        // Wait for the whole frame: a capture can land while ncurses is still drawing it.
        let phases = ["DNS", "connect", "TLS", "first byte", "total", "Certificate chain", "Request headers"]
        let detail = pane.wait { screen in phases.allSatisfy { screen.contains($0) } }
        for phase in phases {
            #expect(detail.contains(phase), "detail lacks \(phase):\n\(detail)")
        }

        // Back to the whole list, then export it.
        try pane.send("Escape")
        try pane.send("Escape")
        _ = pane.wait { !$0.contains("filter:") }
        try pane.send("e")
        _ = pane.wait(for: "Exported")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        let jsonl = try #require(files.first { $0.hasSuffix(".jsonl") }, "no .jsonl in \(files)")
        let har = try #require(files.first { $0.hasSuffix(".har") }, "no .har in \(files)")
        #expect(jsonl.hasPrefix("ipdirect-"))
        let lineData = try String(contentsOfFile: directory + "/" + jsonl, encoding: .utf8).split(separator: "\n")
        #expect(!lineData.isEmpty)
        for line in lineData {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect((object?["attempts"] as? [Any])?.count == 4)
        }
        let harObject = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: directory + "/" + har)))
        let log = (harObject as? [String: Any])?["log"] as? [String: Any]
        #expect(log?["version"] as? String == "1.2")
        #expect(((log?["entries"] as? [Any])?.count ?? 0) >= 2)

        // Resizing redraws at once; too small says so.
        try pane.resize(width: 50, height: 12)
        #expect(pane.wait { $0.contains("Terminal too small: 50x12") }.contains("too small"))
        try pane.resize(width: 80, height: 24)
        let resized = pane.wait { $0.contains("3 Traces") && $0.contains("SCENARIO") && !$0.contains("too small") }
        #expect(resized.contains("3 Traces") && resized.contains("SCENARIO"), "after resize:\n\(resized)")

        // Quit: the shell's terminal is back (no alternate screen, line mode, echo).
        try pane.send("q")
        _ = pane.wait { $0.contains("Pane is dead") }
        let restored = pane.screenAndHistory()
        #expect(restored.contains("IPDIRECT-EXITED-0"), "\(restored)")
        #expect(restored.contains("\nicanon") && !restored.contains("-icanon"), "\(restored)")
        #expect(restored.contains("\necho") && !restored.contains("-echo"), "\(restored)")
        #expect(pane.format("#{alternate_on}") == "0")
    }

    @Test("SIGTERM leaves the terminal restored")
    func terminated() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pane = try TmuxPane(width: 100, height: 30, command: Self.command(directory: directory))
        defer { pane.close() }
        try #require(pane.wait(for: "Host or URL").contains("Host or URL"))
        let shell = pane.format("#{pane_pid}")
        let children = try String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
        let pid = try #require(children.split(separator: " ").first.flatMap { Int32($0) })
        kill(pid, SIGTERM)
        _ = pane.wait { $0.contains("Pane is dead") }
        let restored = pane.screenAndHistory()
        // 128 + SIGTERM, as a shell reports a program a signal stopped.
        #expect(restored.contains("IPDIRECT-EXITED-143"), "\(restored)")
        #expect(!restored.contains("-icanon") && !restored.contains("-echo"), "\(restored)")
        #expect(pane.format("#{alternate_on}") == "0")
    }

    @Test("c shows the command of a trace; run from the screen it ends as the trace did")
    func reproduce() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pane = try TmuxPane(width: 120, height: 40, command: Self.command(directory: directory))
        defer { pane.close() }
        try #require(pane.wait(for: "Host or URL").contains("Host or URL"), "the console did not start")
        // tmux keeps what an application copies with OSC 52 in a paste buffer.
        try pane.tmux(["set-option", "-s", "set-clipboard", "on"])

        // A host typed in UTF-8 shows as typed.
        try pane.type("bücher")
        #expect(pane.wait(for: "bücher").contains("bücher"))
        for _ in 0..<6 { try pane.send("BSpace") }

        try pane.type("sni-a.lab.test")
        try pane.send("Enter")
        _ = pane.wait(for: "Verdict:")
        try pane.send("3")
        _ = pane.wait(for: "SCENARIO")
        for (filter, works) in [("/direct-sni", true), ("/direct-https", false)] {
            try pane.type(filter)
            try pane.send("Enter")
            try pane.send("c")
            let screen = pane.wait { $0.contains("Reproduce:") && $0.contains("clipboard") }
            let rows = screen.split(separator: "\n", omittingEmptySubsequences: false).map {
                String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
            }
            let start = try #require(rows.firstIndex { $0.contains("Reproduce:") }, "no panel:\n\(screen)")
            let command = rows[(start + 1)...].prefix { !$0.isEmpty }.joined(separator: "\n")
            #expect(command.hasPrefix(works ? "curl " : "openssl s_client"), "\(screen)")
            let result = try Shell.run(command)
            if works {
                #expect(result.status == 0 && result.output.contains("HTTP/1.1 200"), "\(command)\n\(result.errors)")
            } else {
                #expect(
                    result.status != 0 && result.errors.contains("hostname mismatch"), "\(command)\n\(result.errors)")
            }
            #expect(screen.contains("clipboard"), "\(screen)")
            let buffer = (try? pane.tmux(["show-buffer"])) ?? ""
            #expect(buffer.hasPrefix(works ? "curl " : "openssl"), "tmux buffer: \(buffer)")
            try pane.send("Escape")
            _ = pane.wait { !$0.contains("Reproduce:") }
            try pane.send("Escape")
        }
        try pane.send("q")
        _ = pane.wait { $0.contains("Pane is dead") }
        #expect(pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("i on the dual-stack name lists both addresses with connect times; Enter probes one")
    func ipView() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pane = try TmuxPane(width: 120, height: 40, command: Self.command(directory: directory))
        defer { pane.close() }
        try #require(pane.wait(for: "Host or URL").contains("Host or URL"), "the console did not start")
        try pane.type("dual.lab.test")
        try pane.send("Enter")
        _ = pane.wait(for: "Verdict:")
        try pane.send("i")
        // A row per address, each with its connect time (a number of ms or s), and the SDK's order.
        func row(_ ip: String, _ screen: String) -> String? {
            screen.split(separator: "\n").map(String.init).first { $0.hasPrefix("  ") && $0.contains(" \(ip) ") }
        }
        func timed(_ ip: String, _ screen: String) -> Bool {
            row(ip, screen)?.contains(/\s\d+(\.\d+)?m?s\s/) == true
        }
        let ranked = pane.wait { screen in
            screen.contains("SDK order after ranking") && timed("127.0.0.1", screen) && timed("::1", screen)
        }
        #expect(timed("127.0.0.1", ranked) && timed("::1", ranked), "\(ranked)")
        #expect(row("127.0.0.1", ranked)?.contains("direct-sni") == true, "\(ranked)")
        // Enter probes direct-sni against the selected (fastest) address.
        try pane.send("Enter")
        let probed = pane.wait { $0.contains("direct-sni @ ") && $0.contains(": ok 200") }
        #expect(probed.contains(": ok 200"), "\(probed)")
        try pane.send("Escape")
        try pane.send("q")
        _ = pane.wait { $0.contains("Pane is dead") }
        #expect(pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("w watches a lab name; flipping the lab's fault shows up as a recorded verdict change")
    func watch() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pane = try TmuxPane(width: 120, height: 40, command: Self.command(directory: directory))
        defer { pane.close() }
        try #require(pane.wait(for: "Host or URL").contains("Host or URL"), "the console did not start")
        // The lab's LocalDNS has no answer for this name: only HTTPDNS makes it work.
        try pane.type("nxdomain.lab.test")
        try pane.send("Enter")
        _ = pane.wait(for: "Verdict:")
        try pane.send("w")
        func strip(_ scenario: String, _ screen: String) -> String? {
            screen.split(separator: "\n").map(String.init).first { $0.hasPrefix(" \(scenario) ") }
        }
        let working = pane.wait(seconds: 30) { screen in
            screen.contains("Watching nxdomain.lab.test") && screen.contains("round 2")
                && strip("direct-http", screen)?.contains("ok 200") == true
        }
        #expect(strip("direct-http", working)?.contains("ok 200") == true, "\(working)")
        #expect(working.contains("none yet: every round agreed"), "\(working)")

        // HTTPDNS answers 500 from now on, and the cache forgets what it held.
        // One F at a time: the next fault is counted from the one the lab reports in force.
        try pane.send("4")
        try pane.send("F")
        _ = pane.wait(for: "lab fault: slow")
        try pane.send("F")
        try #require(pane.wait(for: "lab fault: error").contains("lab fault: error"))
        try pane.send("2")
        try pane.send("D")
        _ = pane.wait(for: "y/n")
        try pane.send("y")
        try pane.send("1")
        let changed = pane.wait(seconds: 40) { $0.contains("direct-http: ok \u{2192} dns-failed") }
        #expect(changed.contains("direct-http: ok \u{2192} dns-failed"), "\(changed)")
        #expect(changed.contains("recommended: direct-http \u{2192} none"), "\(changed)")
        #expect(strip("direct-http", changed)?.contains("x") == true, "\(changed)")

        // The rounds export as JSON Lines, the change in them.
        try pane.send("e")
        _ = pane.wait(for: "watch rounds to")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        let export = try #require(files.first { $0.hasPrefix("ipdirect-watch-") }, "no export in \(files)")
        let lines = try String(contentsOfFile: directory + "/" + export, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 3)
        #expect(lines.contains { $0.contains("direct-http: ok \u{2192} dns-failed") })
        try pane.send("Escape")
        _ = pane.wait(for: "Stopped watching")
        try pane.send("q")
        _ = pane.wait { $0.contains("Pane is dead") }
        #expect(pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("without a terminal it points to ipdirect probe")
    func noTerminal() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tmux.binary)
        process.arguments = ["console"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Poll rather than waitUntilExit, which spins on Linux and holds one of the test threads.
        for _ in 0..<200 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { process.terminate() }
        try #require(!process.isRunning, "ipdirect console kept running without a terminal")
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 2)
        #expect(message.contains("ipdirect probe"))
    }
}

/// Runs shell text with /bin/sh, as a person pasting a command would (ProbeTests has the same
/// small runner; the two test targets share no module to hold it).
enum Shell {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    static func run(_ command: String) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
            errors: String(decoding: errData, as: UTF8.self))
    }
}

// The real binary under tmux, driven the way a person would: type a lab name, read the
// matrix, watch a TTL tick, open a trace, export, resize, quit, and find the terminal restored.
import Foundation
import TestSupport
import Testing

/// A private tmux server (its own socket) running one pane of a given size.
final class TmuxPane: Sendable {
    let socket = Tmux.socketPrefix + UUID().uuidString.prefix(8)
    let session = "e2e"

    static var available: Bool { Tmux.path != nil }

    /// When the pane was started, for how long a wait ran.
    private let started = ContinuousClock.now

    init(width: Int, height: Int, command: String) async throws {
        Tmux.startWatchdog()
        // The first command starts the tmux server, which would keep a captured pipe open for
        // good: nothing of its output is captured (its errors go to a file, which the server,
        // a daemon with its standard streams on /dev/null, does not keep).
        // remain-on-exit keeps the pane (and what the shell printed last) after the command ends.
        let arguments = [
            "new-session", "-d", "-s", session, "-x", String(width), "-y", String(height), command, ";",
            "set-option", "-t", session, "remain-on-exit", "on",
        ]
        let child = try ChildProcess(
            Tmux.path ?? "/usr/bin/tmux", ["-L", socket, "-f", "/dev/null"] + arguments, captureOutput: false)
        // A pane that did not start would otherwise show as a blank screen until a wait ran out.
        let status = try await child.exitStatus(within: 30)
        guard status == 0 else {
            close()
            throw TmuxFailure(
                "tmux new-session (socket \(socket)) "
                    + (status.map { "ended with status \($0): \(child.errorsText)" } ?? "did not end within 30 s"))
        }
    }

    /// Stops the tmux server and everything in it, and removes its socket. Returns at once (it
    /// runs from `defer`): the server is stopped and its socket removed in the background.
    func close() {
        let socket = socket
        let stopper = try? ChildProcess(
            Tmux.path ?? "/usr/bin/tmux", ["-L", socket, "-f", "/dev/null", "kill-server"], captureOutput: false,
            errors: .discarded)
        Task.detached {
            _ = try? await stopper?.exitStatus(within: 10)
            unlink(Tmux.socketDirectory + "/" + socket)
        }
    }

    /// Runs one tmux command and returns what it printed.
    @discardableResult
    func tmux(
        _ arguments: [String], capture: Bool = true, errors: ChildProcess.Errors = .discarded
    ) async throws -> String {
        let child = try ChildProcess(
            Tmux.path ?? "/usr/bin/tmux", ["-L", socket, "-f", "/dev/null"] + arguments, captureOutput: capture,
            errors: errors)
        _ = try await child.exitStatus(within: 30)
        return capture ? child.outputText : ""
    }

    /// The pane's text as a person sees it.
    func screen() async -> String { (try? await tmux(["capture-pane", "-p", "-t", session])) ?? "" }

    /// The pane's text with its scrollback, for what the shell printed after the console left.
    func screenAndHistory() async -> String {
        (try? await tmux(["capture-pane", "-p", "-S", "-200", "-t", session])) ?? ""
    }

    func send(_ keys: String...) async throws { try await tmux(["send-keys", "-t", session] + keys) }

    /// Types text literally (no key-name lookup).
    func type(_ text: String) async throws { try await tmux(["send-keys", "-t", session, "-l", text]) }

    func resize(width: Int, height: Int) async throws {
        try await tmux(["resize-window", "-t", session, "-x", String(width), "-y", String(height)])
    }

    func format(_ format: String) async -> String {
        ((try? await tmux(["display-message", "-p", "-t", session, format])) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// Waits until the screen satisfies `condition` and has settled (the same on two captures in a
    /// row, so a half-redrawn screen is never read); returns the last screen either way.
    ///
    /// - Parameter settled: wait for the screen to be the same on two captures in a row as well;
    ///   false for a line that keeps moving (a clock, a rate), which may never hold still.
    ///
    /// When the condition does not hold in time, it records an issue at the caller with what the
    /// pane showed and what ran in it (`diagnosis`): a wait that runs out is the first sign of a
    /// test gone wrong, and the screen is what tells why.
    @discardableResult
    func wait(
        seconds: Double = 20, settled: Bool = true, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: (String) -> Bool
    ) async -> String {
        let what = "what the test waits for"
        return await wait(seconds: seconds, settled: settled, what: what, at: sourceLocation, until: condition)
    }

    /// Waits until the screen shows `needle` and has settled (as `wait(seconds:until:)`).
    @discardableResult
    func wait(
        for needle: String, seconds: Double = 20, sourceLocation: SourceLocation = #_sourceLocation
    ) async
        -> String
    {
        await wait(seconds: seconds, settled: true, what: "'\(needle)'", at: sourceLocation) { $0.contains(needle) }
    }

    private func wait(
        seconds: Double, settled: Bool, what: String, at sourceLocation: SourceLocation,
        until condition: (String) -> Bool
    ) async -> String {
        let begun = ContinuousClock.now
        let deadline = Date().addingTimeInterval(seconds)
        var previous: String?
        var text = await screen()
        while !(condition(text) && (!settled || text == previous)) && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(condition(text) ? 50 : 100))
            previous = text
            text = await screen()
        }
        if !condition(text) {
            let heading = "The pane did not show \(what) within \(Self.seconds(since: begun))."
            Issue.record(Comment(rawValue: await diagnosis(heading, last: text)), sourceLocation: sourceLocation)
        }
        return text
    }

    /// Waits until the pane's command has ended (tmux's `pane_dead`, set once the terminal has
    /// closed and everything written to it is on the screen). Not the "Pane is dead" line: tmux
    /// 3.3a draws it only once it has collected the command's exit status, and a shell it had not
    /// collected 20 s after its end (a zombie) was seen often. Records an issue, as `wait` does,
    /// when the command has not ended in time.
    func waitForExit(seconds: Double = 20, sourceLocation: SourceLocation = #_sourceLocation) async {
        let begun = ContinuousClock.now
        let deadline = begun + .seconds(seconds)
        while await format("#{pane_dead}") != "1" {
            guard ContinuousClock.now < deadline else {
                let heading = "The pane's command did not end within \(Self.seconds(since: begun))."
                let report = await diagnosis(heading, last: await screen())
                Issue.record(Comment(rawValue: report), sourceLocation: sourceLocation)
                return
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// What a failed wait reports: the last screen, the pane's scrollback (what the console
    /// printed to standard error before or after its screen, and the shell's line with its exit
    /// status), whether the pane's command has ended and how, and each process under the pane
    /// (state, CPU time, where its threads wait), so a console that is stuck, busy, crashed or
    /// never started can be told apart from the message alone.
    func diagnosis(_ heading: String, last: String) async -> String {
        var lines = [
            heading,
            "The pane was started \(Self.seconds(since: started)) ago (tmux socket \(socket), binary \(Tmux.binary)).",
        ]
        // Its errors too: a server that is gone says so here.
        let state =
            (try? await tmux(
                [
                    "display-message", "-p", "-t", session,
                    "pane dead: #{pane_dead}, exit status: #{pane_dead_status}, shell pid: #{pane_pid}, size: #{pane_width}x#{pane_height}",
                ], errors: .toOutput)) ?? "tmux did not answer"
        lines.append("tmux: " + state.trimmingCharacters(in: .whitespacesAndNewlines))
        if let shell = pid_t(await format("#{pane_pid}")) {
            let processes = [shell] + ProcessStatus.descendants(of: shell)
            lines.append("Processes under the pane:")
            lines += processes.map { "  " + ProcessStatus.description(of: $0) }
        }
        // Without the blank rows below the text.
        func trimmed(_ screen: String) -> String { screen.replacing(/\s+$/, with: "") }
        lines.append("Last screen:\n" + trimmed(last))
        lines.append("Screen and scrollback now:\n" + trimmed(await screenAndHistory()))
        return lines.joined(separator: "\n")
    }

    private static func seconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = (ContinuousClock.now - start).components
        return String(format: "%.1f s", Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }
}

/// A tmux command that failed, in tmux's words.
struct TmuxFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Tmux {
    static let path: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Where tmux keeps the sockets named by `-L`.
    static let socketDirectory = "/tmp/tmux-\(getuid())"

    /// The start of the socket name of every tmux server this test process starts.
    static let socketPrefix = "ipdirect-e2e-\(getpid())-"

    /// Starts, once per test process, a shell that outlives it and then ends what it left: when
    /// the test process dies without closing its panes (killed, crashed, a run stopped midway),
    /// each of its tmux servers would keep running with a console in it (seven consoles ran for
    /// 93 minutes after a killed run). The shell notices within a second (its parent is then no
    /// longer the test process), kills each pane's process group (the shell and the console,
    /// even one that no longer answers the SIGHUP tmux would send) and then the server. It
    /// ignores SIGINT and SIGHUP: a Ctrl-C on `swift test` reaches the whole process group, and
    /// the cleanup is needed then most of all.
    static func startWatchdog() { _ = watchdog }

    private static let watchdog: ChildProcess? = {
        let script = #"""
            trap '' INT HUP
            test=$1 directory=$2 prefix=$3 tmux=$4
            while read -r _ _ _ parent _ < /proc/$$/stat && [ "$parent" = "$test" ]; do sleep 1; done
            for socket in "$directory/$prefix"*; do
              [ -S "$socket" ] || continue
              for pane in $("$tmux" -S "$socket" list-panes -a -F '#{pane_pid}' 2>/dev/null); do
                kill -KILL "-$pane" 2>/dev/null
              done
              "$tmux" -S "$socket" kill-server 2>/dev/null
              rm -f "$socket"
            done
            """#
        // Never ended by the test process: its ChildProcess lives as long as the process.
        return try? ChildProcess(
            "/bin/sh",
            [
                "-c", script, "tmux-watchdog", String(getpid()), socketDirectory, socketPrefix, path ?? "/usr/bin/tmux",
            ],
            captureOutput: false, errors: .discarded)
    }()

    /// The `ipdirect` binary under test (`BuiltBinary.ipdirectPath`: `IPDIRECT_BINARY`, else the
    /// one built beside the test bundle).
    static var binary: String { BuiltBinary.ipdirectPath }
}

@Suite("Console end to end under tmux", .serialized, .enabled(if: TmuxPane.available, "tmux is not installed"))
struct EndToEndTests {
    /// The shell line tmux runs: the console, then what the terminal looks like after it.
    static func command(directory: String, extra: String = "") -> String {
        "cd '\(directory)' && LANG=C.UTF-8 LC_ALL=C.UTF-8 '\(Tmux.binary)' --lab \(extra); "
            + "echo IPDIRECT-EXITED-$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e '-\\?icanon' -e '-\\?echo'"
    }

    @Test("probe, cache countdown, trace detail, export, resize, quit")
    func session() async throws {
        let terminal = try await TmuxTerminal.console()
        defer { terminal.close() }
        let (pane, directory) = (terminal.pane, terminal.directory)

        // Probe a lab name with several certificates chosen by SNI: p opens the host line.
        try await pane.send("p")
        try await pane.type("sni-a.lab.test")
        try await pane.send("Enter")
        func row(_ scenario: String, _ screen: String) -> String? {
            screen.split(separator: "\n").map(String.init).first { $0.contains(scenario + " ") }
        }
        // Wait for the settled matrix, not the first frame that shows a verdict.
        let matrix = await pane.wait { screen in
            screen.contains("Verdict:") && row("direct-sni", screen)?.contains("ok 200") == true
                && row("direct-https", screen)?.contains("cert-name-mismatch") == true
        }
        let sni = row("direct-sni", matrix)
        let https = row("direct-https", matrix)
        #expect(sni?.contains("ok 200") == true, "direct-sni should work:\n\(matrix)")
        #expect(https?.contains("cert-name-mismatch") == true, "direct-https should fail on the name:\n\(matrix)")

        // The cache view: the entry's TTL drops as time passes.
        try await pane.send("2")
        func ttl(_ screen: String) -> Int? {
            guard
                let row = screen.split(separator: "\n").first(where: {
                    $0.contains("sni-a.lab.test") && $0.contains(" v4 ")
                }),
                let match = row.firstMatch(of: /\s(\d+)s\s+httpdns/)
            else { return nil }
            return Int(match.1)
        }
        let first = await pane.wait { ttl($0) != nil }
        let before = try #require(ttl(first), "no cache row for sni-a.lab.test:\n\(first)")
        let seen = Date()
        let later = await pane.wait { (ttl($0) ?? before) < before }
        let after = try #require(ttl(later), "the TTL stayed at \(before):\n\(later)")
        // It ticks with the clock: never faster than the seconds that passed (however slow the machine).
        let elapsed = Int(Date().timeIntervalSince(seen).rounded(.up))
        #expect(before - after <= elapsed + 1, "TTL \(before) then \(after) after \(elapsed) s")

        // The traces view: open the direct-sni request and see its phases.
        try await pane.send("3")
        _ = await pane.wait(for: "SCENARIO")
        try await pane.type("/direct-sni")
        try await pane.send("Enter")
        try await pane.send("Enter")
        // Wait for the whole frame: a capture can land while ncurses is still drawing it.
        let phases = ["DNS", "connect", "TLS", "first byte", "total", "Certificate chain", "Request headers"]
        let detail = await pane.wait { screen in phases.allSatisfy { screen.contains($0) } }
        for phase in phases {
            #expect(detail.contains(phase), "detail lacks \(phase):\n\(detail)")
        }

        // Back to the whole list, then export it.
        try await pane.send("Escape")
        try await pane.send("Escape")
        _ = await pane.wait { !$0.contains("filter:") }
        try await pane.send("e")
        _ = await pane.wait(for: "Exported")
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
        try await pane.resize(width: 50, height: 12)
        #expect(await pane.wait { $0.contains("Terminal too small: 50x12") }.contains("too small"))
        try await pane.resize(width: 80, height: 24)
        let resized = await pane.wait {
            $0.contains("3 Traces") && $0.contains("SCENARIO") && !$0.contains("too small")
        }
        #expect(resized.contains("3 Traces") && resized.contains("SCENARIO"), "after resize:\n\(resized)")

        // Quit: the shell's terminal is back (no alternate screen, line mode, echo).
        try await pane.send("q")
        await pane.waitForExit()
        let restored = await pane.screenAndHistory()
        #expect(restored.contains("IPDIRECT-EXITED-0"), "\(restored)")
        #expect(restored.contains("\nicanon") && !restored.contains("-icanon"), "\(restored)")
        #expect(restored.contains("\necho") && !restored.contains("-echo"), "\(restored)")
        #expect(await pane.format("#{alternate_on}") == "0")
    }

    @Test("SIGTERM leaves the terminal restored")
    func terminated() async throws {
        let terminal = try await TmuxTerminal.console(width: 100, height: 30)
        defer { terminal.close() }
        let pane = terminal.pane
        let shell = try #require(pid_t(await pane.format("#{pane_pid}")))
        // The shell's first child: the console it started.
        let pid = try #require(ProcessStatus.descendants(of: shell).first)
        kill(pid, SIGTERM)
        await pane.waitForExit()
        let restored = await pane.screenAndHistory()
        // 128 + SIGTERM, as a shell reports a program a signal stopped.
        #expect(restored.contains("IPDIRECT-EXITED-143"), "\(restored)")
        #expect(!restored.contains("-icanon") && !restored.contains("-echo"), "\(restored)")
        #expect(await pane.format("#{alternate_on}") == "0")
    }

    @Test("c shows the command of a trace; run from the screen it ends as the trace did")
    func reproduce() async throws {
        let terminal = try await TmuxTerminal.console()
        defer { terminal.close() }
        let pane = terminal.pane
        try await pane.send("p")  // the host line opens on p; until then keys are obeyed
        // tmux keeps what an application copies with OSC 52 in a paste buffer.
        try await pane.tmux(["set-option", "-s", "set-clipboard", "on"])

        // A host typed in UTF-8 shows as typed.
        try await pane.type("bücher")
        #expect(await pane.wait(for: "bücher").contains("bücher"))
        for _ in 0..<6 { try await pane.send("BSpace") }

        try await pane.type("sni-a.lab.test")
        try await pane.send("Enter")
        _ = await pane.wait(for: "Verdict:")
        try await pane.send("3")
        _ = await pane.wait(for: "SCENARIO")
        for (filter, works) in [("/direct-sni", true), ("/direct-https", false)] {
            try await pane.type(filter)
            try await pane.send("Enter")
            try await pane.send("c")
            let screen = await pane.wait { $0.contains("Reproduce:") && $0.contains("clipboard") }
            let rows = screen.split(separator: "\n", omittingEmptySubsequences: false).map {
                String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
            }
            let start = try #require(rows.firstIndex { $0.contains("Reproduce:") }, "no panel:\n\(screen)")
            let command = rows[(start + 1)...].prefix { !$0.isEmpty }.joined(separator: "\n")
            #expect(command.hasPrefix(works ? "curl " : "openssl s_client"), "\(screen)")
            let result = try await ChildProcess.shell(command)
            if works {
                #expect(result.status == 0 && result.output.contains("HTTP/1.1 200"), "\(command)\n\(result.errors)")
            } else {
                #expect(
                    result.status != 0 && result.errors.contains("hostname mismatch"), "\(command)\n\(result.errors)")
            }
            #expect(screen.contains("clipboard"), "\(screen)")
            let buffer = (try? await pane.tmux(["show-buffer"])) ?? ""
            #expect(buffer.hasPrefix(works ? "curl " : "openssl"), "tmux buffer: \(buffer)")
            try await pane.send("Escape")
            _ = await pane.wait { !$0.contains("Reproduce:") }
            try await pane.send("Escape")
        }
        try await pane.send("q")
        await pane.waitForExit()
        #expect(await pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("i on the dual-stack name lists both addresses with connect times; Enter probes one")
    func ipView() async throws {
        let terminal = try await TmuxTerminal.console()
        defer { terminal.close() }
        let pane = terminal.pane
        try await pane.send("p")  // the host line opens on p; until then keys are obeyed
        try await pane.type("dual.lab.test")
        try await pane.send("Enter")
        _ = await pane.wait(for: "Verdict:")
        try await pane.send("i")
        // A row per address, each with its connect time (a number of ms or s), and the SDK's order.
        func row(_ ip: String, _ screen: String) -> String? {
            screen.split(separator: "\n").map(String.init).first { $0.hasPrefix("  ") && $0.contains(" \(ip) ") }
        }
        func timed(_ ip: String, _ screen: String) -> Bool {
            row(ip, screen)?.contains(/\s\d+(\.\d+)?m?s\s/) == true
        }
        let ranked = await pane.wait { screen in
            screen.contains("SDK order after ranking") && timed("127.0.0.1", screen) && timed("::1", screen)
        }
        #expect(timed("127.0.0.1", ranked) && timed("::1", ranked), "\(ranked)")
        #expect(row("127.0.0.1", ranked)?.contains("direct-sni") == true, "\(ranked)")
        // Enter probes direct-sni against the selected (fastest) address.
        try await pane.send("Enter")
        let probed = await pane.wait { $0.contains("direct-sni @ ") && $0.contains(": ok 200") }
        #expect(probed.contains(": ok 200"), "\(probed)")
        try await pane.send("Escape")
        try await pane.send("q")
        await pane.waitForExit()
        #expect(await pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("w watches a lab name; flipping the lab's fault shows up as a recorded verdict change")
    func watch() async throws {
        let terminal = try await TmuxTerminal.console()
        defer { terminal.close() }
        let (pane, directory) = (terminal.pane, terminal.directory)
        // The lab's LocalDNS has no answer for this name: only HTTPDNS makes it work.
        try await pane.send("p")
        try await pane.type("nxdomain.lab.test")
        try await pane.send("Enter")
        _ = await pane.wait(for: "Verdict:")
        try await pane.send("w")
        func strip(_ scenario: String, _ screen: String) -> String? {
            screen.split(separator: "\n").map(String.init).first { $0.hasPrefix(" \(scenario) ") }
        }
        let working = await pane.wait(seconds: 30) { screen in
            screen.contains("Watching nxdomain.lab.test") && screen.contains("round 2")
                && strip("direct-http", screen)?.contains("ok 200") == true
        }
        #expect(strip("direct-http", working)?.contains("ok 200") == true, "\(working)")
        #expect(working.contains("none yet: every round agreed"), "\(working)")

        // HTTPDNS answers 500 from now on, and the cache forgets what it held.
        // One F at a time: the next fault is counted from the one the lab reports in force.
        try await pane.send("4")
        try await pane.send("F")
        _ = await pane.wait(for: "lab fault: slow")
        try await pane.send("F")
        try #require(await pane.wait(for: "lab fault: error").contains("lab fault: error"))
        try await pane.send("2")
        try await pane.send("D")
        _ = await pane.wait(for: "y/n")
        try await pane.send("y")
        try await pane.send("1")
        let changed = await pane.wait(seconds: 40) { $0.contains("direct-http: ok \u{2192} dns-failed") }
        #expect(changed.contains("direct-http: ok \u{2192} dns-failed"), "\(changed)")
        #expect(changed.contains("recommended: direct-http \u{2192} none"), "\(changed)")
        #expect(strip("direct-http", changed)?.contains("x") == true, "\(changed)")

        // The rounds export as JSON Lines, the change in them.
        try await pane.send("e")
        _ = await pane.wait(for: "watch rounds to")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        let export = try #require(files.first { $0.hasPrefix("ipdirect-watch-") }, "no export in \(files)")
        let lines = try String(contentsOfFile: directory + "/" + export, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 3)
        #expect(lines.contains { $0.contains("direct-http: ok \u{2192} dns-failed") })
        try await pane.send("Escape")
        _ = await pane.wait(for: "Stopped watching")
        try await pane.send("q")
        await pane.waitForExit()
        #expect(await pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }

    @Test("without a terminal it points to ipdirect probe")
    func noTerminal() async throws {
        let child = try ChildProcess(Tmux.binary, ["console"])
        let status = try await child.exitStatus(within: 60)
        try #require(status != nil, "ipdirect console kept running without a terminal")
        #expect(status == 2)
        #expect(child.errorsText.contains("ipdirect probe"))
    }
}

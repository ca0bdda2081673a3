// `ipdirect agent` as a user runs it, through the real binary with --lab: JSON log lines,
// SIGHUP and file changes reload the targets, a broken or deleted file keeps the last good
// list, SIGTERM ends it cleanly (exit 0, exporters flushed).
import Foundation
import Lab
import NameResolution
import TestSupport
import Testing

let ipdirectBinary = BuiltBinary.ipdirect

/// One `ipdirect agent` process; its log lines (JSON) as they arrive. Started through TestSupport's
/// ChildProcess (posix_spawn): Foundation's Process.run crashed under the parallel suite.
final class AgentRun: @unchecked Sendable {
    let child: ChildProcess
    let scratch: ScratchDirectory

    /// - Parameters:
    ///   - arguments: after `ipdirect agent --lab --log-format json` (without `--lab` when `lab` is false).
    ///   - scratch: its configuration and cache directory.
    ///   - descriptorLimit: the agent's RLIMIT_NOFILE (`ulimit -n`, then exec: the pid is the agent's).
    ///   - lab: whether the agent starts a lab of its own (with no URL, the lab's names are its targets).
    ///   - secrets: environment variables besides the scratch directories (`IPDIRECT_HTTPDNS_SECRET`).
    init(
        _ arguments: [String], scratch: ScratchDirectory, descriptorLimit: Int? = nil, lab: Bool = true,
        secrets: [String: String] = [:]
    ) throws {
        self.scratch = scratch
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        environment["XDG_CONFIG_HOME"] = scratch.path
        environment["XDG_CACHE_HOME"] = scratch.path
        environment.merge(secrets) { $1 }
        let command = [ipdirectBinary!, "agent"] + (lab ? ["--lab"] : []) + ["--log-format", "json"] + arguments
        if let descriptorLimit {
            child = try ChildProcess(
                "/bin/sh", ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\""] + command,
                environment: environment, captureOutput: false, errors: .captured)
        } else {
            child = try ChildProcess(
                command[0], Array(command.dropFirst()), environment: environment, captureOutput: false,
                errors: .captured)
        }
    }

    /// The port `--metrics-listen HOST:0` got, once the log has said it.
    func metricsPort() async -> Int? {
        guard await eventually(within: 60, { !events("metrics-listening").isEmpty }),
            let message = events("metrics-listening").first?["message"] as? String
        else { return nil }
        return message.split(separator: ":").last.flatMap { Int($0) }
    }

    /// Every complete log line so far; a line that is not JSON is kept as a `not-json` event.
    var all: [[String: Any]] {
        let text = child.errorsText
        guard let end = text.lastIndex(of: "\n") else { return [] }
        return text[..<end].split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                ?? ["event": "not-json", "message": String(line)]
        }
    }

    /// The log lines of one event kind.
    func events(_ kind: String) -> [[String: Any]] { all.filter { $0["event"] as? String == kind } }

    func signal(_ number: Int32) { child.signal(number) }

    /// Waits for the exit (at most `seconds`, then kills it); the status, nil when killed.
    func exitStatus(within seconds: Double) async -> Int32? {
        (try? await child.exitStatus(within: seconds)) ?? nil
    }
}

@Suite("ipdirect agent")
struct AgentCommandTests {
    @Test(
        "SIGHUP and edits reload the list, a broken or deleted file keeps it, SIGTERM stops cleanly",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary was not built"))
    func lifecycle() async throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let targets = scratch.file("targets.txt")
        try "https://plain.lab.test/\n".write(toFile: targets, atomically: true, encoding: .utf8)
        let jsonl = scratch.file("probes.jsonl")
        // Every exporter on, the collector down: none of it may hold up probing or the stop.
        let collector = RefusingPort()
        defer { collector.close() }
        let run = try AgentRun(
            [
                "--input", targets, "--interval", "1", "--metrics-listen", "127.0.0.1:0", "--label", "region=lab",
                "--jsonl", jsonl, "--otlp-endpoint", "http://127.0.0.1:\(collector.port)",
            ],
            scratch: scratch)

        #expect(await eventually { !run.events("round-finished").isEmpty })
        #expect(run.all.allSatisfy { $0["event"] as? String != "not-json" && $0["time"] != nil && $0["level"] != nil })
        let port = try #require(await run.metricsPort())
        let scrape = await fetch("http://127.0.0.1:\(port)/metrics")
        #expect(scrape?.body.contains("ipdirect_probe_outcomes_total{target=\"plain.lab.test:") == true)
        #expect(scrape?.body.contains("region=\"lab\"") == true)

        try "https://plain.lab.test/\nhttps://sni-a.lab.test/\n".write(
            toFile: targets, atomically: true, encoding: .utf8)
        run.signal(SIGHUP)
        #expect(
            await eventually {
                run.events("targets-reloaded").contains { ($0["message"] as? String)?.contains("2 targets") == true }
            })

        try "https://plain.lab.test/\nhttps://bad host/\n".write(toFile: targets, atomically: true, encoding: .utf8)
        #expect(
            await eventually {
                run.events("targets-kept").contains { ($0["message"] as? String)?.contains("line 2") == true }
            })
        try FileManager.default.removeItem(atPath: targets)
        #expect(
            await eventually {
                run.events("targets-kept").contains { ($0["message"] as? String)?.contains("does not exist") == true }
            })
        let rounds = run.events("round-finished").count
        #expect(await eventually { run.events("round-finished").count > rounds })
        #expect(
            (run.events("round-finished").last?["message"] as? String)?.contains("2 targets probed") == true)

        let stopping = Date()
        run.signal(SIGTERM)
        let status = await run.exitStatus(within: 60)
        let seconds = Date().timeIntervalSince(stopping)
        #expect(status == 0)
        #expect(!run.events("agent-stopped").isEmpty)
        let records = try Data(contentsOf: URL(fileURLWithPath: jsonl)).split(separator: 0x0A)
        #expect(records.count >= run.events("round-finished").count)
        #expect(records.allSatisfy { (try? JSONSerialization.jsonObject(with: $0)) is [String: Any] })
        print("agent stopped \(String(format: "%.2f", seconds)) s after SIGTERM")
    }

    @Test(
        "[[agent.targets]] in the configuration file are probed with their settings; a bad one is refused",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary was not built"))
    func configuredTargets() async throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.file("ipdirect"), withIntermediateDirectories: true)
        let config = scratch.file("ipdirect/config.toml")
        try """
        [[agent.targets]]
        url = "https://sni-a.lab.test/"
        scenarios = ["direct-sni"]
        method = "HEAD"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let jsonl = scratch.file("probes.jsonl")
        let run = try AgentRun(["--interval", "1", "--jsonl", jsonl], scratch: scratch)
        #expect(await eventually { !run.events("round-finished").isEmpty })
        #expect((run.events("round-finished").first?["message"] as? String)?.contains("1 targets probed") == true)
        run.signal(SIGTERM)
        #expect(await run.exitStatus(within: 60) == 0)
        let records = try Data(contentsOf: URL(fileURLWithPath: jsonl)).split(separator: 0x0A)
        let record = try #require(
            try records.first.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(record["host"] as? String == "sni-a.lab.test")
        let attempts = record["attempts"] as? [[String: Any]] ?? []
        #expect(!attempts.isEmpty && attempts.allSatisfy { $0["scenario"] as? String == "direct-sni" })

        try """
        [[agent.targets]]
        url = "https://sni-a.lab.test/"
        method = "POST"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let refused = try AgentRun(["--interval", "1"], scratch: scratch)
        #expect(await refused.exitStatus(within: 30) == 2)
    }

    @Test(
        "--metrics-listen and no URL: a pure on-demand prober; /probe?target= probes, /metrics answers, SIGTERM stops it",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary was not built"))
    func onDemandOnly() async throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        // The lab runs here; the agent knows only its HTTPDNS service and CA, as a provider and a CA file.
        let lab = try await Lab.start()
        let e = lab.endpoints
        let run = try AgentRun(
            [
                "--metrics-listen", "127.0.0.1:0", "--interval", "1", "--provider", "alicloud", "--endpoint",
                e.httpdns, "--account", e.account, "--cacert", e.ca,
            ], scratch: scratch, lab: false, secrets: ["IPDIRECT_HTTPDNS_SECRET": e.secret])
        let port = try #require(await run.metricsPort(), "\(run.child.errorsText)")
        let target = lab.url("sni-a.lab.test").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let probe = await fetch("http://127.0.0.1:\(port)/probe?target=\(target)&scenario=direct-sni", timeout: 30)
        #expect(probe?.status == 200)
        #expect(sample(probe?.body ?? "", "probe_success") == 1, "\(probe?.body ?? "no answer")")
        #expect(lab.originRequests().contains { $0.host.hasPrefix("sni-a.lab.test") })
        // Two seconds at --interval 1: it probed nothing of its own, and /metrics says so.
        try await Task.sleep(for: .seconds(2))
        let metrics = await fetch("http://127.0.0.1:\(port)/metrics")
        #expect(metrics?.status == 200)
        #expect(total(metrics?.body ?? "", "ipdirect_probe_outcomes_total") == 0, "\(metrics?.body ?? "")")
        #expect(lab.originRequests().count == 1, "\(lab.originRequests())")
        run.signal(SIGTERM)
        #expect(await run.exitStatus(within: 60) == 0)
        #expect(await fetch("http://127.0.0.1:\(port)/metrics", timeout: 2) == nil, "the listener outlived the agent")
        try await lab.shutdown()
    }

    @Test("bad settings are refused with a sentence and exit 2", .enabled(if: ipdirectBinary != nil))
    func badSettings() async throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        for arguments in [
            ["--label", "target=x", "https://plain.lab.test/"], ["--rotate", "big", "https://plain.lab.test/"],
            ["--input", scratch.file("missing.txt")], ["--otlp-endpoint", "ftp://x", "https://plain.lab.test/"],
            ["--header", "no colon", "https://plain.lab.test/"],
        ] {
            let run = try AgentRun(arguments, scratch: scratch)
            #expect(await run.exitStatus(within: 30) == 2)
        }
    }
}

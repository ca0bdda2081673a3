// `ipdirect probe` over a batch, through the real binary against the lab: results arrive while
// the batch runs, Ctrl-C leaves valid files and exits 130, --resume skips what is done.
import Foundation
import Lab
import TestSupport
import Testing

/// The `ipdirect` binary built beside the test bundle, when the build made one.
private let ipdirectBinary = BuiltBinary.ipdirect

/// One `ipdirect probe` run against a lab started by the test, in a scratch directory of its own.
private final class ProbeRun: Sendable {
    let child: ChildProcess
    let scratch: ScratchDirectory

    /// Starts `ipdirect probe` resolving through the lab's HTTPDNS service and trusting its CA,
    /// with `input` on its standard input.
    init(_ lab: Lab, _ arguments: [String], input: String? = nil) throws {
        scratch = try ScratchDirectory("batch")
        let directory = scratch.path
        let e = lab.endpoints
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        environment["XDG_CONFIG_HOME"] = directory
        environment["XDG_CACHE_HOME"] = directory
        environment["IPDIRECT_HTTPDNS_SECRET"] = e.secret
        child = try ChildProcess(
            ipdirectBinary!,
            ["probe", "--provider", "alicloud", "--endpoint", e.httpdns, "--account", e.account, "--cacert", e.ca]
                + arguments,
            environment: environment, directory: directory, input: input, errors: .discarded)
    }

    deinit { scratch.remove() }

    func path(_ name: String) -> String { scratch.file(name) }

    /// The next line of standard output; nil at its end.
    func nextLine() async throws -> String? { try await child.nextLine() }

    /// The rest of standard output, once it has exited (at most a minute).
    func rest() async throws -> Data {
        _ = try await child.exitStatus()
        return child.output
    }

    /// Waits for the exit (at most `seconds`, then kills it) and returns the status; nil when killed.
    func exitStatus(within seconds: Double = 60) async throws -> Int32? {
        try await child.exitStatus(within: seconds)
    }
}

/// Each line of a JSON Lines file parsed; nil when one does not parse.
private func jsonLines(_ path: String) -> [[String: Any]]? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    var objects: [[String: Any]] = []
    for line in data.split(separator: 0x0A) {
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { return nil }
        objects.append(object)
    }
    return objects
}

@Suite(
    "probe batches through the binary", .serialized,
    .enabled(if: ipdirectBinary != nil, "the ipdirect binary is not built"))
struct BatchCommandTests {
    @Test("JSON Lines on stdout show the first results before the last URL has started")
    func streamsAsURLsFinish() async throws {
        try await withLab(LabOptions(slowOriginDelay: 1)) { lab in
            let urls =
                [lab.url("single.lab.test", "/first")] + (1...6).map { lab.url("slow.lab.test", "/slow\($0)") }
                + [lab.url("single.lab.test", "/last")]
            let run = try ProbeRun(
                lab, ["--format", "jsonl", "--scenario", "direct-sni", "--concurrency", "1", "--timeout", "5"] + urls)
            let first = try #require(try await run.nextLine(), "no output at all")
            let lastStarted = lab.requests(to: "single").contains { $0.path == "/last" }
            #expect(!lastStarted, "the first result came only after the last URL had started")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
            #expect((object["url"] as? String)?.hasSuffix("/last") == false)

            var lines = [first]
            while let line = try await run.nextLine() { lines.append(line) }
            #expect(try await run.exitStatus() == 0)
            #expect(lines.count == urls.count)
            #expect(lab.requests(to: "single").contains { $0.path == "/last" })
        }
    }

    @Test("--input - reads the URLs from standard input, comments and blank lines skipped")
    func inputFromStandardInput() async throws {
        try await withLab { lab in
            let urls = [lab.url("single.lab.test", "/a"), lab.url("sni-a.lab.test", "/b")]
            let list = "# from a pipe\n\(urls[0])\n\n\(urls[1])  # second\n"
            let run = try ProbeRun(
                lab, ["--format", "jsonl", "--scenario", "direct-sni", "--timeout", "10", "--input", "-"], input: list)
            var seen: [String] = []
            while let line = try await run.nextLine() {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                seen.append(object?["url"] as? String ?? "")
            }
            #expect(try await run.exitStatus() == 0)
            #expect(seen.sorted() == urls.sorted())
        }
    }

    @Test("Ctrl-C mid-run leaves a valid HAR, JSON Lines and JSON array, and exits 130")
    func interruptedRunLeavesValidFiles() async throws {
        try await withLab(LabOptions(slowOriginDelay: 1)) { lab in
            let urls = (1...12).map { lab.url("slow.lab.test", "/n\($0)") }
            let run = try ProbeRun(
                lab,
                [
                    "--format", "json", "--scenario", "direct-sni", "--concurrency", "1", "--timeout", "5",
                    "--har", "out.har", "--jsonl", "out.jsonl",
                ] + urls)
            // Interrupt once the first result is in the file, well before the last URL.
            for _ in 0..<400 where (jsonLines(run.path("out.jsonl")) ?? []).isEmpty {
                try await Task.sleep(for: .milliseconds(50))
            }
            run.child.signal(SIGINT)
            let output = try await run.rest()
            #expect(try await run.exitStatus() == 130)

            let lines = try #require(jsonLines(run.path("out.jsonl")), "a line of out.jsonl does not parse")
            #expect(!lines.isEmpty && lines.count < urls.count, "\(lines.count) results written")
            let array = try #require(
                try JSONSerialization.jsonObject(with: output) as? [Any], "stdout is no JSON array")
            #expect(array.count == lines.count)

            let har = try #require(FileManager.default.contents(atPath: run.path("out.har")))
            let log = try #require(
                (try JSONSerialization.jsonObject(with: har) as? [String: Any])?["log"] as? [String: Any])
            #expect((log["entries"] as? [Any])?.count == lines.count)
            let check = try await ChildProcess.run(
                "/usr/bin/env", ["python3", ExportTests.validator, run.path("out.har")], errors: .toOutput)
            #expect(check.status == 0, "\(check.output)")
        }
    }

    @Test("--resume skips the URLs an earlier run's JSON Lines has and adds the rest to it")
    func resumeSkipsWhatIsDone() async throws {
        try await withLab { lab in
            let urls = (1...5).map { lab.url("single.lab.test", "/r\($0)") }
            let common = ["--format", "jsonl", "--scenario", "direct-sni"]
            let earlier = try ProbeRun(lab, common + ["--jsonl", "done.jsonl"] + urls.prefix(3))
            _ = try await earlier.rest()
            #expect(try await earlier.exitStatus() == 0)
            let file = earlier.path("done.jsonl")
            #expect(jsonLines(file)?.count == 3)

            let resumed = try ProbeRun(lab, common + ["--jsonl", file, "--resume", file] + urls)
            let output = String(decoding: try await resumed.rest(), as: UTF8.self)
            #expect(try await resumed.exitStatus() == 0)
            #expect(output.split(separator: "\n").count == 2, "only the two new URLs are probed")
            let written = try #require(jsonLines(file)).compactMap { $0["url"] as? String }
            #expect(Set(written) == Set(urls))
            #expect(written.count == urls.count)
            for index in 1...5 {
                #expect(lab.requests(to: "single").filter { $0.path == "/r\(index)" }.count == 1, "/r\(index)")
            }
        }
    }

    @Test("--rank adds each host's addresses ranked by TCP connect time, in JSON and in the table")
    func rank() async throws {
        try await withLab { lab in
            let url = lab.url("dual.lab.test")
            let json = try ProbeRun(lab, ["--rank", "--format", "jsonl", "--timeout", "10", url])
            let line = try #require(try await json.nextLine(), "no output at all")
            #expect(try await json.exitStatus() == 0)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let ranking = try #require(object["ranking"] as? [String: Any], "no ranking in \(line)")
            let ips = try #require(ranking["ips"] as? [[String: Any]])
            #expect(Set(ips.compactMap { $0["ip"] as? String }) == ["127.0.0.1", "::1"])
            #expect(ips.allSatisfy { $0["connectMs"] is Double }, "\(ips)")
            #expect((ranking["sdkOrder"] as? [String])?.count == 2)
            // Which scenario used which address, from the probe just made.
            #expect(ips.contains { ($0["usedBy"] as? [String])?.contains("direct-sni") == true }, "\(ips)")

            let table = try ProbeRun(lab, ["--rank", "--timeout", "10", url])
            let text = String(decoding: try await table.rest(), as: UTF8.self)
            #expect(try await table.exitStatus() == 0)
            #expect(text.contains("IPs of dual.lab.test, TCP connect to port"), "\(text)")
            #expect(text.contains("CONNECT MS") && text.contains("::1"), "\(text)")
        }
    }
}

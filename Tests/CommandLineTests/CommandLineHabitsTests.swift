// curl's and dig's habits at ipdirect's command line: --resolve, -H, -v, -o, SSL_CERT_FILE for
// probe; @SERVER, +short, -4/-6 and --type AAAA for resolve. Real binary, real lab.
import Foundation
import Lab
import TestSupport
import Testing

@Suite struct CommandLineHabitsTests {
    /// Runs the real binary with its own configuration and cache directories and `extra` in its
    /// environment (no IPDIRECT_ settings, no CA bundle variables of the test's own).
    private func run(
        _ arguments: [String], scratch: ScratchDirectory, extra: [String: String] = [:]
    ) async throws -> ChildProcess.Result {
        var environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("IPDIRECT_") && $0.key != "SSL_CERT_FILE" && $0.key != "CURL_CA_BUNDLE"
        }
        environment["XDG_CONFIG_HOME"] = scratch.path
        environment["XDG_CACHE_HOME"] = scratch.path
        return try await ChildProcess.run(
            BuiltBinary.ipdirectPath, arguments, environment: environment.merging(extra) { $1 }, seconds: 90)
    }

    /// The reports of `probe --format json`.
    private func reports(_ json: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
    }

    @Test("probe as curl: --resolve pins the address, -H adds a header, -v traces, -o writes, SSL_CERT_FILE trusts")
    func probeHabits() async throws {
        try await withLab { lab in
            let scratch = try ScratchDirectory("habits")
            defer { scratch.remove() }
            let url = try #require(lab.endpoints.hosts["sni-a.lab.test"])
            let port = try #require(URLComponents(string: url)?.port)
            let output = scratch.file("out.json")
            // No --lab: nothing but --resolve says where sni-a.lab.test is, nothing but SSL_CERT_FILE
            // trusts the lab's CA.
            let arguments = [
                "probe", "--provider", "system", "--timeout", "10", "--scenario", "direct-sni", "--format", "json",
                "--resolve", "sni-a.lab.test:\(port):127.0.0.1", "-H", "X-Habit: curl", "-v", "-o", output, url,
            ]
            let trusted = try await run(arguments, scratch: scratch, extra: ["SSL_CERT_FILE": lab.endpoints.ca])
            #expect(trusted.status == 0, "\(trusted.errors)")
            #expect(trusted.output.isEmpty, "-o: \(trusted.output)")
            let report = try #require(try reports(String(contentsOfFile: output, encoding: .utf8)).first)
            let resolution = try #require(report["resolution"] as? [String: Any])
            #expect((resolution["httpdns"] as? [String: Any])?["provider"] as? String == "--resolve")
            let attempt = try #require((report["attempts"] as? [[String: Any]])?.first)
            #expect(attempt["outcome"] as? String == "ok", "\(attempt)")
            #expect(attempt["ip"] as? String == "127.0.0.1")
            let hop = try #require((attempt["hops"] as? [[String: Any]])?.first)
            let sent = (hop["requestHeaders"] as? [[String: String]]) ?? []
            #expect(sent.contains { $0["name"] == "X-Habit" && $0["value"] == "curl" }, "\(sent)")
            #expect(trusted.errors.contains("[direct-sni 127.0.0.1] > GET / HTTP"), "-v: \(trusted.errors)")
            #expect(trusted.errors.contains("[direct-sni 127.0.0.1] < HTTP/"), "-v: \(trusted.errors)")

            // Without SSL_CERT_FILE, the lab's private CA is not trusted.
            let untrusted = try await run(arguments, scratch: scratch)
            #expect(untrusted.status == 1, "\(untrusted.errors)")
            let refused = try #require(try reports(String(contentsOfFile: output, encoding: .utf8)).first)
            let outcome = (refused["attempts"] as? [[String: Any]])?.first?["outcome"] as? String
            #expect(outcome == "cert-untrusted", "\(refused)")
        }
    }

    @Test("probe -6 and -4 ask for one family, as curl: every direct attempt goes to an address of it")
    func probeFamily() async throws {
        let scratch = try ScratchDirectory("habits")
        defer { scratch.remove() }
        for (flag, address) in [("-6", "::1"), ("-4", "127.0.0.1")] {
            let result = try await run(
                ["probe", "--lab", "--quiet", flag, "--all-ips", "--format", "json", "https://dual.lab.test/"],
                scratch: scratch)
            #expect(result.status == 0, "\(result.errors)")
            let attempts = try #require(try reports(result.output).first?["attempts"] as? [[String: Any]])
            let direct = attempts.filter {
                ($0["scenario"] as? String)?.hasPrefix("direct-") == true && $0["ip"] is String
            }
            #expect(!direct.isEmpty)
            #expect(direct.allSatisfy { $0["ip"] as? String == address }, "\(flag): \(direct.map { $0["ip"] ?? "-" })")
        }
    }

    @Test(
        "--color always colours the table's outcome and verdict; never, and auto off a terminal, do not",
        arguments: [("always", true), ("never", false), ("auto", false)])
    func color(when: String, colours: Bool) async throws {
        let scratch = try ScratchDirectory("habits")
        defer { scratch.remove() }
        let result = try await run(
            ["probe", "--lab", "--quiet", "--color", when, "https://sni-a.lab.test/"], scratch: scratch)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("\u{1b}[1;32mok\u{1b}[0m") == colours, "\(result.output)")
        #expect(result.output.contains("\u{1b}[1;32m  verdict: use direct-sni") == colours, "\(result.output)")
        #expect(result.output.contains("\u{1b}[") == colours)
    }

    @Test("--resolve for a host and port no URL has is refused, as it would do nothing")
    func resolveMatchesNoURL() async throws {
        let scratch = try ScratchDirectory("habits")
        defer { scratch.remove() }
        let result = try await run(
            ["probe", "--provider", "system", "--resolve", "a.test:8443:127.0.0.1", "https://a.test/"],
            scratch: scratch)
        #expect(result.status == 2, "\(result.errors)")
        #expect(
            result.errors == "ipdirect: --resolve a.test:8443:127.0.0.1 matches no URL given (they have a.test:443)\n")
    }

    @Test(
        "resolve as dig: +short, --short, -4, -6 and --type A|AAAA",
        arguments: [
            (["-6", "+short"], "::1\n"),
            (["--type", "AAAA", "--short"], "::1\n"),
            (["-4", "--short"], "127.0.0.1\n"),
            (["--type", "a", "+short"], "127.0.0.1\n"),
        ])
    func digFamilies(flags: [String], prints expected: String) async throws {
        let scratch = try ScratchDirectory("habits")
        defer { scratch.remove() }
        let result = try await run(["resolve", "--lab"] + flags + ["dual.lab.test"], scratch: scratch)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == expected, "\(flags)")
    }

    @Test("resolve @SERVER asks that DNS server, as dig @SERVER (and as --dns-server)")
    func digServer() async throws {
        try await withLab { lab in
            let scratch = try ScratchDirectory("habits")
            defer { scratch.remove() }
            let dns = lab.endpoints.dns
            let short = try await run(
                ["resolve", "--provider", "system", "@\(dns)", "hijacked.lab.test", "+short"], scratch: scratch)
            #expect(short.status == 0, "\(short.errors)")
            let json = try await run(
                ["resolve", "--provider", "system", "--dns-server", dns, "--format", "json", "hijacked.lab.test"],
                scratch: scratch)
            let answers = try #require(
                try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
            let system = try #require(answers.first?["system"] as? [String: Any])
            let addresses = ((system["ipv4"] as? [String]) ?? []) + ((system["ipv6"] as? [String]) ?? [])
            #expect(!addresses.isEmpty)
            #expect(short.output == addresses.map { $0 + "\n" }.joined(), "\(short.output) vs \(addresses)")
        }
    }
}

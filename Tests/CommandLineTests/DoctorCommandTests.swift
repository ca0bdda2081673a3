// `ipdirect doctor` from outside, the binary against its lab: the exit status follows the worst
// finding, a bad --fault list is bad usage with the parse error's sentence, the JSON parses.

import Foundation
import TestSupport
import Testing

@Suite struct DoctorCommandTests {
    /// Runs the real binary to its end.
    private func doctor(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run(BuiltBinary.ipdirectPath, ["doctor"] + arguments, seconds: 120)
    }

    /// The report's findings as JSON objects.
    private func findings(_ output: String) throws -> [[String: Any]] {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        return try #require(report["findings"] as? [[String: Any]])
    }

    @Test("doctor --lab: a row per check, and the exit status the worst finding says (0, 1 or 3)")
    func exitFollowsTheWorstFinding() async throws {
        let table = try await doctor(["--lab"])
        for title in ["IP stack", "Proxies and resolvers", "Service reachability", "Clock", "Account", "DNS paths"] {
            #expect(table.output.contains(title), "\(table.output)")
        }
        let json = try await doctor(["--lab", "--format", "json"])
        let statuses = try findings(json.output).compactMap { $0["status"] as? String }
        #expect(statuses.count == 8)
        let expected: Int32 = statuses.contains("fail") ? 3 : statuses.contains("warn") ? 1 : 0
        #expect(json.status == expected, "\(statuses)")
        #expect(table.status == expected)
    }

    @Test("doctor --lab --fault bogus: exit 2 with the parse error's sentence; --fault without --lab says what to do")
    func badFaultListIsBadUsage() async throws {
        let bogus = try await doctor(["--lab", "--fault", "clock-skew,bogus"])
        #expect(bogus.status == 2)
        #expect(bogus.errors.contains("'bogus' is not a lab fault"), "\(bogus.errors)")
        let modes = try await doctor(["--lab", "--fault", "slow,down"])
        #expect(modes.status == 2)
        #expect(modes.errors.contains("the HTTPDNS service has one mode at a time"), "\(modes.errors)")
        let withoutLab = try await doctor(["--fault", "nat64"])
        #expect(withoutLab.status == 2)
        #expect(withoutLab.errors.contains("add --lab, or run 'ipdirect lab --fault LIST'"), "\(withoutLab.errors)")
    }

    @Test("doctor --lab --fault nat64 --format json: the IP stack check warns, exit 1 at least")
    func nat64ThroughTheCommand() async throws {
        let run = try await doctor(["--lab", "--fault", "nat64", "--format", "json"])
        let ipStack = try #require(try findings(run.output).first { $0["check"] as? String == "ip-stack" })
        #expect(ipStack["status"] as? String == "warn")
        #expect((ipStack["seen"] as? String)?.contains("64:ff9b::/96") == true)
        #expect(run.status == 1 || run.status == 3)
    }

    @Test("doctor --lab --host: one verdict line per host in the table, the verdict and every attempt in JSON")
    func hostsAreProbed() async throws {
        let table = try await doctor(["--lab", "--host", "sni-a.lab.test"])
        #expect(table.output.contains("hosts (every IP-direct way):"))
        let line = try #require(table.output.split(separator: "\n").first { $0.contains("  sni-a.lab.test  ") })
        #expect(line.contains("pass") && line.contains("use direct-sni"), "\(table.output)")

        let json = try await doctor(["--lab", "--host", "sni-a.lab.test", "--format", "json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let host = try #require((report["hosts"] as? [[String: Any]])?.first)
        #expect(host["recommended"] as? String == "direct-sni")
        #expect((host["attempts"] as? [[String: Any]])?.contains { $0["scenario"] as? String == "direct-sni" } == true)
    }

    @Test("--host given as a URL: the checks take its name (the canary resolves), the probe takes the URL")
    func hostAsURL() async throws {
        let (status, findings) = try await labReport(["--host", "https://sni-a.lab.test/"])
        let account = try #require(findings["account"])
        #expect(account["status"] as? String == "pass", "\(account["seen"] ?? "")")
        #expect((account["seen"] as? String)?.contains("the canary sni-a.lab.test resolved") == true)
        #expect(status == 0)
    }

    /// The test process's environment without proxy variables, so the run sees the lab alone.
    private static let withoutProxies = ProcessInfo.processInfo.environment.filter {
        !["http_proxy", "https_proxy", "all_proxy", "no_proxy"].contains($0.key.lowercased())
    }

    /// The findings of `doctor --lab --format json` with `extra`, by check id, and the exit status.
    private func labReport(_ extra: [String]) async throws -> (status: Int32, findings: [String: [String: Any]]) {
        let run = try await ChildProcess.run(
            BuiltBinary.ipdirectPath, ["doctor", "--lab", "--format", "json"] + extra, environment: Self.withoutProxies,
            seconds: 120)
        var byCheck: [String: [String: Any]] = [:]
        for finding in try findings(run.output) { byCheck[finding["check"] as? String ?? ""] = finding }
        return (run.status, byCheck)
    }

    @Test(
        "canary and connectivity_urls in the configuration file reach the checks; the flags win over them; a bad value is refused naming its key"
    )
    func canaryAndConnectivityURLsFromTheFile() async throws {
        let scratch = try ScratchDirectory("doctor-config")
        defer { scratch.remove() }
        // Nothing listens on port 9 of loopback: the interception check names the URL it asked.
        let file = scratch.file("doctor.toml")
        try """
        canary = "sni-a.lab.test"
        connectivity_urls = ["http://127.0.0.1:9/from-the-file"]
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try await labReport(["--config", file]).findings
        #expect((fromFile["account"]?["seen"] as? String)?.contains("the canary sni-a.lab.test resolved") == true)
        #expect((fromFile["interception"]?["seen"] as? String)?.contains("127.0.0.1:9/from-the-file") == true)

        let flags = try await labReport([
            "--config", file, "--canary", "plain.lab.test", "--connectivity-url", "http://127.0.0.1:9/from-the-flag",
        ]).findings
        #expect((flags["account"]?["seen"] as? String)?.contains("the canary plain.lab.test resolved") == true)
        let interception = flags["interception"]?["seen"] as? String ?? ""
        #expect(interception.contains("from-the-flag") && !interception.contains("from-the-file"), "\(interception)")

        for (line, sentence) in [
            ("canary = \"https://www.example.com/\"", "'canary' must be a host name"),
            ("connectivity_urls = [\"https://x.example/\"]", "item 1 is not a plain-HTTP URL"),
        ] {
            let bad = scratch.file("bad.toml")
            try line.write(toFile: bad, atomically: true, encoding: .utf8)
            let run = try await doctor(["--lab", "--config", bad])
            #expect(run.status == 2)
            #expect(run.errors.contains(sentence), "\(run.errors)")
        }
    }

    @Test("the issue's acceptance, no fault: every check passes against the lab and the exit status is 0")
    func cleanLabAllPass() async throws {
        let (status, findings) = try await labReport([])
        #expect(findings.count == 8)
        let notPassing = findings.filter { $0.value["status"] as? String != "pass" }
        #expect(notPassing.isEmpty, "\(notPassing.mapValues { $0["seen"] ?? "" })")
        #expect(status == 0)
    }

    @Test(
        "the issue's acceptance, --fault clock-skew,service-blocked: those two checks alone, naming the offset and the address; exit 3"
    )
    func clockSkewAndServiceBlocked() async throws {
        let (status, findings) = try await labReport(["--fault", "clock-skew,service-blocked"])
        #expect(status == 3)
        let clock = try #require(findings["clock"])
        #expect(clock["status"] as? String == "fail")
        // 900 s give or take the second the Date header rounds to.
        let seen = clock["seen"] as? String ?? ""
        #expect(["899 s", "900 s", "901 s"].contains { seen.contains($0) }, "\(seen)")
        let reachability = try #require(findings["service-reachability"])
        #expect((reachability["seen"] as? String)?.contains("127.0.0.2") == true, "\(reachability["seen"] ?? "")")
        #expect(reachability["status"] as? String == "fail")
        // Every other check: not a fail (the account and client address checks may say why they could not look).
        let others = findings.filter { !["clock", "service-reachability"].contains($0.key) }
        #expect(
            others.allSatisfy { $0.value["status"] as? String != "fail" }, "\(others.mapValues { $0["seen"] ?? "" })")
    }
}

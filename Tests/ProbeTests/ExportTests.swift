// Exports a user hands on: the HAR of every lab name passes the HAR 1.2 schema check, the
// JSON has the documented fields (null where nothing applies), secrets are redacted.
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe
import TestSupport
import Testing

@Suite("Exports")
struct ExportTests {
    /// The HAR 1.2 schema and its checker (Tests/HARSchema, from the HAR spec's JSON Schema, ISC
    /// licence beside it): in the repository, so the check runs on every clone.
    static let validator = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("HARSchema/validate.py").path

    /// The HAR of every lab name, probed with a bearer token and a secret query value. Start the
    /// lab with a slow origin far slower than the timeout: that leaves every other origin a wide margin.
    static func everyNameHAR(_ lab: Lab) async throws -> (har: Data, reports: [URLReport]) {
        let engine = lab.engine(
            ProbeOptions(
                allIPs: true, headers: [HeaderField(name: "Authorization", value: "Bearer hunter2")],
                timeout: .seconds(3)))
        let reports = await engine.probeAll(LabScenarioTests.everyName.map { lab.url($0, "/echo?token=hunter2&q=1") })
        return (try exported(reports, .har), reports)
    }

    @Test("the HAR of every lab name has an entry per hop, the extension fields, no secret")
    func harShape() async throws {
        try await withLab(LabOptions(slowOriginDelay: 30)) { lab in
            let (har, reports) = try await Self.everyNameHAR(lab)
            let text = String(decoding: har, as: UTF8.self)
            #expect(!text.contains("hunter2"))
            let object = try #require(try JSONSerialization.jsonObject(with: har) as? [String: Any])
            let log = try #require(object["log"] as? [String: Any])
            let entries = try #require(log["entries"] as? [[String: Any]])
            let made = reports.flatMap(\.attempts).filter { $0.outcome != .skipped }
            #expect(entries.count == made.map { max($0.hops.count, 1) }.reduce(0, +))
            #expect(entries.contains { $0["_scenario"] as? String == "direct-https" && $0["_sni"] is NSNull })
            #expect(entries.contains { $0["_sni"] as? String == "sni-a.lab.test" })
            #expect(entries.allSatisfy { $0["_resolver"] is String && $0["_outcome"] is String })
        }
    }

    /// A missing python3 or jsonschema is a failure, never a pass: the README's commands install both.
    @Test("the HAR of every lab name passes the HAR 1.2 schema check (Tests/HARSchema/validate.py)")
    func harPassesSchema() async throws {
        let validator = Self.validator
        try #require(FileManager.default.fileExists(atPath: validator), "\(validator) is missing")
        try await withLab(LabOptions(slowOriginDelay: 30)) { lab in
            let (har, _) = try await Self.everyNameHAR(lab)
            let scratch = try ScratchDirectory("har")
            defer { scratch.remove() }
            let file = scratch.file("probe.har")
            try har.write(to: URL(fileURLWithPath: file))
            let check = try await ChildProcess.run("/usr/bin/env", ["python3", validator, file], errors: .toOutput)
            let output = check.output
            #expect(check.status == 0, "\(output)")
            #expect(output.contains(" 0 errors"), "\(output)")
        }
    }

    @Test("JSON lines carry the documented fields, with null where nothing was sent")
    func jsonShape() async throws {
        try await withLab { lab in
            let reports = await lab.engine().probeAll([lab.url("sni-a.lab.test"), lab.url("plain.lab.test")])
            let lines = try exportedText(reports, .jsonLines).split(separator: "\n")
            #expect(lines.count == 2)
            let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
            for key in ["url", "host", "resolution", "attempts", "verdict"] { #expect(first[key] != nil, "\(key)") }
            let attempts = try #require(first["attempts"] as? [[String: Any]])
            for key in [
                "scenario", "ip", "ipSource", "sni", "checkedName", "outcome", "status", "httpVersion", "timings",
                "certificate", "error", "hops",
            ] {
                #expect(attempts.allSatisfy { $0.keys.contains(key) }, "\(key)")
            }
            let https = try #require(attempts.first { $0["scenario"] as? String == "direct-https" })
            #expect(https["sni"] is NSNull)
            #expect(https["checkedName"] as? String == "sni-a.lab.test")
            let verdict = try #require(first["verdict"] as? [String: Any])
            #expect(verdict["recommended"] as? String == "direct-sni")
            #expect(verdict["works"] as? [String] == ["direct-sni"])

            let array = try #require(try JSONSerialization.jsonObject(with: exported(reports, .jsonArray)) as? [Any])
            #expect(array.count == 2)
            let table = ProbeExport.table(reports)
            #expect(table.contains("cert-name-mismatch"))
            #expect(table.contains("verdict: use direct-sni"))
        }
    }

    @Test("HAR timings come from curl's cumulative ones, -1 where a phase did not happen")
    func harTimings() throws {
        func entry(_ url: String, _ timings: PhaseTimings) throws -> [String: Any] {
            let hop = Hop(
                url: url, originalURL: url, method: "GET", resolver: .httpdns, outcome: .ok, status: 200,
                timings: timings)
            let attempt = Attempt(url: url, scenario: .directHTTPS, outcome: .ok, hops: [hop])
            let resolution = HostResolution(
                host: "a.test", system: SystemAnswer(), httpdns: HTTPDNSAnswer(provider: "x"))
            let report = URLReport(
                url: url, host: "a.test", resolution: resolution, attempts: [attempt],
                verdict: Verdict(works: [], recommended: nil, summary: "", notes: []))
            let har = try #require(try JSONSerialization.jsonObject(with: exported([report], .har)) as? [String: Any])
            let log = try #require(har["log"] as? [String: Any])
            return try #require((log["entries"] as? [[String: Any]])?.first)
        }
        let https = try entry(
            "https://127.0.0.1/", PhaseTimings(connect: 2, tlsDone: 5, preTransfer: 5.5, firstByte: 8, total: 9))
        let t = try #require(https["timings"] as? [String: Double])
        #expect(t["dns"] == -1)
        #expect(t["connect"] == 5)
        #expect(t["ssl"] == 3)
        #expect(t["send"] == 0.5)
        #expect(t["wait"] == 2.5)
        #expect(t["receive"] == 1)
        #expect(https["time"] as? Double == 9)

        let http = try entry(
            "http://a.test/", PhaseTimings(nameLookup: 1, connect: 2, preTransfer: 2.5, firstByte: 4, total: 4))
        let h = try #require(http["timings"] as? [String: Double])
        #expect(h["dns"] == 1)
        #expect(h["connect"] == 1)
        #expect(h["ssl"] == -1)
        #expect(http["time"] as? Double == 4)
    }
}

// The legacy API's origin_ttl and extra, as the C SDK keeps them, from the lab to what a user
// reads: the resolve table, resolve's JSON, and each entry of probe's HAR.
import Foundation
import Lab
import TestSupport
import Testing

@Suite struct LegacyFieldsTests {
    /// The lab's split-ttl.lab.test sends `extra` HTML-encoded, as the service does.
    static let decodedExtra = "region=east&tier=<gold>"

    private func run(
        _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, arguments, environment: environment)
        return (result.status, result.output)
    }

    private func legacy(_ lab: Lab) -> [String] {
        ["--provider", "alicloud-legacy", "--endpoint", lab.endpoints.httpdns, "--account", lab.endpoints.account]
    }

    /// A lab, and a cache and configuration directory of the test's own for the command it runs.
    private func withLabAndHome(
        _ body: (Lab, ScratchDirectory, [String: String]) async throws -> Void
    ) async throws {
        try await withLab { lab in
            let scratch = try ScratchDirectory("legacy-fields")
            defer { scratch.remove() }
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CACHE_HOME"] = scratch.path
            environment["XDG_CONFIG_HOME"] = scratch.path
            try await body(lab, scratch, environment)
        }
    }

    @Test("resolve shows origin_ttl and the decoded extra in its table and its JSON")
    func resolveTableAndJSON() async throws {
        try await withLabAndHome { lab, scratch, environment in
            let base = ["resolve"] + legacy(lab) + ["--timeout", "10", "--type", "both", "split-ttl.lab.test"]
            let table = try await run(base, environment: environment)
            #expect(table.status == 0, "\(table.output)")
            #expect(table.output.contains("origin_ttl 600s"), "\(table.output)")
            #expect(table.output.contains("extra: \(Self.decodedExtra)"), "\(table.output)")

            let json = try await run(base + ["--format", "json"], environment: environment)
            #expect(json.status == 0, "\(json.output)")
            let list = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
            let httpdns = try #require(list.first?["httpdns"] as? [String: Any])
            #expect(httpdns["originTTL"] as? [String: Int] == ["v4": 600, "v6": 600])
            #expect(httpdns["extra"] as? String == Self.decodedExtra)
            #expect(httpdns["ttl"] as? [String: Int] == ["v4": 120, "v6": 120])
        }
    }

    @Test("every HAR entry of a probe carries the HTTPDNS answer's TTL per family, origin_ttl and extra")
    func harEntries() async throws {
        try await withLabAndHome { lab, scratch, environment in
            let har = scratch.path + "/probe.har"
            // Nothing serves split-ttl.lab.test: the attempts fail, and their entries still say what HTTPDNS said.
            _ = try await run(
                ["probe"] + legacy(lab) + [
                    "--timeout", "5", "--scenario", "direct-http", "--har", har, "http://split-ttl.lab.test:9/",
                ], environment: environment)
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har)))
            let entries = try #require(((object as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [Any])
            #expect(!entries.isEmpty)
            for case let entry as [String: Any] in entries {
                let httpdns = try #require(entry["_httpdns"] as? [String: Any], "\(entry)")
                // The family probe asks for depends on this machine's routes (auto): the A is always there.
                #expect((httpdns["originTTL"] as? [String: Int])?["v4"] == 600, "\(httpdns)")
                #expect(httpdns["extra"] as? String == Self.decodedExtra)
                #expect((httpdns["ttl"] as? [String: Int])?["v4"] == 120, "\(httpdns)")
            }
        }
    }
}

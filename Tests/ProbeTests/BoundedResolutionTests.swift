// Resolution in a batch is bounded like transfers are: a few hundred distinct names under a low
// descriptor limit each get their real answer, never "too many open files" dressed as a DNS error.
import Foundation
import TestSupport
import Testing

@Suite("Bounded resolution", .enabled(if: BuiltBinary.ipdirect != nil, "the ipdirect binary is not built"))
struct BoundedResolutionTests {
    @Test("300 distinct names with ulimit -n 256: each answered NXDOMAIN and no such name, in words")
    func manyNamesUnderDescriptorLimit() async throws {
        let scratch = try ScratchDirectory("bounded")
        defer { scratch.remove() }
        let directory = scratch.path
        let names = (1...300).map { "n\($0).lab.test" }
        try names.map { "https://\($0)/" }.joined(separator: "\n").write(
            toFile: directory + "/urls.txt", atomically: true, encoding: .utf8)

        // Before resolution was bounded, about a third of these failed as "refused" or TLS errors
        // (the descriptors had run out) rather than as the names' real answers.
        // A name's --timeout covers its wait in line behind the others (16 system lookups and 32
        // HTTPDNS queries at once, 100 names in flight): 60 s, so a loaded machine's slower lab
        // answers are still the names' own answers, not timeouts this test is not about.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        environment["XDG_CONFIG_HOME"] = directory
        environment["XDG_CACHE_HOME"] = directory
        let child = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                #"ulimit -n 256 && exec "$0" probe --lab --input "$1" --concurrency 100 --format jsonl --timeout 60 --scenario direct-sni > "$2" 2>/dev/null"#,
                BuiltBinary.ipdirect!, directory + "/urls.txt", directory + "/out.jsonl",
            ], environment: environment, captureOutput: false, errors: .discarded)
        #expect(try await child.exitStatus(within: 600) != nil)

        let data = try #require(FileManager.default.contents(atPath: directory + "/out.jsonl"))
        let reports = data.split(separator: 0x0A).compactMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        #expect(reports.count == names.count)
        var unexpected: [String] = []
        for report in reports {
            let resolution = report["resolution"] as? [String: Any]
            let system = (resolution?["system"] as? [String: Any])?["error"] as? String ?? "(none)"
            let httpdns = (resolution?["httpdns"] as? [String: Any])?["error"] as? String ?? "(none)"
            if !system.contains("(NXDOMAIN)") { unexpected.append("system: \(system)") }
            if !httpdns.contains("no such name") { unexpected.append("httpdns: \(httpdns)") }
        }
        #expect(unexpected.isEmpty, "\(unexpected.count) answers were not the names' own: \(unexpected.prefix(3))")
    }
}

// The agent's JSON Lines file says which services a user probes and what answered: like probe's
// exports it is the user's alone (0600), and so is every rotated copy.
import Agent
import Foundation
import Logging
import NameResolution
import Probe
import TestSupport
import Testing

@Suite("Agent JSON Lines files are private")
struct JSONLinesFileModeTests {
    private func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }

    @Test("the --jsonl file and its rotated copies are created 0600")
    func createdPrivate() throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("agent.jsonl")
        let jsonl = try RotatingJSONL(
            path: path, limit: 1024, keep: 2, metrics: nil,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let report = URLReport(
            url: "https://a.test/" + String(repeating: "p", count: 600), host: "a.test",
            resolution: HostResolution(host: "a.test", system: SystemAnswer(), httpdns: HTTPDNSAnswer(provider: "x")),
            attempts: [], verdict: Verdict(works: [], recommended: nil, summary: "none", notes: []))
        for _ in 0..<6 { jsonl.record(report) }
        #expect(FileManager.default.fileExists(atPath: path + ".2"))
        for file in [path, path + ".1", path + ".2"] {
            #expect(mode(file) == 0o600, "\(file)")
        }
    }
}

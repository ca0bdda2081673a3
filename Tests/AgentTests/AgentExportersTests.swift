// The agent hands every report to its exporters through the one exporter seam: one it is given
// gets each target's report and label and is finished at the stop, and the JSON Lines file it
// appends to survives a hard stop whole.
import Agent
import Foundation
import FoundationGaps
import Lab
import Logging
import NameResolution
import Probe
import TestSupport
import Testing

@Suite("Agent exporters")
struct AgentExportersTests {
    /// An exporter that keeps what it was handed (the seam the `/probe` endpoint will plug into).
    final class KeptReports: ReportExporter {
        let kept = Locked([(url: String, context: ReportContext)]())
        let finished = Locked(false)

        func record(_ report: URLReport, context: ReportContext) {
            kept.withLock { $0.append((report.url, context)) }
        }

        func finish(within budget: Duration) async {
            finished.withLock { $0 = true }
        }
    }

    @Test("an exporter handed to the agent gets every target's report with its label, and is finished")
    func exporterGetsReports() async throws {
        let lab = try await Lab.start()
        let log = CapturedLog()
        let exporter = KeptReports()
        let targets = try [lab.url("sni-a.lab.test", "/path?q=1"), lab.url("plain.lab.test")].map {
            try AgentTarget($0)
        }
        let roundStart = Date()
        let agent = ProbeAgent(
            engine: lab.engine(try lab.resolverCache()), source: .fixed(targets),
            schedule: AgentSchedule(interval: 60, jitter: 0, concurrency: 2),
            sinks: AgentSinks(metrics: AgentMetrics(labels: []), exporters: [exporter]), logger: log.logger)
        await withAgent(agent) {
            #expect(await eventually { agent.roundsCompleted >= 1 })
        }
        await agent.sinks.finish(within: .seconds(1))
        try await lab.shutdown()

        let kept = exporter.kept.withLock { $0 }
        #expect(Set(kept.map(\.url)) == Set(targets.map(\.url)))
        for target in targets {
            let context = try #require(kept.first { $0.url == target.url }?.context)
            #expect(context.target == target.label)
            #expect(context.started >= roundStart.addingTimeInterval(-1))
        }
        #expect(exporter.finished.withLock { $0 })
    }

    @Test("after a hard stop cut a record off, the --jsonl file drops it and the next record starts its own line")
    func cutOffLineDropped() throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("agent.jsonl")
        // A whole record, then one a SIGKILL cut off mid-write.
        try "{\"url\":\"https://a.test/\"}\n{\"url\":\"https://a.te".write(
            toFile: path, atomically: true, encoding: .utf8)
        let jsonl = try RotatingJSONL(
            path: path, limit: nil, metrics: nil, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let report = URLReport(
            url: "https://b.test/", host: "b.test",
            resolution: HostResolution(host: "b.test", system: SystemAnswer(), httpdns: HTTPDNSAnswer(provider: "x")),
            attempts: [], verdict: Verdict(works: [], recommended: nil, summary: "none", notes: []))
        jsonl.record(report)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let urls = lines.map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String
        }
        #expect(urls == ["https://a.test/", "https://b.test/"])
    }
}

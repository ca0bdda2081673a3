// The agent's ipdirect_httpdns_ttl_seconds: the TTL HTTPDNS gave each target's host, per family,
// so an AAAA that expires before its A shows as such on a dashboard.
import Agent
import Foundation
import Lab
import Probe
import Testing

@Suite struct HTTPDNSTTLMetricTests {
    @Test("each probed target's HTTPDNS TTL is a series per family, from the lab's answer")
    func ttlPerFamily() async throws {
        let lab = try await Lab.start()
        let engine = lab.engine(try lab.resolverCache())
        let target = try AgentTarget(lab.url("plain.lab.test"))
        let report = try #require(await engine.report(target.url, emit: { _ in }))
        let metrics = AgentMetrics(labels: [])
        metrics.record(report, context: ReportContext(target: target.label, started: Date()))
        let lines = String(decoding: metrics.exposition(), as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("ipdirect_httpdns_ttl_seconds{") }
        let v4 = try #require(lines.first { $0.contains("family=\"v4\"") }, "\(lines)")
        #expect(v4.contains("target=\"\(target.label)\""))
        #expect(v4.hasSuffix(" 60.0") || v4.hasSuffix(" 60"), "\(v4)")
        try await lab.shutdown()
    }
}

// The agent against the lab, in process: rounds over the list, /metrics with bounded labels,
// JSON Lines with rotation, and the faults it must ride out (scrape mid-round, disk full).
import Agent
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe
import TestSupport
import Testing

@Suite("Agent loop")
struct AgentLoopTests {
    @Test("rounds probe every target; /metrics has outcomes, phases, labels and no URL path")
    func metricsAfterRounds() async throws {
        let lab = try await Lab.start()
        let cache = try lab.resolverCache()
        let log = CapturedLog()
        let metrics = AgentMetrics(labels: [AgentLabel(name: "region", value: "lab-east")])
        let server = try await MetricsServer(host: "127.0.0.1", port: 0) { metrics.exposition() }
        let targets = try [lab.url("sni-a.lab.test", "/secret/path?token=x"), lab.url("plain.lab.test")]
            .map { try AgentTarget($0) }
        let agent = ProbeAgent(
            engine: lab.engine(cache), source: .fixed(targets),
            schedule: AgentSchedule(interval: 1, jitter: 0, concurrency: 4),
            sinks: AgentSinks(metrics: metrics), logger: log.logger)
        let counting = agent.countResolverEvents(cache.events())
        let text = try await withAgent(agent) { () async throws -> String in
            #expect(await eventually { agent.roundsCompleted >= 2 })
            return try #require(await fetch("http://127.0.0.1:\(server.port)/metrics")?.body)
        }
        counting.cancel()
        await server.close()
        try await lab.shutdown()

        let sniLabel = try #require(targets.first?.label)
        #expect(
            text.contains(
                "ipdirect_probe_outcomes_total{target=\"\(sniLabel)\",scenario=\"direct-sni\",outcome=\"ok\",region=\"lab-east\"}"
            ))
        #expect(
            text.contains(
                "ipdirect_probe_phase_seconds_bucket{target=\"\(sniLabel)\",scenario=\"direct-sni\",phase=\"tls\""))
        #expect(
            text.contains(
                "ipdirect_certificate_expiry_timestamp_seconds{target=\"\(sniLabel)\",scenario=\"direct-sni\""))
        #expect(text.contains("ipdirect_dns_agreement{target=\"\(sniLabel)\",agreement="))
        #expect(text.contains("ipdirect_httpdns_answer_seconds_count{provider=\"alicloud\",region=\"lab-east\"}"))
        #expect(text.contains("ipdirect_resolver_cache_events_total{event=\"hit\",region=\"lab-east\"}"))
        #expect(text.contains("ipdirect_build_info{version=\"\(IPDirectVersion.string)\",region=\"lab-east\"} 1"))
        #expect(text.contains("ipdirect_target_direct_working{target=\"\(sniLabel)\",region=\"lab-east\"} 1"))
        // Cardinality: the path and query are in no label.
        #expect(!text.contains("secret") && !text.contains("token"))
        #expect(log.lines(containing: "round 2:").count == 1)
    }

    @Test("a report that arrives after its target left the list does not bring its series back")
    func lateReportAfterRemoval() async throws {
        let lab = try await Lab.start()
        let engine = lab.engine(try lab.resolverCache())
        let plain = try AgentTarget(lab.url("plain.lab.test"))
        let sni = try AgentTarget(lab.url("sni-a.lab.test"))
        let report = try #require(await engine.report(plain.url, emit: { _ in }))
        let metrics = AgentMetrics(labels: [])
        let series = "target=\"\(plain.label)\""
        metrics.record(report, context: ReportContext(target: plain.label, started: Date()))
        #expect(String(decoding: metrics.exposition(), as: UTF8.self).contains(series))
        // A reload drops the target while a round that began before it is still probing it.
        metrics.keep(only: [sni])
        #expect(!String(decoding: metrics.exposition(), as: UTF8.self).contains(series))
        metrics.record(report, context: ReportContext(target: plain.label, started: Date()))
        #expect(!String(decoding: metrics.exposition(), as: UTF8.self).contains(series))
        // A target the list holds again is recorded again.
        metrics.keep(only: [sni, plain])
        metrics.record(report, context: ReportContext(target: plain.label, started: Date()))
        #expect(String(decoding: metrics.exposition(), as: UTF8.self).contains(series))
        try await lab.shutdown()
    }

    @Test("resolver cache events are counted per kind, and a kind never seen has no series")
    func resolverEventCounts() {
        let metrics = AgentMetrics(labels: [AgentLabel(name: "region", value: "lab-east")])
        for kind in [ResolverEvent.Kind.hit, .hit, .miss, .hit] {
            metrics.record(ResolverEvent(kind: kind, host: "sni-a.lab.test", detail: ""))
        }
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        #expect(text.contains("ipdirect_resolver_cache_events_total{event=\"hit\",region=\"lab-east\"} 3\n"))
        #expect(text.contains("ipdirect_resolver_cache_events_total{event=\"miss\",region=\"lab-east\"} 1\n"))
        #expect(!text.contains("event=\"refresh\""))
    }

    @Test("a target that leaves the list takes its series out of /metrics")
    func removedTargetSeries() async throws {
        let lab = try await Lab.start()
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("targets.txt")
        try "\(lab.url("sni-a.lab.test"))\n\(lab.url("plain.lab.test"))\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let file = try TargetsFile(path: path)
        let plain = try AgentTarget(lab.url("plain.lab.test")).label
        let metrics = AgentMetrics(labels: [])
        let log = CapturedLog()
        let agent = ProbeAgent(
            engine: lab.engine(try lab.resolverCache()), source: .file(file),
            schedule: AgentSchedule(interval: 1, jitter: 0, concurrency: 4), sinks: AgentSinks(metrics: metrics),
            logger: log.logger)
        try await withAgent(agent) {
            #expect(await eventually { agent.roundsCompleted >= 1 })
            #expect(String(decoding: metrics.exposition(), as: UTF8.self).contains("target=\"\(plain)\""))
            try "\(lab.url("sni-a.lab.test"))\n".write(toFile: path, atomically: true, encoding: .utf8)
            #expect(await eventually { !log.lines(containing: "targets reloaded").isEmpty })
            #expect(!String(decoding: metrics.exposition(), as: UTF8.self).contains("target=\"\(plain)\""))
            // Deleted mid-run: the last good list stays, and the log says so.
            try FileManager.default.removeItem(atPath: path)
            #expect(await eventually { !log.lines(containing: "keeping the last good list of 1 targets").isEmpty })
            let rounds = agent.roundsCompleted
            #expect(await eventually { agent.roundsCompleted > rounds })
        }
        try await lab.shutdown()
    }

    @Test("a scrape while a round is under way answers at once with what is known")
    func scrapeDuringRound() async throws {
        let lab = try await Lab.start()
        let metrics = AgentMetrics(labels: [])
        let server = try await MetricsServer(host: "127.0.0.1", port: 0) { metrics.exposition() }
        let log = CapturedLog()
        // The slow origin takes 3 s: the round is under way while the test scrapes.
        let agent = ProbeAgent(
            engine: lab.engine(try lab.resolverCache()),
            source: .fixed([try AgentTarget(lab.url("slow.lab.test")), try AgentTarget(lab.url("plain.lab.test"))]),
            schedule: AgentSchedule(interval: 30, jitter: 0, concurrency: 2), sinks: AgentSinks(metrics: metrics),
            logger: log.logger)
        try await withAgent(agent) {
            #expect(await eventually { !log.lines(containing: "agent started").isEmpty })
            let scrape = try #require(await fetch("http://127.0.0.1:\(server.port)/metrics"))
            #expect(scrape.status == 200)
            #expect(scrape.body.contains("ipdirect_build_info"))
            #expect(agent.roundsCompleted == 0)
            #expect(await fetch("http://127.0.0.1:\(server.port)/other")?.status == 404)
        }
        await server.close()
        try await lab.shutdown()
    }

    @Test("JSON Lines: the probe records, rotated past the size, every line whole")
    func jsonLinesRotate() async throws {
        let lab = try await Lab.start()
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("agent.jsonl")
        let log = CapturedLog()
        let jsonl = try RotatingJSONL(path: path, limit: 8 * 1024, keep: 2, metrics: nil, logger: log.logger)
        let agent = ProbeAgent(
            engine: lab.engine(try lab.resolverCache()), source: .fixed([try AgentTarget(lab.url("sni-a.lab.test"))]),
            schedule: AgentSchedule(interval: 1, jitter: 0, concurrency: 1), sinks: AgentSinks(exporters: [jsonl]),
            logger: log.logger)
        await withAgent(agent) {
            #expect(await eventually { FileManager.default.fileExists(atPath: path + ".2") })
        }
        try await lab.shutdown()
        #expect(!FileManager.default.fileExists(atPath: path + ".3"))
        for file in [path, path + ".1", path + ".2"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            for line in data.split(separator: 0x0A) {
                let record = try JSONSerialization.jsonObject(with: line) as? [String: Any]
                #expect(record?["host"] as? String == "sni-a.lab.test")
                #expect(record?["attempts"] is [Any])
            }
        }
        // A rotated file stays within the size unless a single record is bigger than it.
        let rotated = try Data(contentsOf: URL(fileURLWithPath: path + ".1"))
        #expect(!rotated.isEmpty)
        #expect(rotated.count <= 8 * 1024 || rotated.split(separator: 0x0A).count == 1)
    }

    @Test("each target is probed with its own scenarios, method and headers over the command line's")
    func perTargetSettings() async throws {
        let lab = try await Lab.start()
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let list = scratch.file("targets.txt")
        try "\(lab.url("sni-a.lab.test")) scenario=direct-sni method=head header=\"X-Probe: own\"\n".write(
            toFile: list, atomically: true, encoding: .utf8)
        // The configuration's target has none of its own: the command line's apply.
        let file = try TargetsFile(path: list, configured: [try AgentTarget(lab.url("sni-b.lab.test"))])
        let path = scratch.file("agent.jsonl")
        let log = CapturedLog()
        let jsonl = try RotatingJSONL(path: path, limit: nil, metrics: nil, logger: log.logger)
        var options = ProbeOptions()
        options.headers = [HeaderField(name: "X-Probe", value: "base"), HeaderField(name: "X-Base", value: "1")]
        options.timeout = .seconds(10)
        let agent = ProbeAgent(
            engine: lab.engine(try lab.resolverCache(), options: options), source: .file(file),
            schedule: AgentSchedule(interval: 1, jitter: 0, concurrency: 2), sinks: AgentSinks(exporters: [jsonl]),
            logger: log.logger)
        await withAgent(agent) {
            #expect(await eventually { agent.roundsCompleted >= 1 })
        }
        try await lab.shutdown()

        var seen: [String: (scenarios: Set<String>, methods: Set<String>, probe: Set<String>, base: Set<String>)] = [:]
        for line in try Data(contentsOf: URL(fileURLWithPath: path)).split(separator: 0x0A) {
            let record = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
            let host = try #require(record["host"] as? String)
            for attempt in record["attempts"] as? [[String: Any]] ?? [] {
                var entry = seen[host] ?? ([], [], [], [])
                entry.scenarios.insert(attempt["scenario"] as? String ?? "?")
                for hop in attempt["hops"] as? [[String: Any]] ?? [] {
                    entry.methods.insert(hop["method"] as? String ?? "?")
                    for header in hop["requestHeaders"] as? [[String: Any]] ?? [] {
                        let value = header["value"] as? String ?? ""
                        if header["name"] as? String == "X-Probe" { entry.probe.insert(value) }
                        if header["name"] as? String == "X-Base" { entry.base.insert(value) }
                    }
                }
                seen[host] = entry
            }
        }
        let own = try #require(seen["sni-a.lab.test"])
        #expect(own.scenarios == ["direct-sni"])
        #expect(own.methods == ["HEAD"])
        #expect(own.probe == ["own"] && own.base == ["1"])
        let plain = try #require(seen["sni-b.lab.test"])
        #expect(plain.scenarios.count > 1 && plain.scenarios.contains("direct-https"))
        #expect(plain.methods == ["GET"])
        #expect(plain.probe == ["base"] && plain.base == ["1"])
    }

    @Test(
        "disk full for the JSON Lines file: probing goes on, failures counted, said once a minute",
        .enabled(if: FullDisk.available, "a full file system is a tmpfs this test mounts, which needs root"))
    func diskFull() async throws {
        let lab = try await Lab.start()
        let disk = try await FullDisk()
        defer { disk.remove() }
        let path = disk.path + "/full.jsonl"
        let log = CapturedLog()
        let metrics = AgentMetrics(labels: [])
        let jsonl = try RotatingJSONL(path: path, limit: nil, metrics: metrics, logger: log.logger)
        let agent = ProbeAgent(
            engine: lab.engine(try lab.resolverCache()), source: .fixed([try AgentTarget(lab.url("plain.lab.test"))]),
            schedule: AgentSchedule(interval: 1, jitter: 0, concurrency: 1),
            sinks: AgentSinks(metrics: metrics, exporters: [jsonl]), logger: log.logger)
        await withAgent(agent) {
            #expect(await eventually { agent.roundsCompleted >= 3 })
        }
        try await lab.shutdown()
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        let failures = text.split(separator: "\n").first {
            $0.hasPrefix("ipdirect_export_failures_total{exporter=\"jsonl\"}")
        }
        #expect(Int(failures?.split(separator: " ").last ?? "") ?? 0 >= 3)
        let said = log.lines(containing: "cannot write to --jsonl")
        #expect(said.count == 1)
        #expect(said.first?.contains("No space left on device") == true)
    }
}

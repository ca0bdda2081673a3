// The Prometheus files ipdirect ships (packaging/prometheus): promtool takes the scrape
// configuration, the rules and every dashboard query, and a real Prometheus scrapes /probe with them.
import Agent
import Foundation
import Lab
import Probe
import TestSupport
import Testing

/// A file of packaging/prometheus, as shipped.
private func shipped(_ name: String) throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    return try String(contentsOf: root.appendingPathComponent("packaging/prometheus/\(name)"), encoding: .utf8)
}

/// `text` with `old` replaced by `new`; the test fails when the shipped file no longer has `old`.
private func replacing(_ old: String, with new: String, in text: String) -> String {
    #expect(text.contains(old), "the shipped file no longer has \(old)")
    return text.replacingOccurrences(of: old, with: new)
}

@Suite("The shipped Prometheus files", .serialized)
struct ShippedPrometheusTests {
    @Test(
        "promtool takes the scrape configuration, the alert rules and every query of the Grafana dashboard",
        .enabled(if: promtoolBinary != nil, "promtool is not installed and could not be installed here"))
    func promtoolChecks() async throws {
        let scratch = try ScratchDirectory("prometheus-files")
        defer { scratch.remove() }
        for name in ["prometheus.yml", "ipdirect-rules.yml"] {
            try shipped(name).write(toFile: scratch.file(name), atomically: true, encoding: .utf8)
        }
        let promtool = try #require(promtoolBinary)
        let config = try await ChildProcess.run(promtool, ["check", "config", scratch.file("prometheus.yml")])
        #expect(config.status == 0, "\(config.output)\(config.errors)")
        let rules = try await ChildProcess.run(promtool, ["check", "rules", scratch.file("ipdirect-rules.yml")])
        #expect(rules.status == 0, "\(rules.output)\(rules.errors)")

        // Every panel's query as a recording rule, the dashboard's variables as any value.
        let dashboard = try #require(
            try JSONSerialization.jsonObject(with: Data(shipped("grafana-dashboard.json").utf8)) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let queries = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(queries.count >= 7)
        var file = "groups:\n  - name: dashboard\n    rules:\n"
        for (index, query) in queries.enumerated() {
            let concrete = ["$target", "$region", "$carrier"].reduce(query) {
                $0.replacingOccurrences(of: $1, with: ".*")
            }
            let quoted = concrete.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "\"", with: "\\\"")
            file += "      - record: dashboard:query\(index)\n        expr: \"\(quoted)\"\n"
        }
        try file.write(toFile: scratch.file("dashboard-rules.yml"), atomically: true, encoding: .utf8)
        let parsed = try await ChildProcess.run(promtool, ["check", "rules", scratch.file("dashboard-rules.yml")])
        #expect(parsed.status == 0, "\(parsed.output)\(parsed.errors)")
    }

    @Test(
        "Prometheus scrapes /probe through the shipped configuration for three lab targets; the hijacked one alerts",
        .enabled(if: prometheusBinary != nil, "prometheus is not installed and could not be installed here"))
    func scrapesProbeEndpoint() async throws {
        let lab = try await Lab.start()
        let cache = try lab.resolverCache(labDNS: true)
        var options = ProbeOptions()
        options.linkLocal = .refuse
        let probe = ProbeEndpoint(engine: lab.engine(cache, options: options))
        let server = try await MetricsServer(host: "127.0.0.1", port: 0, probe: probe) { [] }
        let plain = lab.url("plain.lab.test")
        let sni = lab.url("sni-a.lab.test")
        let hijacked = lab.url("hijacked.lab.test")

        // The shipped files, with the lab's targets, this agent's address, a quicker pace and the
        // rules' `for:` shortened.
        var config = try shipped("prometheus.yml")
        config = replacing(
            "          - https://www.example.com/\n",
            with: [plain, sni, hijacked].map { "          - \($0)\n" }.joined(),
            in: config)
        config = replacing("127.0.0.1:9464", with: "127.0.0.1:\(server.port)", in: config)
        config = replacing("scrape_interval: 30s", with: "scrape_interval: 3s", in: config)
        config = replacing("scrape_timeout: 10s", with: "scrape_timeout: 3s", in: config)
        config = "global:\n  evaluation_interval: 1s\n" + config
        var rules = try shipped("ipdirect-rules.yml")
        for duration in ["5m", "10m", "1h"] { rules = replacing("for: \(duration)", with: "for: 1s", in: rules) }

        let prometheus = try await PrometheusServer.start(
            binary: prometheusBinary!, configuration: config, files: ["ipdirect-rules.yml": rules])
        defer { prometheus.stop() }
        func value(_ promql: String) async -> Double? { await prometheus.query(promql).first?.value }

        let scraped = await eventually(within: 90) {
            await prometheus.query("probe_success{job=\"ipdirect-probe\"}").count == 3
        }
        if !scraped {
            Issue.record("Prometheus did not scrape /probe for 3 targets. \(await prometheus.targetHealth())")
        }
        for target in [plain, sni, hijacked] {
            #expect(
                await eventually(within: 30) { await value("probe_success{instance=\"\(target)\"}") == 1 },
                "probe_success of \(target)")
        }
        #expect(await value("ipdirect_probe_scenario_success{instance=\"\(sni)\",scenario=\"direct-sni\"}") == 1)
        #expect(await value("ipdirect_probe_scenario_success{instance=\"\(sni)\",scenario=\"direct-https\"}") == 0)
        #expect(
            await value("ipdirect_probe_scenario_success{instance=\"\(hijacked)\",scenario=\"system-dns\"}") == 0)
        #expect(
            await value("ipdirect_probe_scenario_success{instance=\"\(plain)\",scenario=\"system-dns\"}") == 1)
        // The hijacked name: system DNS disagrees with HTTPDNS, and the alert says so.
        let alert =
            "ALERTS{alertname=\"IPDirectHTTPDNSDisagreesWithSystemDNS\",instance=\"\(hijacked)\",alertstate=~\"pending|firing\"}"
        let alerted = await eventually(within: 60) { await value(alert) == 1 }
        if !alerted { Issue.record("no alert for \(hijacked). \(await prometheus.targetHealth())") }
        #expect(await prometheus.query("ALERTS{alertname=\"IPDirectNoWorkingTechnique\"}").isEmpty)

        await server.close()
        try await lab.shutdown()
    }
}

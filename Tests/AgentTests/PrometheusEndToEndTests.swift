// A real Prometheus (Debian's package) scrapes the agent every second on loopback; the test asks
// Prometheus's HTTP API for the outcome counter and a histogram, flips a lab fault, sees it change.
import Agent
import Foundation
import Lab
import NameResolution
import TestSupport
import Testing

/// Prometheus's binary; installed by scripts/install-deps.sh (as `make test` runs it) when
/// missing and this user may install packages. nil when it cannot be had here.
let prometheusBinary: String? = {
    func found() -> String? {
        ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }
    if let path = found() { return path }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let install = Process()
    install.executableURL = URL(fileURLWithPath: "/bin/bash")
    install.arguments = [root.appendingPathComponent("scripts/install-deps.sh").path, "test"]
    install.standardOutput = FileHandle.nullDevice
    try? install.run()
    install.waitUntilExit()
    return found()
}()

/// A Prometheus server on loopback, with a configuration of the test's, in a scratch directory.
final class PrometheusServer: @unchecked Sendable {
    let child: ChildProcess
    let port: Int
    let scratch: ScratchDirectory

    /// Starts Prometheus and returns once it answers `/-/ready`.
    ///
    /// The port is picked free, then handed to Prometheus; with the suites running in parallel,
    /// another test's listener can bind it in between. Prometheus then exits ("address already in
    /// use") and queries would reach that other server, so it is started again on a new port.
    /// When it cannot run here at all, the test is cancelled with what Prometheus wrote, as it is
    /// skipped when Prometheus is not installed: the test is of the agent, not of this machine.
    ///
    /// - Parameters:
    ///   - binary: Prometheus.
    ///   - configuration: prometheus.yml.
    ///   - files: other files beside it (rules), by name.
    static func start(
        binary: String, configuration: String, files: [String: String] = [:]
    ) async throws -> PrometheusServer {
        var said: [String] = []
        for _ in 0..<5 {
            let server = try PrometheusServer(
                binary: binary, configuration: configuration, files: files, port: freePort())
            let deadline = ContinuousClock.now + .seconds(60)
            while server.child.isRunning && ContinuousClock.now < deadline {
                // The body tells Prometheus from another test's server that took the port.
                if let ready = await fetch("http://127.0.0.1:\(server.port)/-/ready"), ready.status == 200,
                    ready.body.contains("Prometheus Server is Ready"), server.child.isRunning
                {
                    return server
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            let state = server.child.isRunning ? "not ready in 60 s" : "exited"
            said.append("port \(server.port): \(state): \(server.child.errorsText)")
            server.stop()
        }
        try Test.cancel(Comment(rawValue: "Prometheus did not come up here:\n" + said.joined(separator: "\n")))
    }

    /// Prometheus scraping one target's /metrics every second.
    static func start(binary: String, scraping target: String) async throws -> PrometheusServer {
        try await start(
            binary: binary,
            configuration: """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: ipdirect-agent
                    static_configs:
                      - targets: ['\(target)']
                """)
    }

    private init(binary: String, configuration: String, files: [String: String], port: Int) throws {
        self.port = port
        scratch = try ScratchDirectory("agent")
        let config = scratch.file("prometheus.yml")
        try configuration.write(toFile: config, atomically: true, encoding: .utf8)
        for (name, text) in files { try text.write(toFile: scratch.file(name), atomically: true, encoding: .utf8) }
        // Through TestSupport's ChildProcess: Foundation's Process.run crashed under the parallel suite.
        child = try ChildProcess(
            binary,
            [
                "--config.file=\(config)", "--storage.tsdb.path=\(scratch.file("data"))",
                "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
            ], captureOutput: false, errors: .captured)
    }

    /// How Prometheus last found the scrape target: its health and the scrape's error, for a
    /// failure message.
    func targetHealth() async -> String {
        guard let answer = await fetch("http://127.0.0.1:\(port)/api/v1/targets") else {
            return "Prometheus did not answer /api/v1/targets; it wrote: \(child.errorsText)"
        }
        return "/api/v1/targets: \(answer.body.prefix(2000)); Prometheus wrote: \(child.errorsText.suffix(2000))"
    }

    /// The instant vector for a PromQL query: each series' labels and value.
    func query(_ promql: String) async -> [(labels: [String: String], value: Double)] {
        var components = URLComponents(string: "http://127.0.0.1:\(port)/api/v1/query")!
        components.queryItems = [URLQueryItem(name: "query", value: promql)]
        guard let answer = await fetch(components.url!.absoluteString), answer.status == 200,
            let object = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
            let data = object["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else { return [] }
        return result.compactMap { series in
            guard let labels = series["metric"] as? [String: String], let pair = series["value"] as? [Any],
                pair.count == 2, let text = pair[1] as? String, let value = Double(text)
            else { return nil }
            return (labels, value)
        }
    }

    func stop() {
        // SIGKILL: a child of the test runner may start with SIGTERM ignored.
        child.signal(SIGKILL)
        scratch.remove()
    }
}

@Suite("Prometheus end to end", .serialized)
struct PrometheusEndToEndTests {
    @Test(
        "Prometheus scrapes the agent: outcome counter and phase histogram of a lab target, then the fault shows",
        .enabled(if: prometheusBinary != nil, "prometheus is not installed and could not be installed here"))
    func scrapedByPrometheus() async throws {
        let lab = try await Lab.start()
        let cache = try lab.resolverCache()
        let metrics = AgentMetrics(labels: [AgentLabel(name: "region", value: "lab")])
        let server = try await MetricsServer(host: "127.0.0.1", port: 0) { metrics.exposition() }
        let target = try AgentTarget(lab.url("sni-a.lab.test"))
        let agent = ProbeAgent(
            engine: lab.engine(cache), source: .fixed([target]),
            schedule: AgentSchedule(interval: 1, jitter: 0, concurrency: 2), sinks: AgentSinks(metrics: metrics),
            logger: CapturedLog().logger)
        let prometheus = try await PrometheusServer.start(
            binary: prometheusBinary!, scraping: "127.0.0.1:\(server.port)")
        defer { prometheus.stop() }

        try await withAgent(agent) {
            // Prometheus reaches the agent: a failed scrape says why rather than every query below
            // coming back empty.
            let scraped = await eventually(within: 60) {
                await prometheus.query("up{job=\"ipdirect-agent\"}").first?.value == 1
            }
            if !scraped { Issue.record("Prometheus did not scrape the agent. \(await prometheus.targetHealth())") }
            let ok = "ipdirect_probe_outcomes_total{target=\"\(target.label)\",scenario=\"direct-sni\",outcome=\"ok\"}"
            #expect(await eventually(within: 90) { await prometheus.query(ok).first.map { $0.value >= 1 } ?? false })
            let series = await prometheus.query(ok)
            #expect(series.first?.labels["region"] == "lab")
            #expect(series.first?.labels["job"] == "ipdirect-agent")
            let histogram =
                "ipdirect_probe_phase_seconds_count{target=\"\(target.label)\",scenario=\"direct-sni\",phase=\"total\"}"
            #expect(
                await eventually(within: 30) { await prometheus.query(histogram).first.map { $0.value >= 1 } ?? false })
            // The buckets make a histogram Prometheus can take a quantile of.
            let median =
                "histogram_quantile(0.5, rate(ipdirect_probe_phase_seconds_bucket{phase=\"total\",scenario=\"direct-sni\"}[30s]))"
            #expect(
                await eventually(within: 30) {
                    await prometheus.query(median).first.map { $0.value.isFinite && $0.value > 0 } ?? false
                })

            // HTTPDNS goes down and the cached answer is dropped: the next rounds find no address.
            try await lab.setFault(.down)
            cache.flush()
            let failed =
                "ipdirect_probe_outcomes_total{target=\"\(target.label)\",scenario=\"direct-sni\",outcome=\"dns-failed\"}"
            #expect(
                await eventually(within: 60) { await prometheus.query(failed).first.map { $0.value >= 1 } ?? false })
            #expect(
                await eventually(within: 30) {
                    await prometheus.query("ipdirect_target_direct_working{target=\"\(target.label)\"}").first?.value
                        == 0
                })
            #expect(
                await eventually(within: 30) {
                    await prometheus.query("ipdirect_httpdns_errors_total{provider=\"alicloud\"}").first.map {
                        $0.value >= 1
                    } ?? false
                })
        }
        await server.close()
        try await lab.shutdown()
    }
}

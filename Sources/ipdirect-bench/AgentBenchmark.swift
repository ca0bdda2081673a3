// The agent under load: 1,000 lab targets every 10 s for 10 minutes (AGENT_BENCH_SECONDS), with
// /metrics scraped each second and JSON Lines rotating; resident memory and open descriptors sampled.
import Agent
import Foundation
import Lab
import Logging
import NameResolution
import Probe

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

enum AgentBenchmark {
    static func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = Double(environment["AGENT_BENCH_SECONDS"] ?? "") ?? 600
        let count = Int(environment["AGENT_BENCH_TARGETS"] ?? "") ?? 1000
        let interval = Double(environment["AGENT_BENCH_INTERVAL"] ?? "") ?? 10

        let lab = try await Lab.start()
        var configuration = ResolverConfiguration(
            provider: .alicloud, endpoint: lab.endpoints.httpdns, account: lab.endpoints.account, timeout: 10)
        configuration.fallbackToSystem = false
        configuration.cachePath = nil
        let cache = ResolverCache(configuration: configuration, provider: try ProviderFactory.make(configuration))
        var options = ProbeOptions()
        options.caFile = lab.endpoints.ca
        options.concurrency = 64 * 4
        let engine = ProbeEngine(resolve: { await cache.resolve($0) }, options: options, environment: [:])

        let names = [
            "plain.lab.test", "single.lab.test", "sni-a.lab.test", "sni-b.lab.test", "default.lab.test",
            "redirect.lab.test",
        ]
        let targets = try (0..<count).map { index -> AgentTarget in
            let name = names[index % names.count]
            let base = lab.endpoints.hosts[name] ?? "https://\(name)/"
            return try AgentTarget(base + "bench/\(index)")
        }
        let directory = NSTemporaryDirectory() + "ipdirect-agent-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let metrics = AgentMetrics(labels: [AgentLabel(name: "region", value: "bench")])
        let server = try await MetricsServer(host: "127.0.0.1", port: 0) { metrics.exposition() }
        let jsonl = try RotatingJSONL(
            path: directory + "/agent.jsonl", limit: 20 * 1024 * 1024, keep: 2, metrics: metrics, logger: quiet)
        let agent = ProbeAgent(
            engine: engine, source: .fixed(targets),
            schedule: AgentSchedule(interval: interval, jitter: 0.1, concurrency: 64),
            sinks: AgentSinks(metrics: metrics, jsonl: jsonl), logger: quiet)
        let counting = agent.countResolverEvents(cache.events())
        let scraper = Task {
            var scrapes = 0
            var bytes = 0
            while !Task.isCancelled {
                if let url = URL(string: "http://127.0.0.1:\(server.port)/metrics"),
                    let (data, _) = try? await URLSession.shared.data(from: url)
                {
                    scrapes += 1
                    bytes = data.count
                }
                try? await Task.sleep(for: .seconds(1))
            }
            return (scrapes, bytes)
        }

        print("\(count) targets every \(interval) s for \(Int(seconds)) s; /metrics scraped each second")
        print("  t(s)  rounds  RSS(MB)  FDs")
        let running = Task { await agent.run() }
        let began = Date()
        var samples: [(Double, Int, Double, Int)] = []
        while Date().timeIntervalSince(began) < seconds {
            try await Task.sleep(for: .seconds(min(10, seconds)))
            let sample = (
                Date().timeIntervalSince(began), agent.roundsCompleted,
                Double(WatchBenchmark.residentBytes()) / 1_048_576, openDescriptors()
            )
            samples.append(sample)
            print(String(format: "  %4.0f  %6d  %7.1f  %3d", sample.0, sample.1, sample.2, sample.3))
        }
        agent.stop()
        await running.value
        scraper.cancel()
        let (scrapes, bytes) = await scraper.value
        counting.cancel()
        await server.close()
        try await lab.shutdown()

        // Flat means: after the first minute (caches, buffers, the registry's series all made),
        // the last sample is within a few MB of the first, and descriptors do not climb.
        let settled = samples.filter { $0.0 >= 60 }
        if let first = settled.first, let last = settled.last {
            print(
                String(
                    format: "after the first minute: RSS %.1f → %.1f MB (%+.1f), FDs %d → %d; max RSS %.1f MB",
                    first.2, last.2, last.2 - first.2, first.3, last.3, settled.map(\.2).max() ?? 0))
        }
        let probes = (samples.last?.1 ?? 0) * count
        print(
            "\(samples.last?.1 ?? 0) rounds, \(probes) URL probes; \(scrapes) scrapes of \(bytes) bytes; /metrics series bounded by \(names.count) target labels"
        )
    }

    /// Descriptors open in this process (/proc/self/fd).
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }
}

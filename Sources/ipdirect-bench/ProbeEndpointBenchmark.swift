// `/probe` under load: the release agent with no targets of its own answers Prometheus-style
// requests for a lab origin; its overhead against `ipdirect probe`, then many requests at once.
import Foundation
import Lab

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

enum ProbeEndpointBenchmark {
    static func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let total = Int(environment["PROBE_BENCH_REQUESTS"] ?? "") ?? 200
        let atOnce = Int(environment["PROBE_BENCH_AT_ONCE"] ?? "") ?? 200
        let probeConcurrency = environment["PROBE_BENCH_CONCURRENCY"] ?? "16"
        guard let binary = releaseIPDirect("probe-endpoint") else { return }

        let lab = try await Lab.start()
        let e = lab.endpoints
        let directory = NSTemporaryDirectory() + "ipdirect-probe-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let provider = [
            "--provider", "alicloud", "--endpoint", e.httpdns, "--account", e.account, "--cacert", e.ca,
            "--dns-server", e.dns,
        ]
        var variables = environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        variables["IPDIRECT_HTTPDNS_SECRET"] = e.secret
        variables["XDG_CACHE_HOME"] = directory
        variables["XDG_CONFIG_HOME"] = directory
        let port = 20_000 + Int.random(in: 0..<20_000)
        let agent = Process()
        agent.executableURL = URL(fileURLWithPath: binary)
        agent.arguments =
            ["agent"] + provider + [
                "--metrics-listen", "127.0.0.1:\(port)", "--probe-concurrency", probeConcurrency, "--log-format",
                "json",
            ]
        agent.environment = variables
        agent.standardOutput = FileHandle.nullDevice
        agent.standardError = FileHandle.nullDevice
        try agent.run()
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGTERM) } }

        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = max(atOnce, 16)
        configuration.timeoutIntervalForRequest = 30
        let session = URLSession(configuration: configuration)
        let target = e.hosts["sni-a.lab.test"] ?? "https://sni-a.lab.test/"
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        let probeURL = URL(string: "http://127.0.0.1:\(port)/probe?target=\(encoded)&scenario=direct-sni")!
        /// One GET of `/probe`: its time, its status (0 when none came) and, then, why not.
        func get() async -> (seconds: Double, status: Int, failure: String?) {
            let started = Date()
            do {
                let status = (try await session.data(from: probeURL).1 as? HTTPURLResponse)?.statusCode ?? 0
                return (Date().timeIntervalSince(started), status, nil)
            } catch {
                // What a failed request met, by kind: the count of each is printed.
                let failure = (error as? URLError).map { "URLError \($0.code.rawValue): \($0.localizedDescription)" }
                return (Date().timeIntervalSince(started), 0, failure ?? "\(error)")
            }
        }
        var ready = false
        for _ in 0..<100 where !ready {
            ready = await get().status == 200
            if !ready { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard ready else {
            print("probe-endpoint: the agent did not answer /probe")
            try await lab.shutdown()
            return
        }

        // The endpoint's overhead: the same probe through /probe and as a command, one at a time.
        var endpoint: [Double] = []
        var command: [Double] = []
        for _ in 0..<20 {
            endpoint.append(await get().seconds)
            let started = Date()
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: binary)
            probe.arguments = ["probe", target, "--scenario", "direct-sni", "--format", "json"] + provider
            probe.environment = variables
            probe.standardOutput = FileHandle.nullDevice
            probe.standardError = FileHandle.nullDevice
            try probe.run()
            probe.waitUntilExit()
            command.append(Date().timeIntervalSince(started))
        }
        print(
            String(
                format: "one at a time, median of 20: /probe %.1f ms, ipdirect probe (a process each) %.1f ms",
                median(endpoint) * 1000, median(command) * 1000))

        // Many at once: answer times, 503s and the agent's peak resident memory.
        let pid = agent.processIdentifier
        let peak = Task {
            var peak = 0.0
            while !Task.isCancelled {
                peak = max(peak, AgentBenchmark.residentMegabytes(pid))
                try? await Task.sleep(for: .milliseconds(50))
            }
            return peak
        }
        let began = Date()
        let results = await withTaskGroup(of: (seconds: Double, status: Int, failure: String?).self) { group in
            var results: [(seconds: Double, status: Int, failure: String?)] = []
            var started = 0
            while started < min(atOnce, total) {
                group.addTask { await get() }
                started += 1
            }
            for await result in group {
                results.append(result)
                if started < total {
                    group.addTask { await get() }
                    started += 1
                }
            }
            return results
        }
        let wall = Date().timeIntervalSince(began)
        peak.cancel()
        let times = results.map(\.seconds)
        print(
            String(
                format:
                    "%d requests, %d at a time, --probe-concurrency %@: p50 %.3f s, p99 %.3f s, %d answered 503, %d failed, in %.1f s; peak RSS %.1f MB",
                total, atOnce, probeConcurrency, percentile(times, 0.5), percentile(times, 0.99),
                results.filter { $0.status == 503 }.count, results.filter { $0.status == 0 }.count, wall,
                await peak.value))
        var failures: [String: Int] = [:]
        for failure in results.compactMap(\.failure) { failures[failure, default: 0] += 1 }
        for (failure, count) in failures.sorted(by: { $0.value > $1.value }) { print("  failed \(count): \(failure)") }
        kill(pid, SIGTERM)
        agent.waitUntilExit()
        try await lab.shutdown()
    }
}

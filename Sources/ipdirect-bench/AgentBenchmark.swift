// The agent under load: `ipdirect agent` (its own process, beside this one's lab) probes 1,000 lab
// targets every 10 s for 10 minutes (AGENT_BENCH_SECONDS); /metrics scraped each second, JSON Lines
// rotating; the agent's resident memory and open descriptors sampled from /proc, printed each minute.
import Foundation
import Lab

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

enum AgentBenchmark {
    static func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = Double(environment["AGENT_BENCH_SECONDS"] ?? "") ?? 600
        let count = Int(environment["AGENT_BENCH_TARGETS"] ?? "") ?? 1000
        let interval = environment["AGENT_BENCH_INTERVAL"] ?? "10"
        guard let binary = releaseIPDirect("agent") else { return }

        // The lab lives here, so its ledger (every request it answered) is not in the agent's figures.
        let lab = try await Lab.start()
        let e = lab.endpoints
        let directory = NSTemporaryDirectory() + "ipdirect-agent-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let names = [
            "plain.lab.test", "single.lab.test", "sni-a.lab.test", "sni-b.lab.test", "default.lab.test",
            "redirect.lab.test",
        ]
        let list = (0..<count).map { index in
            let name = names[index % names.count]
            return (e.hosts[name] ?? "https://\(name)/") + "bench/\(index)"
        }
        try (list.joined(separator: "\n") + "\n").write(
            toFile: directory + "/targets.txt", atomically: true, encoding: .utf8)
        let port = 20_000 + Int.random(in: 0..<20_000)

        let agent = Process()
        agent.executableURL = URL(fileURLWithPath: binary)
        agent.arguments = [
            "agent", "--provider", "alicloud", "--endpoint", e.httpdns, "--account", e.account, "--cacert", e.ca,
            "--dns-server", e.dns, "--input", directory + "/targets.txt", "--interval", interval, "--concurrency",
            "64", "--metrics-listen", "127.0.0.1:\(port)", "--jsonl", directory + "/probes.jsonl", "--rotate", "20MB",
            "--log-format", "json",
        ]
        var variables = environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        variables["IPDIRECT_HTTPDNS_SECRET"] = e.secret
        variables["XDG_CACHE_HOME"] = directory
        variables["XDG_CONFIG_HOME"] = directory
        agent.environment = variables
        agent.standardOutput = FileHandle.nullDevice
        let log = directory + "/agent.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        agent.standardError = FileHandle(forWritingAtPath: log)
        try agent.run()
        let pid = agent.processIdentifier

        let scraper = Task {
            var scrapes = 0
            var bytes = 0
            while !Task.isCancelled {
                if let url = URL(string: "http://127.0.0.1:\(port)/metrics"),
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
        print("  t(s)  rounds  RSS(MB)  anon(MB)  FDs")
        let began = Date()
        var samples: [(at: Double, rounds: Int, megabytes: Double, descriptors: Int)] = []
        var printed = 0
        while Date().timeIntervalSince(began) < seconds, agent.isRunning {
            try await Task.sleep(for: .seconds(min(10, seconds)))
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let sample = (
                at: Date().timeIntervalSince(began),
                rounds: text.components(separatedBy: "\"round-finished\"").count - 1,
                megabytes: residentMegabytes(pid), descriptors: openDescriptors(pid)
            )
            samples.append(sample)
            // Sampled every 10 s (the maximum below sees them all), printed each minute and at the end.
            let minute = Int(sample.at / 60)
            guard minute > printed || Date().timeIntervalSince(began) >= seconds || !agent.isRunning else { continue }
            printed = minute
            print(
                String(
                    format: "  %4.0f  %6d  %7.1f  %8.1f  %3d", sample.at, sample.rounds, sample.megabytes,
                    residentMegabytes(pid, field: "RssAnon:"), sample.descriptors))
        }
        kill(pid, SIGTERM)
        while agent.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        scraper.cancel()
        let (scrapes, bytes) = await scraper.value
        try await lab.shutdown()

        // Flat means: after the first minute (caches, buffers and the registry's series made),
        // memory stays within a few MB and descriptors do not climb between rounds.
        let settled = samples.filter { $0.at >= 60 }
        if let first = settled.first, let last = settled.last {
            print(
                String(
                    format: "after the first minute: RSS %.1f → %.1f MB (%+.1f, max %.1f); FDs %d → %d (max %d)",
                    first.megabytes, last.megabytes, last.megabytes - first.megabytes,
                    settled.map(\.megabytes).max() ?? 0, first.descriptors, last.descriptors,
                    settled.map(\.descriptors).max() ?? 0))
        }
        let finalLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let overruns = finalLog.components(separatedBy: "\"round-overrun\"").count - 1
        print(
            "\(samples.last?.rounds ?? 0) rounds (\(overruns) overran the interval); \(scrapes) scrapes of \(bytes) bytes; exit \(agent.terminationStatus) on SIGTERM"
        )
    }

    /// VmRSS of a process (or another kB field of /proc/PID/status: `RssAnon:` is its heap and
    /// stacks, without mapped files), in MB (Linux).
    static func residentMegabytes(_ pid: Int32, field: String = "VmRSS:") -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    /// Descriptors a process has open (/proc/PID/fd).
    static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}

// Memory and pace of a large `ipdirect probe` batch: the release binary over N lab URLs with its
// RSS sampled as it runs (the curve, the peak), and 5,000 URLs against a baseline binary if given.
import Foundation
import Lab

enum BatchBenchmark {
    /// URLs in the large run (IPDIRECT_BENCH_BATCH_URLS), stopped with Ctrl-C after `timeLimit`.
    static var largeCount: Int {
        Int(ProcessInfo.processInfo.environment["IPDIRECT_BENCH_BATCH_URLS"] ?? "") ?? 100_000
    }
    static let timeLimit: Double = 600
    static let smallCount = 5_000
    static let concurrency = 50
    static let memoryAim = 150.0

    static func run() async throws {
        guard let binary = releaseIPDirect("batch") else { return }
        // IPDIRECT_BENCH_BASELINE: another ipdirect binary (main before streaming) for the 5,000-URL ratio.
        let baseline = ProcessInfo.processInfo.environment["IPDIRECT_BENCH_BASELINE"].flatMap {
            FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil
        }
        try await withLab { lab in
            let small = try measure(lab, binary: binary, count: smallCount, curve: false)
            print(small.line("this build, \(smallCount) URLs"))
            if let baseline {
                let old = try measure(lab, binary: baseline, count: smallCount, curve: false)
                print(old.line("baseline, \(smallCount) URLs"))
                print(
                    String(
                        format: "peak RSS %.0f MB vs %.0f MB (%.1fx less); time per URL %.2f ms vs %.2f ms",
                        small.peakMB, old.peakMB, old.peakMB / small.peakMB, small.msPerURL, old.msPerURL))
            } else {
                print("no baseline: set IPDIRECT_BENCH_BASELINE to an older ipdirect binary to compare")
            }
            let large = try measure(lab, binary: binary, count: largeCount, curve: true)
            print(large.line("this build, \(largeCount) URLs asked"))
            let verdict = large.peakMB < memoryAim ? "under" : "over"
            print(String(format: "peak RSS %.0f MB: %@ the %.0f MB aim", large.peakMB, verdict, memoryAim))
        }
    }

    struct Result {
        var done: Int
        var seconds: Double
        var peakMB: Double
        var interrupted: Bool
        var msPerURL: Double { done > 0 ? seconds * 1000 / Double(done) : 0 }

        func line(_ what: String) -> String {
            String(
                format: "%@: %d URLs done in %.1f s (%.2f ms a URL%@), peak RSS %.0f MB", what, done, seconds,
                msPerURL, interrupted ? ", stopped at the time limit" : "", peakMB)
        }
    }

    /// Runs one batch of `count` URLs, sampling the process's RSS every half second.
    private static func measure(_ lab: Lab, binary: String, count: Int, curve: Bool) throws -> Result {
        let e = lab.endpoints
        let names = ["single.lab.test", "sni-a.lab.test", "sni-b.lab.test", "default.lab.test", "short-ttl.lab.test"]
        let scratch = NSTemporaryDirectory() + "ipdirect-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let urlFile = scratch + "/urls.txt"
        var text = ""
        for index in 0..<count {
            let name = names[index % names.count]
            text += (e.hosts[name] ?? "https://\(name)/") + "echo?n=\(index)\n"
        }
        try text.write(toFile: urlFile, atomically: true, encoding: .utf8)
        text = ""

        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        environment["XDG_CONFIG_HOME"] = scratch
        environment["XDG_CACHE_HOME"] = scratch
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "probe", "--input", urlFile, "--scenario", "direct-sni", "--concurrency", String(concurrency),
            "--provider", "alicloud", "--endpoint", e.httpdns, "--account", e.account, "--cacert", e.ca,
            "--timeout", "10", "--format", "jsonl",
        ]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let servedBefore = lab.originRequestsServed()
        let start = Date()
        try process.run()
        let pid = process.processIdentifier
        var peak = 0.0
        var interrupted = false
        var lastPrinted = -30.0
        if curve { print("   time      done   RSS MB") }
        while process.isRunning {
            Thread.sleep(forTimeInterval: 0.5)
            let rss = residentMB(pid)
            peak = max(peak, rss, peakMB(pid))
            let elapsed = Date().timeIntervalSince(start)
            if curve && elapsed - lastPrinted >= 15 {
                lastPrinted = elapsed
                let done = lab.originRequestsServed() - servedBefore
                print(String(format: "%6.0f s  %8d   %6.1f", elapsed, done, rss))
            }
            if elapsed > timeLimit && !interrupted {
                interrupted = true
                kill(pid, SIGINT)
            }
        }
        let seconds = Date().timeIntervalSince(start)
        return Result(
            done: lab.originRequestsServed() - servedBefore, seconds: seconds, peakMB: peak, interrupted: interrupted)
    }

    /// A field of /proc/PID/status in MB (VmRSS now, VmHWM the peak so far); 0 once it is gone.
    private static func statusMB(_ pid: Int32, _ field: String) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return 0 }
        let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
        return kilobytes / 1024
    }

    private static func residentMB(_ pid: Int32) -> Double { statusMB(pid, "VmRSS") }

    private static func peakMB(_ pid: Int32) -> Double { statusMB(pid, "VmHWM") }
}

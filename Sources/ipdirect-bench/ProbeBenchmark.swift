// 600 lab HTTPS URLs through the release `ipdirect probe --scenario direct-sni` against the
// same requests through `curl --parallel` with the same --resolve pins, side by side, alternating.
import Foundation
import Lab

enum ProbeBenchmark {
    static let urlCount = 600
    static let rounds = 6
    static let concurrency = 50

    static func run() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("ipdirect").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            print("skipped: build the release ipdirect first (make bench does): \(binary) is missing")
            return
        }
        guard let curl = ["/usr/bin/curl", "/usr/local/bin/curl"].first(where: FileManager.default.isExecutableFile)
        else {
            print("skipped: curl is not installed")
            return
        }
        let lab = try await Lab.start(LabOptions())
        do {
            try await measure(lab, binary: binary, curl: curl)
        } catch {
            try? await lab.shutdown()
            throw error
        }
        try await lab.shutdown()
    }

    private static func measure(_ lab: Lab, binary: String, curl: String) async throws {
        let e = lab.endpoints
        let names = ["single.lab.test", "sni-a.lab.test", "sni-b.lab.test", "default.lab.test", "short-ttl.lab.test"]
        let urls = (0..<urlCount).map { index -> String in
            let name = names[index % names.count]
            return (e.hosts[name] ?? "https://\(name)/") + "echo?n=\(index)"
        }
        let pins = names.compactMap { name in e.port(of: name).map { "\(name):\($0):127.0.0.1" } }

        let scratch = NSTemporaryDirectory() + "ipdirect-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let urlFile = scratch + "/urls.txt"
        try urls.joined(separator: "\n").write(toFile: urlFile, atomically: true, encoding: .utf8)
        // curl reads the URLs from a config file; -o /dev/null for each.
        let curlConfig = scratch + "/curl.conf"
        try urls.map { "url = \"\($0)\"\noutput = \"/dev/null\"" }.joined(separator: "\n")
            .write(toFile: curlConfig, atomically: true, encoding: .utf8)

        let ipdirectArguments = [
            "probe", "--input", urlFile, "--scenario", "direct-sni", "--concurrency", String(concurrency),
            "--provider", "alicloud", "--endpoint", e.httpdns, "--account", e.account, "--cacert", e.ca,
            "--timeout", "10",
        ]
        // Both sides open a fresh connection with a full handshake for every request:
        // Connection: close, and no TLS session reuse (ipdirect turns its session cache off).
        let curlArguments =
            ["--parallel", "--parallel-max", String(concurrency), "--silent", "--show-error", "--fail"]
            + ["--cacert", e.ca, "--no-sessionid", "-H", "Connection: close", "--noproxy", "*"]
            + pins.flatMap { ["--resolve", $0] } + ["--config", curlConfig]
        // Own configuration and cache directories, so the user's files play no part.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        environment["XDG_CONFIG_HOME"] = scratch
        environment["XDG_CACHE_HOME"] = scratch

        print("\(urlCount) lab HTTPS URLs, direct-sni, \(concurrency) at a time, \(rounds) rounds, alternating")
        print("round   ipdirect probe   curl --parallel   ratio")
        var ratios: [Double] = []
        for round in 1...rounds {
            var ours = 0.0
            var theirs = 0.0
            // Alternate who goes first, so neither always meets a warm or a cold machine.
            for side in round % 2 == 1 ? [0, 1] : [1, 0] {
                if side == 0 {
                    ours = try time(binary, ipdirectArguments, environment: environment, expect: [0])
                } else {
                    theirs = try time(curl, curlArguments, environment: environment, expect: [0])
                }
            }
            ratios.append(ours / theirs)
            print(
                String(format: "%5d   %11.0f ms   %12.0f ms   %.2fx", round, ours * 1000, theirs * 1000, ours / theirs))
        }
        let sorted = ratios.sorted()
        let median =
            sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        let verdict = median <= 1.25 ? "within" : "outside"
        print(String(format: "median wall-time ratio ipdirect/curl: %.2fx (%@ the 1.25x aim)", median, verdict))
        let served = lab.originRequests().count
        print("the lab answered \(served) requests (expected \(rounds * urlCount * 2))")
    }

    /// Runs a program to completion, output discarded, and returns its wall time in seconds.
    private static func time(
        _ path: String, _ arguments: [String], environment: [String: String], expect: [Int32]
    )
        throws -> Double
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        let start = DispatchTime.now().uptimeNanoseconds
        try process.run()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if !expect.contains(process.terminationStatus) {
            let name = URL(fileURLWithPath: path).lastPathComponent
            print("\(name) exited \(process.terminationStatus): \(String(decoding: stderr.prefix(500), as: UTF8.self))")
        }
        return elapsed
    }
}

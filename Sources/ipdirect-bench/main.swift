// ipdirect-bench: the benchmarks, run on demand (`make bench` or `ipdirect-bench NAME`).
// Each measures as a ratio against a peer run side by side, since the machines are noisy.
import Foundation

let benchmarks: [(name: String, run: () async throws -> Void)] = [
    ("cache", CacheBenchmark.run),
    ("probe", ProbeBenchmark.run),
    ("batch", BatchBenchmark.run),
    ("console", ConsoleBenchmark.run),
    ("lab", LabBenchmark.run),
    ("watch", WatchBenchmark.run),
    ("compare", CompareBenchmark.run),
    ("agent", AgentBenchmark.run),
    ("probe-endpoint", ProbeEndpointBenchmark.run),
    ("probe-blackbox", BlackboxBenchmark.run),
    ("startup", StartupBenchmark.run),
]

/// The release `ipdirect` beside this benchmark binary (`make bench` builds both); nil, with a
/// line saying what to build, when it is not there.
func releaseIPDirect(_ benchmark: String) -> String? {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("ipdirect").path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        print("\(benchmark): skipped: build the release ipdirect first (make bench does): \(binary) is missing")
        return nil
    }
    return binary
}

/// Run only when named (`ipdirect-bench agent`): they take minutes, not seconds.
let longRunning: Set<String> = ["agent", "probe-endpoint", "probe-blackbox"]

let wanted = Set(CommandLine.arguments.dropFirst())
for benchmark in benchmarks
where wanted.isEmpty ? !longRunning.contains(benchmark.name) : wanted.contains(benchmark.name) {
    print("== \(benchmark.name)")
    try await benchmark.run()
}

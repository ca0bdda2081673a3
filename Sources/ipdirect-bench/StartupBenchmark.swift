// Start-up of the shipped binary: `ipdirect --version` against `curl --version`, run alternately
// (the machine is shared), and the binary's size: what a user of the package meets first.
import Foundation

enum StartupBenchmark {
    /// Runs `STARTUP_BENCH_RUNS` (20) rounds of each command and prints the medians and their ratio.
    ///
    /// The binary measured is `STARTUP_BENCH_BINARY`, else `make release`'s
    /// (.build-release/release/ipdirect, the Swift runtime linked in), else the release build beside
    /// this benchmark.
    static func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let shipped = ".build-release/release/ipdirect"
        let binary =
            environment["STARTUP_BENCH_BINARY"]
            ?? (FileManager.default.isExecutableFile(atPath: shipped) ? shipped : releaseIPDirect("startup"))
        guard let binary else { return }
        let runs = Int(environment["STARTUP_BENCH_RUNS"] ?? "") ?? 20
        let scratch = NSTemporaryDirectory()
        let loadBefore = loadAverage()
        var ours: [ChildRun] = []
        var curl: [ChildRun] = []
        for _ in 0..<runs {
            ours.append(try ChildRun.run(binary, ["--version"], environment: environment, scratch: scratch))
            curl.append(try ChildRun.run("/usr/bin/curl", ["--version"], environment: environment, scratch: scratch))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: binary)[.size] as? Int) ?? 0
        print("binary: \(binary), \(size / 1_048_576) MiB; load average \(loadBefore) before, \(loadAverage()) after")
        for (figure, value) in [("wall", \ChildRun.wall), ("CPU", \ChildRun.cpu)] {
            let mine = median(ours.map { $0[keyPath: value] }) * 1e3
            let theirs = median(curl.map { $0[keyPath: value] }) * 1e3
            print(
                String(
                    format:
                        "--version %@: ipdirect median %.2f ms, curl median %.2f ms, ratio %.2fx (aim <= 1.20x; %d runs each, alternating)",
                    figure, mine, theirs, mine / theirs, runs))
        }
    }
}

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
        var ours: [Double] = []
        var curl: [Double] = []
        for _ in 0..<runs {
            ours.append(try timed(binary, ["--version"]))
            curl.append(try timed("/usr/bin/curl", ["--version"]))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: binary)[.size] as? Int) ?? 0
        print("binary: \(binary), \(size / 1_048_576) MiB")
        print(
            String(
                format:
                    "--version: ipdirect median %.2f ms, curl median %.2f ms, ratio %.2fx (%d runs each, alternating)",
                median(ours), median(curl), median(ours) / median(curl), runs))
    }

    /// Wall time of one run to its exit, in milliseconds.
    private static func timed(_ executable: String, _ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let start = DispatchTime.now().uptimeNanoseconds
        try process.run()
        process.waitUntilExit()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }
}

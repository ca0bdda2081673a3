// Start-up of the shipped binary: `ipdirect --version` against `curl --version`, run alternately
// (the machine is shared), the binary's size, and the time to the first output of the commands a
// user starts most (the console's first screen, a probe's answer): what a user meets first.
import Foundation
import FoundationGaps

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
        try firstOutputs(binary, runs: max(3, runs / 4), environment: environment, scratch: scratch)
    }

    /// The time from start to the first byte each command writes, median of `runs`: the console's
    /// first screen (under `script`, which gives it a terminal; no configuration file, so no lab),
    /// `--help`, and `probe --lab` (which starts the embedded lab, its keys made at start, first).
    static func firstOutputs(_ binary: String, runs: Int, environment: [String: String], scratch: String) throws {
        var quiet = environment
        quiet["HOME"] = scratch
        quiet["TERM"] = "xterm-256color"
        quiet["XDG_CONFIG_HOME"] = scratch
        let commands: [(label: String, path: String, arguments: [String])] = [
            ("--help", binary, ["--help"]),
            ("the console's first screen", "/usr/bin/script", ["-qfec", "'\(binary)'", "/dev/null"]),
            ("probe --lab https://sni-a.lab.test/", binary, ["probe", "--lab", "https://sni-a.lab.test/"]),
        ]
        for command in commands {
            var times: [Double] = []
            for _ in 0..<runs {
                times.append(try timeToFirstByte(command.path, command.arguments, environment: quiet))
            }
            print(
                String(format: "first output, %@: median %.1f ms (%d runs)", command.label, median(times) * 1e3, runs))
        }
    }

    /// Starts a program with its stdout on a pipe, waits (at most 30 s) for its first byte, then
    /// ends it (SIGTERM, SIGKILL after 5 s; under script(1) the console goes with its terminal) and
    /// returns the seconds waited.
    static func timeToFirstByte(_ path: String, _ arguments: [String], environment: [String: String]) throws -> Double {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchError("cannot make a pipe: \(String(cString: strerror(errno)))") }
        defer { close(ends[0]) }
        let start = DispatchTime.now().uptimeNanoseconds
        let pid: pid_t
        do {
            // The child gets the write end as its stdout and no other descriptor of ours.
            pid = try spawnProgram(path, arguments, environment: environment, output: .descriptor(ends[1]))
            close(ends[1])
        } catch {
            close(ends[1])
            throw BenchError("cannot start \(path): \(error)")
        }
        var poller = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, 30_000)
        let waited = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        ChildRun.stop(pid, with: SIGTERM)
        guard ready == 1 else { throw BenchError("\(path) \(arguments.joined(separator: " ")) wrote nothing in 30 s") }
        return waited
    }
}

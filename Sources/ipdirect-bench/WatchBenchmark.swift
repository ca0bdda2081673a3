// The watch history's cost: a 24-hour watch at 5 s (17,280 rounds) recorded into the bounded
// history, its resident memory growth, a full walk of it, and the console's watch view drawn over it.
import Console
import Foundation
import Probe

enum WatchBenchmark {
    static func run() async throws {
        let rounds = WatchHistory.defaultCapacity
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let outcomes: [Outcome] = [.ok, .ok, .ok, .connectFailed, .timeout, .certNameMismatch]
        let before = residentBytes()
        var history = WatchHistory()
        let began = DispatchTime.now().uptimeNanoseconds
        // Two days of rounds: the second day must push the first out, not grow the history.
        for index in 0..<(2 * rounds) {
            let flap = outcomes[(index / 97) % outcomes.count]
            let cells = Scenario.allCases.map { scenario in
                WatchCell(
                    scenario: scenario, outcome: scenario == .directHTTPS ? flap : .ok, ms: Double(index % 400) / 3,
                    status: 200)
            }
            history.record(
                WatchRound(
                    round: index + 1, at: start.addingTimeInterval(Double(index) * 5),
                    url: "https://watch.bench.test/", cells: cells, recommended: .directSNI))
        }
        let recordNs = DispatchTime.now().uptimeNanoseconds - began
        let after = residentBytes()
        let walkBegan = DispatchTime.now().uptimeNanoseconds
        var sum = 0.0
        for round in history.rounds { sum += round.cells.first?.ms ?? 0 }
        let walkNs = DispatchTime.now().uptimeNanoseconds - walkBegan
        print(
            "recorded \(2 * rounds) rounds (\(history.total) total), kept \(history.rounds.count), changes kept \(history.changed.count)"
        )
        print(
            String(
                format: "record: %.2f µs a round; walk of the kept rounds: %.2f ms (checksum %.0f)",
                Double(recordNs) / Double(2 * rounds) / 1000, Double(walkNs) / 1e6, sum))
        print(
            String(
                format: "resident memory growth for the history: %.1f MB (%.0f bytes a kept round)",
                Double(after - before) / 1_048_576, Double(after - before) / Double(history.rounds.count)))
        watchView(rounds: 10_000)
    }

    /// The console's watch view over `rounds` rounds of history, against the floor of filling the frame.
    static func watchView(rounds: Int) {
        let start = ConsoleBenchmark.start
        var watch = WatchState(target: "watch.bench.test", now: start)
        let outcomes: [Outcome] = [.ok, .ok, .ok, .connectFailed, .timeout, .httpStatus]
        for index in 0..<rounds {
            let flap = outcomes[(index / 97) % outcomes.count]
            let cells = Scenario.allCases.map { scenario in
                WatchCell(
                    scenario: scenario, outcome: scenario == .directSNI ? flap : .ok,
                    ms: Double((index * 37) % 400) / 3, status: 200)
            }
            watch.history.record(
                WatchRound(
                    round: index + 1, at: start.addingTimeInterval(Double(index) * 5),
                    url: "https://watch.bench.test/", cells: cells, recommended: flap == .ok ? .directSNI : nil))
        }
        for size in ConsoleBenchmark.sizes {
            var state = ConsoleState(
                size: size, now: start.addingTimeInterval(Double(rounds) * 5), engine: ConsoleBenchmark.engine,
                timeZone: .gmt)
            state.watch = watch
            state.mode = .command
            let ours = ConsoleBenchmark.timeFrames { render(state) }
            precondition(render(state).text.contains("Watching watch.bench.test"))
            ConsoleBenchmark.report(
                "watch view, \(rounds) rounds (\(watch.history.changed.count) changes kept)", size, ours: ours)
        }
    }

    /// Resident set size from /proc/self/statm (Linux); 0 elsewhere.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

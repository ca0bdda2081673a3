// Watching a host over time: one probe a round, a bounded history of what each scenario did,
// and the rounds where the verdict changed. Shared by the console, `probe --watch` and an agent.
import FoundationEssentials

/// A fixed-capacity buffer keeping the newest elements; the oldest fall off.
public struct RingBuffer<Element: Sendable>: Sendable, RandomAccessCollection {
    public let capacity: Int
    private var storage: [Element] = []
    private var head = 0

    /// - Parameter capacity: the most elements kept (at least 1).
    public init(capacity: Int) {
        self.capacity = Swift.max(capacity, 1)
        storage.reserveCapacity(Swift.min(self.capacity, 1024))
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.count }

    /// The element `position` places after the oldest kept.
    public subscript(position: Int) -> Element { storage[(head + position) % storage.count] }

    /// Adds the newest element, dropping the oldest when full.
    public mutating func append(_ element: Element) {
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[head] = element
            head = (head + 1) % capacity
        }
    }
}

/// What one scenario did in one round.
public struct WatchCell: Sendable, Codable, Equatable, Hashable {
    public var scenario: Scenario
    public var outcome: Outcome
    /// Total milliseconds of the attempt that decided the outcome; nil when none was made.
    public var ms: Double?
    public var status: Int?

    public init(scenario: Scenario, outcome: Outcome, ms: Double? = nil, status: Int? = nil) {
        self.scenario = scenario
        self.outcome = outcome
        self.ms = ms
        self.status = status
    }
}

/// One round of a watch: every scenario's outcome, the recommendation, and what changed.
public struct WatchRound: Sendable, Codable, Equatable, Hashable {
    /// 1 for the first round.
    public var round: Int
    public var at: Date
    public var url: String
    public var cells: [WatchCell]
    public var recommended: Scenario?
    /// What differs from the round before, one sentence each; empty when nothing did.
    public var changes: [String]

    public init(
        round: Int, at: Date, url: String, cells: [WatchCell], recommended: Scenario?, changes: [String] = []
    ) {
        self.round = round
        self.at = at
        self.url = url
        self.cells = cells
        self.recommended = recommended
        self.changes = changes
    }

    /// The cell of one scenario, when it was tried.
    public func cell(_ scenario: Scenario) -> WatchCell? { cells.first { $0.scenario == scenario } }

    /// The summary of a probe report as one round (the attempt that reached the server
    /// speaks for a scenario tried against several IPs; otherwise the first).
    ///
    /// - Parameters:
    ///   - report: the round's probe.
    ///   - round: its number.
    ///   - at: when it ran.
    /// - Returns: the round, with no changes yet.
    public static func summary(of report: URLReport, round: Int, at: Date) -> WatchRound {
        var cells: [WatchCell] = []
        for scenario in Scenario.allCases {
            guard let chosen = report.decidingAttempt(scenario) else { continue }
            cells.append(
                WatchCell(
                    scenario: scenario, outcome: chosen.outcome,
                    ms: chosen.hops.isEmpty ? nil : chosen.timings.total, status: chosen.status))
        }
        return WatchRound(
            round: round, at: at, url: report.url, cells: cells, recommended: report.verdict.recommended)
    }
}

/// The bounded history of a watch: the newest rounds, and every round where something changed
/// (bounded too). A day at 5 s is 17,280 rounds; the default keeps all of them.
public struct WatchHistory: Sendable {
    /// The rounds kept by default: a day at one round every 5 s.
    public static let defaultCapacity = 17_280
    public private(set) var rounds: RingBuffer<WatchRound>
    /// The rounds where an outcome or the recommendation changed.
    public private(set) var changed: RingBuffer<WatchRound>
    /// Rounds recorded so far, including those that fell off.
    public private(set) var total = 0

    public init(capacity: Int = defaultCapacity) {
        rounds = RingBuffer(capacity: capacity)
        changed = RingBuffer(capacity: max(capacity / 8, 64))
    }

    /// Adds a round, filling in its changes against the round before.
    ///
    /// - Parameter round: the new round (its `changes` are replaced).
    /// - Returns: the round as recorded.
    @discardableResult
    public mutating func record(_ round: WatchRound) -> WatchRound {
        var round = round
        round.changes = rounds.last.map { Self.changes(from: $0, to: round) } ?? []
        rounds.append(round)
        total += 1
        if !round.changes.isEmpty { changed.append(round) }
        return round
    }

    /// What differs between two rounds, as sentences.
    public static func changes(from old: WatchRound, to new: WatchRound) -> [String] {
        var said: [String] = []
        for scenario in Scenario.allCases {
            let before = old.cell(scenario)?.outcome
            let after = new.cell(scenario)?.outcome
            if before != after {
                said.append(
                    "\(scenario.rawValue): \(before?.rawValue ?? "not tried") → \(after?.rawValue ?? "not tried")")
            }
        }
        if old.recommended != new.recommended {
            said.append(
                "recommended: \(old.recommended?.rawValue ?? "none") → \(new.recommended?.rawValue ?? "none")")
        }
        return said
    }
}

/// Re-probes one URL every few seconds and records each round.
public final class Watch: Sendable {
    public let engine: ProbeEngine
    public let url: String

    /// - Parameters:
    ///   - engine: the engine each round probes with.
    ///   - url: the URL to watch.
    public init(engine: ProbeEngine, url: String) {
        self.engine = engine
        self.url = url
    }

    /// Runs rounds until `count` have run (forever when nil) or the consumer stops listening.
    ///
    /// - Parameters:
    ///   - interval: seconds from the start of one round to the start of the next (a round
    ///     that takes longer starts the next at once).
    ///   - count: how many rounds; nil for no end.
    ///   - capacity: rounds the history keeps.
    /// - Returns: each round as recorded (with its changes), and the report it came from.
    public func rounds(
        every interval: @escaping @Sendable () -> Double, count: Int? = nil,
        capacity: Int = WatchHistory.defaultCapacity
    ) -> AsyncStream<(WatchRound, URLReport)> {
        AsyncStream { continuation in
            let task = Task {
                var history = WatchHistory(capacity: capacity)
                var number = 0
                while !Task.isCancelled, count.map({ number < $0 }) ?? true {
                    number += 1
                    let started = Date()
                    guard let report = await engine.report(url, emit: { _ in }) else { break }
                    let round = history.record(WatchRound.summary(of: report, round: number, at: started))
                    continuation.yield((round, report))
                    if let count, number >= count { break }
                    let wait = interval() - Date().timeIntervalSince(started)
                    if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension URLReport {
    /// The attempt that speaks for a scenario: the one that reached the server when it was
    /// tried against several IPs, otherwise the first; nil when the scenario was not tried.
    public func decidingAttempt(_ scenario: Scenario) -> Attempt? {
        let attempts = attempts.filter { $0.scenario == scenario }
        return attempts.first(where: { $0.outcome.reachedServer }) ?? attempts.first
    }
}

extension WatchRound {
    /// The round as one line of JSON (with its newline), the record `probe --watch` prints.
    public func jsonLine() -> Data {
        ProbeJSON.line(self) ?? Data("{}\n".utf8)
    }
}

extension WatchHistory {
    /// The kept rounds as JSON Lines, oldest first: the watch's export, like a trace's.
    public func jsonLines() -> Data {
        var data = Data()
        for round in rounds { data.append(round.jsonLine()) }
        return data
    }
}

// The agent's loop: a round of probes over the target list every interval (with jitter, so a
// fleet does not beat in phase), a bound on URLs in flight, each report handed to the exporters.
import FoundationEssentials
import FoundationGaps
import Logging
import NameResolution
import Probe
import Prometheus

/// When rounds start and how many URLs run at once.
public struct AgentSchedule: Sendable {
    /// Seconds from the start of one round to the start of the next.
    public var interval: Double
    /// The fraction of the interval each wait may be longer or shorter by, at random (0.1 is
    /// ±10 %); the first round also waits a random part of it.
    public var jitter: Double
    /// URLs under way at once (their requests share the engine's own concurrency limit).
    public var concurrency: Int

    /// The schedule when nothing is said: a round a minute, ±10 %, 16 URLs at once (the
    /// defaults of `ipdirect agent --interval --jitter --concurrency`).
    public static let standard = AgentSchedule(interval: 60, jitter: 0.1, concurrency: 16)

    public init(
        interval: Double, jitter: Double = standard.jitter, concurrency: Int = standard.concurrency
    ) {
        self.interval = interval
        self.jitter = jitter
        self.concurrency = concurrency
    }

    /// The wait before the round after one that started `interval` ago.
    func nextWait() -> Double {
        guard jitter > 0 else { return interval }
        return interval * (1 + Double.random(in: -jitter...jitter))
    }

    /// The wait before the first round.
    func firstWait() -> Double {
        jitter > 0 ? Double.random(in: 0...(interval * jitter)) : 0
    }
}

/// Where the agent's targets come from.
public enum AgentTargetSource: Sendable {
    /// A list given once (command line, configuration).
    case fixed([AgentTarget])
    /// A file re-read on change and on SIGHUP.
    case file(TargetsFile)
}

/// Where each report goes.
public struct AgentSinks: Sendable {
    /// The agent's own series (rounds, resolver cache, resource errors); it takes every report too.
    public var metrics: AgentMetrics?
    /// Every exporter a report goes to, in order: the metrics first, then the others given.
    public var exporters: [any ReportExporter]

    /// - Parameters:
    ///   - metrics: the registry `/metrics` serves, if any.
    ///   - exporters: the others (traces, JSON Lines, ...).
    public init(metrics: AgentMetrics? = nil, exporters: [any ReportExporter] = []) {
        self.metrics = metrics
        self.exporters = (metrics.map { [$0] } ?? []) + exporters
    }

    /// Finishes every exporter side by side, each within `budget`.
    public func finish(within budget: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            for exporter in exporters { group.addTask { await exporter.finish(within: budget) } }
        }
    }
}

/// Probes a target list round after round until stopped.
public final class ProbeAgent: Sendable {
    private enum Wake: Sendable {
        case due, roundDone, check, reload, stop
    }

    private struct State {
        var wake: AsyncStream<Wake>.Continuation?
        var stopped = false
        var rounds = 0
        /// The last round of each URL, to say what changed.
        var last: [String: WatchRound] = [:]
        /// An engine for each set of per-target settings in use (the plain engine has none).
        var engines: [TargetSettings: ProbeEngine] = [:]
    }

    public let engine: ProbeEngine
    public let source: AgentTargetSource
    public let schedule: AgentSchedule
    public let sinks: AgentSinks
    private let logger: Logger
    private let state = Locked(State())
    private let shortageReports = ReportThrottle(every: 60)

    /// - Parameters:
    ///   - engine: probes each URL (the engine `probe` and the console use); a target with
    ///     settings of its own gets one like it with those settings over its options.
    ///   - source: the target list.
    ///   - schedule: interval, jitter and concurrency.
    ///   - sinks: the metrics and the exporters each report goes to.
    ///   - logger: one line per event.
    public init(
        engine: ProbeEngine, source: AgentTargetSource, schedule: AgentSchedule, sinks: AgentSinks, logger: Logger
    ) {
        self.engine = engine
        self.source = source
        self.schedule = schedule
        self.sinks = sinks
        self.logger = logger
    }

    /// The list in force.
    public var targets: [AgentTarget] {
        switch source {
        case .fixed(let targets): targets
        case .file(let file): file.targets
        }
    }

    /// Rounds completed so far.
    public var roundsCompleted: Int { state.withLock { $0.rounds } }

    /// Ends `run()`: no more URLs start, and it returns without waiting for those under way.
    public func stop() {
        let wake = state.withLock { state -> AsyncStream<Wake>.Continuation? in
            state.stopped = true
            return state.wake
        }
        wake?.yield(.stop)
    }

    /// Re-reads the targets file now (SIGHUP).
    public func reload() {
        _ = state.withLock { $0.wake }?.yield(.reload)
    }

    /// Counts what the resolver cache does into the metrics, until the stream ends.
    public func countResolverEvents(_ events: AsyncStream<ResolverEvent>) -> Task<Void, Never> {
        let metrics = sinks.metrics
        return Task {
            for await event in events { metrics?.record(event) }
        }
    }

    /// Runs rounds until `stop()`.
    public func run() async {
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self)
        let stoppedEarly = state.withLock { state -> Bool in
            state.wake = wake
            return state.stopped
        }
        if stoppedEarly { return }
        if case .fixed(let list) = source, list.isEmpty {
            // No targets of its own: the agent answers /probe until stopped, and has no rounds.
            logger.info("agent started with no targets: probing on demand only", metadata: ["event": "agent-started"])
            for await event in wakes where event == .stop { break }
            state.withLock { $0.wake = nil }
            logger.info("agent stopping", metadata: ["event": "agent-stopping"])
            return
        }
        logger.info(
            "agent started: \(targets.count) targets every \(schedule.interval) s (±\(Int(schedule.jitter * 100)) %), at most \(schedule.concurrency) at once",
            metadata: ["event": "agent-started"])
        var poll: Task<Void, Never>?
        if case .file = source {
            poll = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    wake.yield(.check)
                }
            }
        }
        var timer = Self.timer(after: schedule.firstWait(), wake)
        var running: (stop: BatchStop, started: Date, number: Int)?
        var overdue = false
        var number = 0

        loop: for await event in wakes {
            switch event {
            case .due:
                if let running {
                    if !overdue {
                        logger.warning(
                            "round \(running.number) is still running after \(schedule.interval) s; the next starts when it ends (raise \(Setting.interval.named(.configuration)) or \(Setting.concurrency.named(.configuration)))",
                            metadata: ["event": "round-overrun"])
                    }
                    overdue = true
                } else {
                    number += 1
                    running = startRound(number, wake)
                    timer = Self.timer(after: schedule.nextWait(), wake)
                }
            case .roundDone:
                running = nil
                if overdue {
                    overdue = false
                    number += 1
                    running = startRound(number, wake)
                    timer.cancel()
                    timer = Self.timer(after: schedule.nextWait(), wake)
                }
            case .check:
                applyReload(force: false)
            case .reload:
                applyReload(force: true)
            case .stop:
                running?.stop.pull()
                break loop
            }
        }
        timer.cancel()
        poll?.cancel()
        wake.finish()
        state.withLock { $0.wake = nil }
        logger.info("agent stopping after \(roundsCompleted) rounds", metadata: ["event": "agent-stopping"])
    }

    private static func timer(after seconds: Double, _ wake: AsyncStream<Wake>.Continuation) -> Task<Void, Never> {
        Task {
            if seconds > 0 {
                do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
            }
            wake.yield(.due)
        }
    }

    private func applyReload(force: Bool) {
        guard case .file(let file) = source else {
            if force { logger.info("SIGHUP: the targets come from the command line; nothing to reload") }
            return
        }
        switch file.check(force: force) {
        case .unchanged:
            break
        case .loaded(let count):
            logger.info(
                "targets reloaded from \(file.path): \(count) targets", metadata: ["event": "targets-reloaded"])
            sinks.metrics?.keep(only: file.targets)
            let urls = Set(file.targets.map(\.url))
            let settings = Set(file.targets.map(\.settings))
            state.withLock {
                $0.last = $0.last.filter { urls.contains($0.key) }
                $0.engines = $0.engines.filter { settings.contains($0.key) }
            }
        case .keptLast(let count, let problem):
            logger.warning(
                "\(problem); keeping the last good list of \(count) targets",
                metadata: ["event": "targets-kept"])
        }
    }

    /// Starts one round in the background; it wakes the loop when done.
    private func startRound(_ number: Int, _ wake: AsyncStream<Wake>.Continuation) -> (BatchStop, Date, Int) {
        let stop = BatchStop()
        let started = Date()
        let targets = targets
        let engines = targets.map(engine(for:))
        Task {
            let tally = Locked((ok: 0, done: 0))
            // At most `concurrency` targets under way, whichever engine each uses.
            await withTaskGroup(of: Void.self) { group in
                var running = 0
                for (index, target) in targets.enumerated() {
                    if running >= max(1, schedule.concurrency) {
                        await group.next()
                        running -= 1
                    }
                    guard !stop.isPulled else { break }
                    running += 1
                    group.addTask {
                        guard let report = await engines[index].report(target.url, emit: { _ in }), !stop.isPulled
                        else { return }
                        self.handle(report, target: target, round: number, roundStart: started)
                        tally.withLock {
                            $0.done += 1
                            if !report.verdict.works.isEmpty { $0.ok += 1 }
                        }
                    }
                }
            }
            guard !stop.isPulled else { return }
            let seconds = Date().timeIntervalSince(started)
            let (ok, done) = tally.withLock { ($0.ok, $0.done) }
            state.withLock { $0.rounds += 1 }
            sinks.metrics?.roundFinished(seconds: seconds, targets: targets.count)
            logger.info(
                "round \(number): \(done) targets probed, \(ok) with a working direct technique, in \(String(cFormat: "%.1f", seconds)) s",
                metadata: ["event": "round-finished"])
            wake.yield(.roundDone)
        }
        return (stop, started, number)
    }

    /// The engine that probes `target`: the agent's own, or one with the target's settings over its options.
    private func engine(for target: AgentTarget) -> ProbeEngine {
        guard !target.settings.isEmpty else { return engine }
        return state.withLock { state in
            if let made = state.engines[target.settings] { return made }
            let made = engine.with(options: target.settings.applied(to: engine.options))
            state.engines[target.settings] = made
            return made
        }
    }

    private func handle(_ report: URLReport, target: AgentTarget, round: Int, roundStart: Date) {
        let hopStarts = report.attempts.compactMap { $0.hops.first?.startedAt }
        let resolution = max(report.resolution.httpdns.ms, report.resolution.system.ms, 0) / 1000
        let started = max(roundStart, (hopStarts.min() ?? roundStart).addingTimeInterval(-resolution))
        let shortages = report.attempts.compactMap(\.shortage)
        if let shortage = shortages.first { shortageSeen(shortage, attempts: shortages.count, target: target) }
        let context = ReportContext(target: target.label, started: started)
        for exporter in sinks.exporters { exporter.record(report, context: context) }
        // The target's last round stays as it was when this one says nothing of it.
        guard report.judgesTarget else { return }

        let summary = WatchRound.summary(of: report, round: round, at: started)
        let before = state.withLock { state -> WatchRound? in
            defer { state.last[target.url] = summary }
            return state.last[target.url]
        }
        if let before {
            let changes = WatchHistory.changes(from: before, to: summary)
            if !changes.isEmpty {
                logger.notice(
                    "\(report.url) changed: \(changes.joined(separator: "; "))",
                    metadata: ["event": "target-changed", "target": "\(target.label)"])
            }
        } else if report.verdict.works.isEmpty {
            logger.notice(
                "\(report.url): no direct technique works: \(report.verdict.summary)",
                metadata: ["event": "target-failing", "target": "\(target.label)"])
        }
    }

    /// Counts attempts that could not start for want of `shortage` and says so, at most once a minute.
    private func shortageSeen(_ shortage: ResourceShortage, attempts: Int, target: AgentTarget) {
        sinks.metrics?.resourceErrors(shortage).increment(by: Int64(attempts))
        shortageReports.report { suppressed in
            let more = suppressed > 0 ? " (\(suppressed) more targets since the last report)" : ""
            logger.error(
                "\(attempts) attempts for \(target.label) could not start: \(shortage.sentence(.configuration)); the agent's failure, not the target's\(more)",
                metadata: ["event": "agent-out-of-resources", "resource": "\(shortage.rawValue)"])
        }
    }
}

extension URLReport {
    /// Whether the report says anything of its target. Attempts that could not start for want
    /// of a descriptor or memory are the agent's failure: when nothing else worked, the round
    /// says nothing of the target.
    var judgesTarget: Bool {
        !verdict.works.isEmpty || attempts.allSatisfy { $0.shortage == nil }
    }
}

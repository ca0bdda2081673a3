// Runs the doctor's checks at once and bounded: each finding is handed on as it finishes (the
// terminal's progress, the console's rows), and a check still running at the bound is reported.

import CurlTransport
import FoundationEssentials
import NameResolution

/// Runs checks concurrently within the context's budget.
public struct DoctorRunner: Sendable {
    public var checks: [any DoctorCheck]

    public init(checks: [any DoctorCheck] = DoctorChecks.all) {
        self.checks = checks
    }

    /// Runs every check and returns the report once all have finished or the budget is spent,
    /// whichever comes first: the run never outlasts `context.budget` by more than scheduling.
    ///
    /// - Parameters:
    ///   - context: what the checks read.
    ///   - provider: the provider and where it points, for the report (never a secret).
    ///   - progress: called with each finding as it arrives, from any thread.
    public func run(
        _ context: DoctorContext, provider: String, progress: @escaping @Sendable (DoctorFinding) -> Void = { _ in }
    ) async -> DoctorReport {
        let startedAt = Date()
        let clock = ContinuousClock()
        let start = clock.now
        let (stream, continuation) = AsyncStream.makeStream(of: DoctorFinding?.self)
        var tasks: [Task<Void, Never>] = []
        var waits: [DoctorCheckID: DoctorWaits] = [:]
        for check in checks {
            let open = DoctorWaits()
            waits[check.id] = open
            tasks.append(
                Task {
                    let began = clock.now
                    var finding = await DoctorWaits.$current.withValue(open) { await check.run(context) }
                    finding.check = check.id
                    finding.durationMs = (clock.now - began).inSeconds * 1000
                    continuation.yield(finding)
                })
        }
        // The bound: a nil wakes the loop below, which then stops waiting.
        let timer = Task {
            try? await Task.sleep(for: context.budget)
            continuation.yield(nil)
        }
        var findings: [DoctorFinding] = []
        for await finding in stream {
            guard let finding else { break }
            findings.append(finding)
            progress(finding)
            if findings.count == checks.count { break }
        }
        continuation.finish()
        timer.cancel()
        for task in tasks { task.cancel() }
        let finished = Set(findings.map(\.check))
        for check in checks where !finished.contains(check.id) {
            let late = Self.late(check.id, waiting: waits[check.id]?.oldest, context: context, at: clock.now)
            findings.append(late)
            progress(late)
        }
        return DoctorReport(
            startedAt: startedAt, durationMs: (clock.now - start).inSeconds * 1000, provider: provider,
            findings: findings)
    }

    /// The row of a check still running at the bound: what it was waiting for and how long, and,
    /// when that is another check's prerequisite (the system resolver, a service address), skipped
    /// with that check named, since the cause is its finding, not this check's.
    static func late(
        _ check: DoctorCheckID, waiting: DoctorWaits.Wait?, context: DoctorContext, at now: ContinuousClock.Instant
    ) -> DoctorFinding {
        let bound = "Did not finish within the run's bound of \(ResolutionError.format(context.budget.inSeconds)) s"
        let durationMs = context.budget.inSeconds * 1000
        guard let waiting else {
            return DoctorFinding(
                check: check, status: .fail, seen: bound + ".",
                advice:
                    "Run the doctor again with a longer \(Setting.timeout.named(context.voice)), or look at what this check waits for.",
                durationMs: durationMs)
        }
        let waited = ResolutionError.format((now - waiting.since).inSeconds)
        let seen = "\(bound): it waits for \(waiting.what), which had not answered after \(waited) s."
        guard waiting.owner != check else {
            return DoctorFinding(
                check: check, status: .fail, seen: seen,
                advice:
                    "Run the doctor again with a longer \(Setting.timeout.named(context.voice)), or look at why that does not answer.",
                durationMs: durationMs)
        }
        return DoctorFinding(
            check: check, status: .skipped, seen: seen,
            advice: "The \(waiting.owner.inSentence) check says why that does not answer; this check needs it first.",
            durationMs: durationMs)
    }
}

// Runs the doctor's checks at once and bounded: each finding is handed on as it finishes (the
// terminal's progress, the console's rows), and a check still running at the bound is reported.

import CurlTransport
import Foundation
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
        for check in checks {
            tasks.append(
                Task {
                    let began = clock.now
                    var finding = await check.run(context)
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
            let late = DoctorFinding(
                check: check.id, status: .fail,
                seen: "Did not finish within the run's bound of \(ResolutionError.format(context.budget.inSeconds)) s.",
                advice:
                    "Run the doctor again with a longer \(Setting.timeout.named(context.voice)), or look at what this check waits for.",
                durationMs: context.budget.inSeconds * 1000)
            findings.append(late)
            progress(late)
        }
        return DoctorReport(
            startedAt: startedAt, durationMs: (clock.now - start).inSeconds * 1000, provider: provider,
            findings: findings)
    }
}

// The doctor's runner: checks run at once, a check that never answers cannot hold the run past
// its bound, and the exit code follows the worst finding. Checks here are doubles at the seam.

import ConfigurationSources
import Doctor
import Foundation
import LabFaults
import NameResolution
import Testing

/// A check that answers a fixed status (once `after` returns), or never when `hangs`.
private struct ScriptedCheck: DoctorCheck {
    let id: DoctorCheckID
    var status: DoctorStatus = .pass
    var hangs = false
    /// What it waits for before answering (another check's finding having arrived), without a clock.
    var after: (@Sendable () async -> Void)?
    /// What it hangs waiting for, recorded as the checks record their waits, and whose it is.
    var waitingFor: (what: String, owner: DoctorCheckID)?

    func run(_ context: DoctorContext) async -> DoctorFinding {
        if let waitingFor {
            await DoctorWaits.on(waitingFor.what, owner: waitingFor.owner) {
                await Task.detached { try? await Task.sleep(for: .seconds(3600)) }.value
            }
        }
        if hangs {
            // Ignores cancellation on purpose, as a blocked connect would (a detached task's
            // sleep is not cancelled with this one), without holding a thread.
            // Had the runner waited for it, the finding would be this check's own pass.
            await Task.detached { try? await Task.sleep(for: .seconds(3600)) }.value
        }
        await after?()
        return DoctorFinding(check: id, status: status, seen: "scripted")
    }
}

@Suite struct DoctorRunnerTests {
    /// 10 s: the checks that answer must answer within it while the other suites hold the
    /// cooperative threads, which on a loaded machine can take over 1 s; the hanging ones wait it out.
    let context = DoctorContext(resolver: ResolverConfiguration(provider: .alicloud), budget: .seconds(10))

    @Test func aCheckThatNeverAnswersIsReportedAtTheBoundAndTheRunEnds() async {
        let runner = DoctorRunner(checks: [
            ScriptedCheck(id: .clock), ScriptedCheck(id: .serviceReachability, hangs: true),
        ])
        let report = await runner.run(context, provider: "test")
        #expect(report.findings.map(\.check) == [.serviceReachability, .clock])
        let late = report.findings[0]
        #expect(late.status == .fail)
        #expect(late.seen.contains("within the run's bound of 10 s"))
        #expect(report.exitCode == 3)
    }

    /// The "fail Interception: did not finish" under a lost resolver: the row names what
    /// it waited for, and the check that owns that finding, instead of blaming interception.
    @Test func aCheckStillWaitingForAnotherChecksPrerequisiteSaysWhichAndIsNotBlamed() async throws {
        let runner = DoctorRunner(checks: [
            ScriptedCheck(
                id: .interception,
                waitingFor: ("the system resolver (asked for connectivitycheck.gstatic.com)", .dnsPaths)),
            ScriptedCheck(
                id: .serviceReachability,
                waitingFor: ("the service at https://192.0.2.2:443/v2/d", .serviceReachability)),
        ])
        let report = await runner.run(context, provider: "test")
        let interception = try #require(report.findings.first { $0.check == .interception })
        #expect(interception.status == .skipped)
        #expect(
            interception.seen.contains(
                "Did not finish within the run's bound of 10 s: it waits for the system resolver (asked for "
                    + "connectivitycheck.gstatic.com), which had not answered after"),
            "\(String(describing: interception))")
        #expect(interception.advice?.contains("The DNS paths check says why") == true)
        // Waiting on its own prerequisite, a check keeps the fail, and says what it waited for.
        let reachability = try #require(report.findings.first { $0.check == .serviceReachability })
        #expect(reachability.status == .fail)
        #expect(reachability.seen.contains("it waits for the service at https://192.0.2.2:443/v2/d"))
    }

    @Test func findingsArriveAsTheyFinishAndTheReportListsThemInCheckOrder() async {
        // IP stack finishes once interception's finding has arrived: a runner that handed findings
        // over in check order would hold it back, and the IP stack would miss the bound.
        let arrivals = ArrivalLog()
        let runner = DoctorRunner(checks: [
            ScriptedCheck(
                id: .ipStack,
                after: {
                    while !arrivals.checks.contains(.interception) && !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                }), ScriptedCheck(id: .interception),
        ])
        let report = await runner.run(context, provider: "test") { arrivals.append($0.check) }
        #expect(arrivals.checks == [.interception, .ipStack])
        #expect(report.findings.allSatisfy { $0.status == .pass }, "\(report.findings)")
        #expect(report.findings.map(\.check) == [.ipStack, .interception])
    }

    @Test(arguments: [
        ([DoctorStatus.pass, .skipped], Int32(0)), ([.pass, .warn], Int32(1)), ([.warn, .fail, .pass], Int32(3)),
    ])
    func theExitCodeFollowsTheWorstFinding(statuses: [DoctorStatus], code: Int32) {
        let findings = zip(DoctorCheckID.allCases, statuses).map {
            DoctorFinding(check: $0, status: $1, seen: "seen")
        }
        #expect(DoctorReport(startedAt: Date(), durationMs: 0, provider: "p", findings: findings).exitCode == code)
    }

    @Test func faultListsMixOneServiceModeWithAnyNetworkFaults() throws {
        let set = try LabFaultSet.parse("clock-skew,service-blocked,slow").get()
        #expect(set.httpdns == .slow)
        #expect(set.network == [.clockSkew, .serviceBlocked])
        #expect(throws: LabFaultParseError.unknown("clockskew")) { try LabFaultSet.parse("clockskew").get() }
        #expect(throws: LabFaultParseError.twoModes(["slow", "down"])) { try LabFaultSet.parse("slow,down").get() }
    }
}

/// The order findings were handed to the progress callback in.
private final class ArrivalLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [DoctorCheckID] = []
    func append(_ check: DoctorCheckID) { lock.withLock { log.append(check) } }
    var checks: [DoctorCheckID] { lock.withLock { log } }
}

// `Deadline.first`, the race between a result and a deadline (the resolver cache, the system
// resolver, `/probe`'s budget): the deadline still ends a wait the work never answers, and work
// that finishes first is what the caller gets (issue 34 moved its timer to the alarm clock).
import FoundationGaps
import NameResolution
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct DeadlineTests {
    // No upper bound on the waits: under the whole suite the waiting task itself can resume many
    // seconds late. A deadline that never rang would hang the test.
    @Test func workThatNeverFinishesEndsInNilAtTheDeadline() async {
        let started = ContinuousClock.now
        let result: Int? = await Deadline.first(within: .milliseconds(200)) { (_: @escaping @Sendable (Int) -> Void) in
        }
        #expect(result == nil)
        #expect(started.duration(to: .now) >= .milliseconds(200))
    }

    @Test func workThatFinishesFirstIsTheResult() async {
        // Answered from a thread of its own, so the answer does not wait for the cooperative pool.
        let result = await Deadline.first(within: .seconds(600)) { (done: @escaping @Sendable (String) -> Void) in
            detachThread(named: "ipdirect-test-work") {
                usleep(20_000)
                done("answered")
            }
        }
        #expect(result == "answered")
    }

    @Test func aShortWaitEndsAtItsDeadlineWhileALongOneIsUnderWay() async throws {
        // Both deadlines on the one clock, the long one set first: the short one is not held
        // behind it (the long one is still under way when the short one ends).
        let longEnded = Locked(false)
        let long = Task {
            let _: Int? = await Deadline.first(within: .seconds(600)) { _ in }
            longEnded.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        let result: Int? = await Deadline.first(within: .milliseconds(100)) { _ in }
        #expect(result == nil)
        #expect(started.duration(to: .now) >= .milliseconds(100))
        #expect(!longEnded.withLock { $0 })
        long.cancel()
    }
}

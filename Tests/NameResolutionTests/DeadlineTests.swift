// `Deadline.first`, the race between a result and a deadline (the resolver cache, the system
// resolver, `/probe`'s budget): the deadline still ends a wait the work never answers, and work
// that finishes first is what the caller gets (issue 34 moved its timer to the alarm clock).
import FoundationGaps
import NameResolution
import Testing

@Suite struct DeadlineTests {
    @Test func workThatNeverFinishesEndsInNilAtTheDeadline() async {
        let started = ContinuousClock.now
        let result: Int? = await Deadline.first(within: .milliseconds(200)) { (_: @escaping @Sendable (Int) -> Void) in
        }
        let waited = started.duration(to: .now)
        #expect(result == nil)
        #expect(waited >= .milliseconds(200))
        #expect(waited < .seconds(5))
    }

    @Test func workThatFinishesFirstIsTheResult() async {
        let result = await Deadline.first(within: .seconds(30)) { () async -> String in
            try? await Task.sleep(for: .milliseconds(20))
            return "answered"
        }
        #expect(result == "answered")
    }

    @Test func aShortWaitEndsAtItsDeadlineWhileALongOneIsUnderWay() async throws {
        // Both deadlines on the one clock, the long one set first: the short one is not held
        // behind it.
        let long = Task { () -> Duration in
            let started = ContinuousClock.now
            let _: Int? = await Deadline.first(within: .seconds(30)) { _ in }
            return started.duration(to: .now)
        }
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        let result: Int? = await Deadline.first(within: .milliseconds(100)) { _ in }
        let waited = started.duration(to: .now)
        #expect(result == nil)
        #expect(waited >= .milliseconds(100))
        #expect(waited < .seconds(10))
        long.cancel()
    }
}

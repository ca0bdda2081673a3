// The alarm clock `Deadline.first` sets its deadlines on (issue 34: in place of a dispatch timer
// per deadline): an alarm rings at its time, not before, and a cancelled one never rings.
import Foundation
import FoundationGaps
import Testing

@Suite struct AlarmClockTests {
    /// Rings of each alarm, by label, with the time since the test began.
    final class Rings: @unchecked Sendable {
        let rung = Locked([String: Duration]())
        let start = ContinuousClock.now
        func ring(_ label: String) { rung.withLock { $0[label] = start.duration(to: .now) } }
        var now: [String: Duration] { rung.withLock { $0 } }
    }

    @Test func anAlarmRingsOnceItsTimeHasPassedAndNotBefore() async throws {
        let clock = AlarmClock(named: "ipdirect-test-alarm")
        let rings = Rings()
        _ = clock.set(after: .milliseconds(150)) { rings.ring("late") }
        #expect(await eventually { rings.now["late"] != nil })
        let rung = try #require(rings.now["late"])
        #expect(rung >= .milliseconds(150))
    }

    @Test func anEarlierAlarmSetAfterALaterOneRingsAtItsOwnTime() async throws {
        let clock = AlarmClock(named: "ipdirect-test-alarm")
        let rings = Rings()
        // Far enough that no slowness of the machine brings it within the test.
        _ = clock.set(after: .seconds(600)) { rings.ring("far") }
        try await Task.sleep(for: .milliseconds(20))
        // The clock's thread waits for the far one: the near one must wake it.
        _ = clock.set(after: .milliseconds(50)) { rings.ring("near") }
        #expect(await eventually { rings.now["near"] != nil })
        #expect(rings.now["far"] == nil)
    }

    @Test func aCancelledAlarmNeverRings() async throws {
        let clock = AlarmClock(named: "ipdirect-test-alarm")
        let rings = Rings()
        let cancelled = clock.set(after: .milliseconds(50)) { rings.ring("cancelled") }
        _ = clock.set(after: .milliseconds(100)) { rings.ring("kept") }
        clock.cancel(cancelled)
        // The kept one is due after the cancelled one: once it has rung, the other would have.
        #expect(await eventually { rings.now["kept"] != nil })
        #expect(rings.now["cancelled"] == nil)
    }
}

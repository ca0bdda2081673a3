// Whether the transfers of one piece of work have left ipdirect yet, and after how long: what lets a
// caller that gave up tell "never sent, ipdirect was busy" from "sent, and the far side did not answer".
import Dispatch
import FoundationGaps

/// When the first transfer of one piece of work (an HTTPDNS query: one request or several) was
/// started by its loop's thread, measured from when the work began.
///
/// The work binds one as a task-local value (as the doctor's waits are bound); `TransferLoop`
/// reads it where a transfer is handed over and marks it from the loop thread when libcurl is
/// given the transfer. Until then nothing has been sent, whatever a deadline around the work says.
public final class TransferDepartures: Sendable {
    /// The departures of the work the current task does; nil outside one (nothing is recorded).
    @TaskLocal public static var current: TransferDepartures?

    private struct State {
        /// Uptime when the first transfer started, nanoseconds; nil while none has.
        var firstStart: UInt64?
        /// Other work this work waits on, whose transfers count as its own.
        var followed: [TransferDepartures] = []
    }

    /// Uptime when the work began, nanoseconds.
    private let began: UInt64
    private let state = Locked(State())

    /// Starts counting the wait now.
    public init() { began = DispatchTime.now().uptimeNanoseconds }

    /// Marks a transfer as started (the first one counts), on the loop thread.
    func started() {
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { s in if s.firstStart == nil { s.firstStart = now } }
    }

    /// Counts `other`'s transfers as this work's: it waits on work another task started (a
    /// shared discovery), and once that has left, so has this work's question.
    public func follow(_ other: TransferDepartures) {
        guard other !== self else { return }
        state.withLock { $0.followed.append(other) }
    }

    /// Uptime of the first start of this work's transfers or those of the work it follows.
    private var firstStart: UInt64? {
        let (own, followed) = state.withLock { ($0.firstStart, $0.followed) }
        return ([own] + followed.map(\.firstStart)).compactMap { $0 }.min()
    }

    /// Where the work stands now.
    public enum Reading: Sendable, Equatable {
        /// No transfer has started yet; the work has waited this long since it began.
        case waiting(Duration)
        /// The first transfer started this long ago (the far side has had this long).
        case left(ago: Duration)
    }

    /// Whether a transfer of the work (or of work it follows) has left yet, read now.
    public var reading: Reading {
        let now = DispatchTime.now().uptimeNanoseconds
        guard let start = firstStart else { return .waiting(.nanoseconds(Int64(now &- began))) }
        return .left(ago: .nanoseconds(Int64(now > start ? now - start : 0)))
    }
}

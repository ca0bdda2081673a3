// Waiting with a deadline, without cancelling what is waited for: the one race between a
// result and a timer, used by the resolver cache (HTTPDNS), the system resolver and the agent's stop.
import FoundationEssentials
import FoundationGaps

/// The first of a result and a deadline.
public enum Deadline {
    /// What `start` hands to its callback, or nil when `limit` passes first.
    ///
    /// `start` begins the work (on a thread or in a task) and calls the callback once with
    /// the result; a result that comes after the deadline is dropped, the work is not stopped.
    public static func first<T: Sendable>(
        within limit: Duration, start: (@escaping @Sendable (T) -> Void) -> Void
    ) async -> T? {
        // The first to finish is delivered, under the hand-off's lock, which the task takes once
        // after its await: the order ThreadSanitizer needs to see (FoundationGaps' HandOff says why).
        await HandOff().value { (delivery: HandOff.Delivery<T?>) in
            // Set before the work starts, and cancelled as it ends: a finished probe leaves no
            // timer behind to wake anything (AlarmClock).
            let alarm = AlarmClock.shared.set(after: limit) { delivery.deliver(nil) }
            start { value in
                AlarmClock.shared.cancel(alarm)
                delivery.deliver(value)
            }
        }
    }

    /// The operation's result, or nil when `limit` passes first. The operation runs in a task of
    /// its own and is not cancelled: a request that misses the deadline still lands in the cache
    /// when it finishes, and an exporter's flush that does not answer cancellation goes on in the
    /// background.
    @discardableResult
    public static func first<T: Sendable>(
        within limit: Duration, _ operation: @escaping @Sendable () async -> T
    ) async -> T? {
        await first(within: limit) { done in Task { done(await operation()) } }
    }
}

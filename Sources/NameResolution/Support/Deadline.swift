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
        // The first to finish resumes under the lock, and the task takes it once after its await:
        // the order ThreadSanitizer needs to see (FoundationGaps' onThreadOfItsOwn says why).
        let once = Locked(false)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let finish: @Sendable (T?) -> Void = { value in
                once.withLock { done in
                    if !done { continuation.resume(returning: value) }
                    done = true
                }
            }
            // Set before the work starts, and cancelled as it ends: a finished probe leaves no
            // timer behind to wake anything (AlarmClock).
            let alarm = AlarmClock.shared.set(after: limit) { finish(nil) }
            start { value in
                AlarmClock.shared.cancel(alarm)
                finish(value)
            }
        }
        once.withLock { _ in }
        return result
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

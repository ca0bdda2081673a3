// A result handed from a thread to the task awaiting it, under a lock taken on both sides: the
// one way libcurl's loop, the threads of onThreadOfItsOwn and Deadline's race resume their tasks.

/// Where threads hand results to the tasks awaiting them: one lock, held while a task is resumed
/// and taken by that task once its await returns, beside the count of tasks waiting.
///
/// The resume happens before the task goes on (the language promises it), but when the resume
/// wins the race with the task's own suspension, Swift's runtime (6.3) tells ThreadSanitizer
/// nothing of that order: it releases in `resume` and acquires only when it starts a suspended
/// task, not when an await finds the continuation already resumed. TSan then took the task's
/// next use of memory the thread wrote (TransferLoop's records and its next continuation, set up
/// where the last one lived; the addresses DNSServerResolver's c-ares thread built) for a race
/// (`make tsan`, `make tsan-opt`). The lock states the order in terms TSan sees, for every
/// caller, instead of hiding reports.
///
/// One `HandOff` may serve many tasks at once (TransferLoop keeps one for all its transfers and
/// reads `waiting` from it) or a single one (`HandOff().value { ... }`).
public final class HandOff: Sendable {
    /// The tasks waiting in `value(_:)`, behind the lock every hand-off takes.
    private let lock = Locked(0)

    public init() {}

    /// How many tasks are waiting for their value now.
    public var waiting: Int { lock.withLock { $0 } }

    /// Suspends the calling task until `start`'s delivery is given a value; returns the first
    /// value given (later ones are dropped).
    ///
    /// - Parameter start: runs before the task suspends; begins the work (on a thread, in a task,
    ///   with a timer beside it) and gives it the `Delivery` to call with the result.
    public func value<T: Sendable>(_ start: (Delivery<T>) -> Void) async -> T {
        lock.withLock { $0 += 1 }
        let value = await withUnsafeContinuation { start(Delivery(continuation: $0, lock: lock)) }
        // After the deliverer's unlock: everything it did before delivering is ordered before
        // what this task does next.
        lock.withLock { $0 -= 1 }
        return value
    }

    /// One waiting task's side of a hand-off: the first `deliver` resumes it.
    public final class Delivery<T: Sendable>: @unchecked Sendable {
        // `@unchecked`: `continuation` is read and cleared only under `lock`.
        private var continuation: UnsafeContinuation<T, Never>?
        private let lock: Locked<Int>

        fileprivate init(continuation: UnsafeContinuation<T, Never>, lock: Locked<Int>) {
            self.continuation = continuation
            self.lock = lock
        }

        /// Resumes the waiting task with `value`, under the lock, unless a value was delivered
        /// already (a timer that lost its race to the result, or the other way round).
        ///
        /// - Returns: whether this value was the one delivered.
        @discardableResult
        public func deliver(_ value: T) -> Bool {
            lock.withLock { _ in
                guard let continuation else { return false }
                self.continuation = nil
                continuation.resume(returning: value)
                return true
            }
        }
    }
}

// A mutex and a condition variable whose timed waits count on the monotonic clock: what the
// parked threads and the alarm clock wait with (a wall clock set back would stretch a wait).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A lock with one condition to wait on. Every wait and signal happens with the lock held.
final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Wakes the thread waiting, if one is.
    func signal() { pthread_cond_signal(condition) }

    /// Waits, the lock held, until signalled or until `deadline` (monotonic nanoseconds, as
    /// `Condition.now` gives) passes; nil waits for a signal only. A wake can be spurious: the
    /// caller checks what it waits for and waits again.
    func wait(until deadline: UInt64?) {
        guard let deadline else {
            pthread_cond_wait(condition, mutex)
            return
        }
        var due = timespec()
        due.tv_sec = .init(deadline / 1_000_000_000)
        due.tv_nsec = .init(deadline % 1_000_000_000)
        _ = pthread_cond_timedwait(condition, mutex, &due)
    }

    /// The monotonic clock in nanoseconds, the clock `wait(until:)` counts on.
    static var now: UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Nanoseconds in `duration`, 0 for a negative one, saturating for a huge one.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        // A negative duration has both parts negative or zero.
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max / 2 : whole + UInt64(attoseconds / 1_000_000_000)
    }
}

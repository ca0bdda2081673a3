// A value behind a plain mutual-exclusion lock, for the resolver cache's hot path and every module
// above it that shares state between threads. pthread_mutex is cheaper than NSLock on that path.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutex guarding a value; the value is reachable only inside `withLock`.
///
/// `@unchecked Sendable` is sound because every access to `value` goes through the mutex.
public final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

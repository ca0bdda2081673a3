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
/// `@unchecked Sendable` is sound because every access to the value goes through the mutex.
public final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The value lives beside the mutex, in the same allocation, not in a stored property: a
    /// `Locked(())` (a lock that guards state held elsewhere) had a zero-sized property, and
    /// ThreadSanitizer placed the inout access to it on the object's first word, which every
    /// unspecialised `withLock` reads (the class's metadata) before it takes the mutex: each
    /// two threads meeting on such a lock were reported as a race (`make tsan`, TransferLoop's
    /// hand-off). Through a pointer, an access touches the value's own bytes only.
    @usableFromInline let value: UnsafeMutablePointer<Value>

    /// Where the value starts in the allocation: after the mutex, at the value's alignment.
    private static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<pthread_mutex_t>.stride + alignment - 1) / alignment * alignment
    }

    public init(_ value: Value) {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: Self.valueOffset + MemoryLayout<Value>.size,
            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<Value>.alignment))
        mutex = raw.initializeMemory(as: pthread_mutex_t.self, repeating: pthread_mutex_t(), count: 1)
        pthread_mutex_init(mutex, nil)
        self.value = (raw + Self.valueOffset).initializeMemory(as: Value.self, repeating: value, count: 1)
    }

    deinit {
        value.deinitialize(count: 1)
        pthread_mutex_destroy(mutex)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

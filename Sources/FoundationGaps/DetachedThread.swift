// A named OS thread for the loops that block (libcurl's multi loop, c-ares, getaddrinfo, the
// signal pipe, the console's keyboard): pthread_create, as Foundation's Thread does underneath.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Names the calling thread by writing its `comm` (what pthread_setname_np does on Linux; the
/// Glibc module does not export that GNU function). Best effort: without /proc it keeps its name.
private func nameThisThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}

/// Starts `body` on a new detached thread named `name` (the kernel keeps the first 15 bytes,
/// which is what `top -H` and `/proc/PID/task/TID/comm` show).
///
/// A thread the system refuses (EAGAIN: out of threads or memory) is a condition ipdirect cannot
/// run without, as with Foundation's Thread, so it stops the program with the reason.
public func detachThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let result = pthread_create(
        &thread, &attributes,
        { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            nameThisThread(start.name)
            start.body()
            return nil
        }, start)
    if result != 0 {
        Unmanaged<Start>.fromOpaque(start).release()
        fatalError("cannot start the thread \(name): \(String(cString: strerror(result)))")
    }
}

/// Runs `work` on a new thread named `name` and returns its result to the awaiting task: for a
/// call that blocks (c-ares' poll, a set of connects), kept off Swift's few cooperative threads.
///
/// The result crosses through a `HandOff` (a lock taken on both sides): `make tsan-opt` reported
/// the task's read of what the thread built (DNSServerResolver's addresses) as a race without it.
public func onThreadOfItsOwn<T: Sendable>(named name: String, _ work: @escaping @Sendable () -> T) async -> T {
    await HandOff().value { delivery in
        detachThread(named: name) { delivery.deliver(work()) }
    }
}

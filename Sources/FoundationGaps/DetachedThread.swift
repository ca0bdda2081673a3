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

/// Runs `work` on a thread of its own named `name` and returns its result to the awaiting task:
/// for a call that blocks (c-ares' poll, a set of connects), kept off Swift's few cooperative
/// threads. The thread is one an earlier call of the same name left parked when one is idle
/// (`ParkedThreads`), a new one otherwise: `/probe` asks a DNS server for every request, and a
/// thread made and named for each lookup was a clone, an open and a write apiece (issue 34).
///
/// The result crosses through a `HandOff` (a lock taken on both sides): `make tsan-opt` reported
/// the task's read of what the thread built (DNSServerResolver's addresses) as a race without it.
public func onThreadOfItsOwn<T: Sendable>(named name: String, _ work: @escaping @Sendable () -> T) async -> T {
    await HandOff().value { delivery in
        ParkedThreads.shared.run(named: name) { delivery.deliver(work()) }
    }
}

/// Threads that stay after their work for the next work of the same name, a while: a thread
/// started per blocking call costs more than the call when the call is quick (a c-ares lookup
/// on loopback). Each parked thread waits on its own condition, so handing it work wakes it alone.
public final class ParkedThreads: @unchecked Sendable {
    /// The threads `onThreadOfItsOwn` runs its work on.
    public static let shared = ParkedThreads(perName: 16, idleFor: .seconds(10))

    /// One thread's place on the shelf: the work handed to it while it waits.
    private final class Worker: @unchecked Sendable {
        let condition = Condition()
        /// Set by `run` under the condition's lock; taken by the worker under it.
        var work: (@Sendable () -> Void)?
    }

    /// Parked workers by thread name, the most recently parked last.
    private let idle = Locked([String: [Worker]]())
    private let perName: Int
    private let idleFor: UInt64

    /// - Parameters:
    ///   - perName: the most threads of one name kept parked; one more ends after its work.
    ///   - idleFor: how long a parked thread waits for work before it ends.
    public init(perName: Int, idleFor: Duration) {
        self.perName = perName
        self.idleFor = Condition.nanoseconds(idleFor)
    }

    /// Runs `body` on a parked thread named `name`, or on a new one when none is idle.
    public func run(named name: String, _ body: @escaping @Sendable () -> Void) {
        if let worker = idle.withLock({ $0[name]?.popLast() }) {
            worker.condition.lock()
            worker.work = body
            worker.condition.signal()
            worker.condition.unlock()
            return
        }
        detachThread(named: name) { self.serve(name, first: body) }
    }

    /// How many threads named `name` are parked now.
    public func parked(named name: String) -> Int { idle.withLock { $0[name]?.count ?? 0 } }

    /// The thread's life: its work, then parked until more comes or the idle time passes.
    private func serve(_ name: String, first: @escaping @Sendable () -> Void) {
        let worker = Worker()
        var next: (@Sendable () -> Void)? = first
        while let work = next {
            work()
            next = park(worker, name)
        }
    }

    /// Parks `worker` and waits for work; nil when the thread should end (the shelf full, or no
    /// work came within the idle time).
    private func park(_ worker: Worker, _ name: String) -> (@Sendable () -> Void)? {
        let parked = idle.withLock { idle -> Bool in
            guard idle[name, default: []].count < perName else { return false }
            idle[name, default: []].append(worker)
            return true
        }
        guard parked else { return nil }
        let due = Condition.now + idleFor
        worker.condition.lock()
        defer { worker.condition.unlock() }
        while worker.work == nil, Condition.now < due { worker.condition.wait(until: due) }
        if worker.work == nil {
            // Off the shelf before ending, unless `run` took it off meanwhile: then work is coming.
            worker.condition.unlock()
            let left = idle.withLock { idle -> Bool in
                guard let index = idle[name]?.firstIndex(where: { $0 === worker }) else { return false }
                idle[name]?.remove(at: index)
                return true
            }
            worker.condition.lock()
            if left { return nil }
            while worker.work == nil { worker.condition.wait(until: nil) }
        }
        let work = worker.work
        worker.work = nil
        return work
    }
}

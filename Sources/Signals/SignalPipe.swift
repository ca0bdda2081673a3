// Signals delivered through a pipe (the self-pipe trick): the handler only write(2)s the signal
// number, and the owner reads it as an async stream, a callback, or from its own poll loop.
import FoundationGaps

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Watches a set of signals from creation until `stop()`.
///
/// Each watched signal gets a handler that does one async-signal-safe thing: it writes the
/// signal number as one byte to a pipe (for signals listed in `chaining`, after calling the
/// handler that was installed before, such as ncurses's SIGWINCH handler). Unlike a dispatch
/// signal source on Linux, this works whichever of the process's threads the kernel picks.
/// `stop()` puts back the dispositions that were in force before and closes the pipe.
///
/// A signal can be watched by one `SignalPipe` at a time.
///
/// ```swift
/// let signals = try SignalPipe(watching: [SIGINT, SIGTERM])
/// for await number in signals.received() { ... break }
/// signals.stop()
/// ```
public final class SignalPipe: @unchecked Sendable {
    /// The signals this pipe watches.
    public let signals: [Int32]
    /// The end to poll for readability in a loop of one's own; read it with `drain()`.
    public let readDescriptor: Int32
    private let writeDescriptor: Int32
    private let state = Locked(State())

    /// What `stop()` puts back and whether it has, and whether a reader has started.
    private struct State {
        var previous: [Int32: sigaction] = [:]
        var stopped = false
        var readerStarted = false
    }

    /// Installs a handler for each of `signals`.
    ///
    /// - Parameters:
    ///   - signals: the signal numbers to watch (SIGINT, SIGTERM, ...).
    ///   - chaining: the signals whose previous handler (when it is a function) runs first.
    /// - Throws: `SignalPipeError` when the pipe cannot be made or a signal is already watched.
    public init(watching signals: [Int32], chaining: Set<Int32> = []) throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SignalPipeError.noPipe(errno: errno) }
        readDescriptor = ends[0]
        writeDescriptor = ends[1]
        self.signals = signals
        // The handler must never block: a full pipe drops the byte (the signal is already pending).
        _ = fcntl(writeDescriptor, F_SETFL, fcntl(writeDescriptor, F_GETFL) | O_NONBLOCK)
        for descriptor in ends { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        try SignalTable.lock.withLock { _ in try install(signals, chaining: chaining) }
    }

    /// Installs the handlers; the caller holds the table's lock.
    private func install(_ signals: [Int32], chaining: Set<Int32>) throws {
        for number in signals {
            guard number > 0, number < SignalTable.capacity else {
                uninstall(holdingTableLock: true)
                throw SignalPipeError.unknownSignal(number)
            }
            guard SignalTable.writeEnds[Int(number)] < 0 else {
                uninstall(holdingTableLock: true)
                throw SignalPipeError.alreadyWatched(number)
            }
            var old = sigaction()
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = signalPipeHandler
            #else
                action.__sigaction_u.__sa_handler = signalPipeHandler
            #endif
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            // Written before the handler can run, so the handler only ever reads.
            SignalTable.writeEnds[Int(number)] = writeDescriptor
            SignalTable.chained[Int(number)] = nil
            _ = sigaction(number, nil, &old)
            if chaining.contains(number) { SignalTable.chained[Int(number)] = Self.function(of: old) }
            _ = sigaction(number, &action, nil)
            state.withLock { $0.previous[number] = old }
        }
    }

    deinit {
        stop()
        close(readDescriptor)
    }

    /// The signals received from now until `stop()`, in order. Call it once: one reader per pipe.
    public func received() -> AsyncStream<Int32> {
        let first = state.withLock { state in
            defer { state.readerStarted = true }
            return !state.readerStarted
        }
        precondition(first, "SignalPipe.received() is called once per pipe")
        return AsyncStream { continuation in
            // A blocking read ends with end-of-file when stop() closes the write end.
            detachThread(named: "ipdirect signals") { [self] in
                while let number = self.next() { continuation.yield(number) }
                continuation.finish()
            }
        }
    }

    /// Calls `body` on a thread of its own for each signal received, until `stop()`.
    public func onSignal(_ body: @escaping @Sendable (Int32) -> Void) {
        let stream = received()
        Task { for await number in stream { body(number) } }
    }

    /// The signals waiting in the pipe, without blocking; for owners that poll `readDescriptor`.
    public func drain() -> [Int32] {
        var numbers: [Int32] = []
        var ready = pollfd(fd: readDescriptor, events: Int16(POLLIN), revents: 0)
        while poll(&ready, 1, 0) > 0, ready.revents & Int16(POLLIN) != 0 {
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = read(readDescriptor, &bytes, bytes.count)
            if count <= 0 { break }
            numbers += bytes[..<count].map { Int32($0) }
        }
        return numbers
    }

    /// Puts back the dispositions in force before this pipe and stops the stream.
    ///
    /// Safe to call more than once; also done when the pipe is released.
    public func stop() {
        SignalTable.lock.withLock { _ in uninstall(holdingTableLock: true) }
    }

    /// The next signal, waiting for it; nil once the pipe is stopped.
    private func next() -> Int32? {
        var byte: UInt8 = 0
        while true {
            let count = read(readDescriptor, &byte, 1)
            if count == 1 { return Int32(byte) }
            if count == 0 || errno != EINTR { return nil }
        }
    }

    private func uninstall(holdingTableLock: Bool) {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            for (number, old) in state.previous {
                var old = old
                _ = sigaction(number, &old, nil)
                SignalTable.writeEnds[Int(number)] = -1
                SignalTable.chained[Int(number)] = nil
            }
            state.previous = [:]
            close(writeDescriptor)
        }
    }

    private static func function(of action: sigaction) -> (@convention(c) (Int32) -> Void)? {
        #if canImport(Glibc)
            let handler = action.__sigaction_handler.sa_handler
        #else
            let handler = action.__sigaction_u.__sa_handler
        #endif
        guard let handler else { return nil }
        let raw = unsafeBitCast(handler, to: Int.self)
        // SIG_DFL is 0 and SIG_IGN is 1: dispositions, not functions to call.
        if raw == 0 || raw == 1 || raw == -1 { return nil }
        return handler
    }
}

/// Why a `SignalPipe` could not start.
public enum SignalPipeError: Error, CustomStringConvertible {
    case noPipe(errno: Int32)
    case unknownSignal(Int32)
    case alreadyWatched(Int32)

    public var description: String {
        switch self {
        case .noPipe(let code):
            "cannot create the signal pipe: \(String(cString: strerror(code))); close some files and try again"
        case .unknownSignal(let number): "signal \(number) is not a signal this system knows"
        case .alreadyWatched(let number):
            "signal \(number) is already watched by another SignalPipe; stop that one first"
        }
    }
}

/// What the handler reads: per signal, the pipe to write to and the handler to call first.
/// Fixed-size tables allocated once, written only under `lock` (which guards them: it holds no
/// value of its own) while the handler is not yet
/// (or no longer) installed for that signal, so the handler never allocates or locks.
private enum SignalTable {
    static let capacity: Int32 = 65
    static let lock = Locked(())
    nonisolated(unsafe) static let writeEnds: UnsafeMutablePointer<Int32> = {
        let table = UnsafeMutablePointer<Int32>.allocate(capacity: Int(capacity))
        table.initialize(repeating: -1, count: Int(capacity))
        return table
    }()
    nonisolated(unsafe) static let chained: UnsafeMutablePointer<(@convention(c) (Int32) -> Void)?> = {
        let table = UnsafeMutablePointer<(@convention(c) (Int32) -> Void)?>.allocate(capacity: Int(capacity))
        table.initialize(repeating: nil, count: Int(capacity))
        return table
    }()
}

/// The one handler: calls the chained handler, then writes the signal number; keeps errno.
private func signalPipeHandler(_ number: Int32) {
    let saved = errno
    SignalTable.chained[Int(number)]?(number)
    let descriptor = SignalTable.writeEnds[Int(number)]
    if descriptor >= 0 {
        var byte = UInt8(truncatingIfNeeded: number)
        _ = write(descriptor, &byte, 1)
    }
    errno = saved
}

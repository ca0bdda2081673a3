// SignalPipe: a signal raised in this process arrives through the pipe, and when the pipe is
// stopped the disposition that was there before is back.
import Foundation
import Signals
import Testing

@Suite(.serialized) struct SignalPipeTests {
    /// Sends `number` to this process (as `kill` from a shell would; `raise` would target the
    /// calling thread, and the concurrency runtime's threads block signals).
    private func send(_ number: Int32) { _ = kill(getpid(), number) }

    /// Waits (up to 5 s) until the pipe has something to read.
    private func waitReadable(_ signals: SignalPipe) {
        var ready = pollfd(fd: signals.readDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&ready, 1, 5_000)
    }

    /// The handler installed for `number` now, as a raw address (0 is SIG_DFL, 1 is SIG_IGN).
    private func disposition(_ number: Int32) -> Int {
        var current = sigaction()
        _ = sigaction(number, nil, &current)
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
    }

    @Test func signalsSentToTheProcessArriveOnTheStream() async throws {
        let signals = try SignalPipe(watching: [SIGUSR1, SIGUSR2])
        let stream = signals.received()
        send(SIGUSR1)
        send(SIGUSR2)
        var seen: [Int32] = []
        for await number in stream {
            seen.append(number)
            if seen.count == 2 { break }
        }
        signals.stop()
        #expect(Set(seen) == [SIGUSR1, SIGUSR2])
    }

    @Test func stopPutsBackThePreviousDisposition() throws {
        let ignore = signal(SIGUSR1, SIG_IGN)
        defer { _ = signal(SIGUSR1, ignore) }
        #expect(disposition(SIGUSR1) == 1)
        let signals = try SignalPipe(watching: [SIGUSR1])
        #expect(disposition(SIGUSR1) > 1, "the pipe's handler is installed")
        signals.stop()
        #expect(disposition(SIGUSR1) == 1, "SIG_IGN is back after stop")
        // Stopped: a second pipe may watch the same signal.
        let again = try SignalPipe(watching: [SIGUSR1])
        again.stop()
    }

    @Test func aPollingOwnerDrainsWhatArrived() throws {
        let signals = try SignalPipe(watching: [SIGUSR2])
        defer { signals.stop() }
        #expect(signals.drain().isEmpty)
        send(SIGUSR2)
        waitReadable(signals)
        #expect(signals.drain() == [SIGUSR2])
    }

    @Test func oneSignalHasOneWatcher() throws {
        let first = try SignalPipe(watching: [SIGUSR1])
        defer { first.stop() }
        #expect(throws: SignalPipeError.self) { try SignalPipe(watching: [SIGUSR1]) }
        #expect(disposition(SIGUSR1) > 1, "the failed second watcher left the first one in place")
    }

    @Test func aChainedHandlerRunsBeforeThePipeIsWritten() throws {
        let previous = signal(SIGUSR2) { _ in ChainProbe.calls += 1 }
        defer { _ = signal(SIGUSR2, previous) }
        ChainProbe.calls = 0
        let signals = try SignalPipe(watching: [SIGUSR2], chaining: [SIGUSR2])
        defer { signals.stop() }
        send(SIGUSR2)
        waitReadable(signals)
        #expect(signals.drain() == [SIGUSR2])
        #expect(ChainProbe.calls == 1)
    }
}

private enum ChainProbe {
    nonisolated(unsafe) static var calls = 0
}

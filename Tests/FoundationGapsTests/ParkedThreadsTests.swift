// The threads blocking calls run on: still off the caller and under their name, kept for the next
// call of that name (issue 34: `/probe` made a thread per DNS lookup), and ended when idle.
import Foundation
import FoundationGaps
import Testing

@Suite struct ParkedThreadsTests {
    /// The kernel's id of the calling thread, from /proc/thread-self ("PID/task/TID"): unlike a
    /// pthread_t, not handed to the next thread as soon as one ends.
    static func threadID() -> String {
        ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "")
            .split(separator: "/").last.map(String.init) ?? ""
    }

    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .newlines)
    }

    @Test func workRunsOffTheCallerUnderItsNameOnTheThreadTheLastCallLeft() async {
        let caller = Self.threadID()
        let first = await onThreadOfItsOwn(named: "ipdirect-test-park") { (Self.threadID(), Self.threadName()) }
        let second = await onThreadOfItsOwn(named: "ipdirect-test-park") { (Self.threadID(), Self.threadName()) }
        #expect(first.0 != caller)
        // The kernel keeps the first 15 bytes of a thread's name.
        #expect(first.1 == "ipdirect-test-p")
        #expect(second.1 == "ipdirect-test-p")
        // Before, each call started (and named) a thread of its own.
        #expect(second.0 == first.0)
    }

    @Test func aParkedThreadEndsWhenNoWorkComesWithinItsIdleTime() async throws {
        let threads = ParkedThreads(perName: 4, idleFor: .milliseconds(200))
        func threadOfNextRun() async -> String {
            await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
                threads.run(named: "ipdirect-test-idle") { continuation.resume(returning: Self.threadID()) }
            }
        }
        let first = await threadOfNextRun()
        try await Task.sleep(for: .seconds(1))
        // The first thread waited 200 ms for work and ended: the next run has a new one.
        #expect(threads.parked(named: "ipdirect-test-idle") == 0)
        #expect(await threadOfNextRun() != first)
    }

    @Test func atMostTheBoundOfThreadsStayParked() async throws {
        let threads = ParkedThreads(perName: 2, idleFor: .seconds(10))
        let started = Locked(0)
        let release = Locked(false)
        // Five at once, each blocked until all have started: five threads, two kept after.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        threads.run(named: "ipdirect-test-bound") {
                            started.withLock { $0 += 1 }
                            while !release.withLock({ $0 }) {
                                if started.withLock({ $0 }) == 5 { release.withLock { $0 = true } }
                                usleep(1000)
                            }
                            continuation.resume()
                        }
                    }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(threads.parked(named: "ipdirect-test-bound") == 2)
    }
}

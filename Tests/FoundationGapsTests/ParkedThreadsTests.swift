// The threads blocking calls run on: still off the caller and under their name, kept for the next
// call of that name (issue 34: `/probe` made a thread per DNS lookup), and ended when idle.
import Foundation
import FoundationGaps
import Testing

/// Polls `condition` every 10 ms, 500 times at most: counted in polls, not in wall time, because
/// under the whole suite a task's sleep can end many seconds late.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<500 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

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

    @Test func workRunsOffTheCallerUnderItsName() async {
        let caller = Self.threadID()
        let (thread, name) = await onThreadOfItsOwn(named: "ipdirect-test-park") {
            (Self.threadID(), Self.threadName())
        }
        #expect(thread != caller)
        // The kernel keeps the first 15 bytes of a thread's name.
        #expect(name == "ipdirect-test-p")
    }

    // The shelves in these tests wait 600 s, not `shared`'s 10: under the whole suite a test's
    // task can resume more than 10 s late, and a parked thread would have ended meanwhile.
    @Test func theNextWorkOfANameRunsOnTheThreadTheLastLeftParked() async {
        let threads = ParkedThreads(perName: 4, idleFor: .seconds(600))
        func nextRun() async -> (String, String) {
            await withCheckedContinuation { (continuation: CheckedContinuation<(String, String), Never>) in
                threads.run(named: "ipdirect-test-again") {
                    continuation.resume(returning: (Self.threadID(), Self.threadName()))
                }
            }
        }
        let first = await nextRun()
        // The thread parks just after it hands the result over.
        #expect(await eventually { threads.parked(named: "ipdirect-test-again") == 1 })
        let second = await nextRun()
        // Before (main's onThreadOfItsOwn), each call started and named a thread of its own.
        #expect(second.0 == first.0)
        #expect(second.1 == "ipdirect-test-a")
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
        #expect(await eventually { threads.parked(named: "ipdirect-test-idle") == 0 })
        #expect(await threadOfNextRun() != first)
    }

    @Test func atMostTheBoundOfThreadsStayParked() async throws {
        let threads = ParkedThreads(perName: 2, idleFor: .seconds(600))
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
        #expect(await eventually { threads.parked(named: "ipdirect-test-bound") == 2 })
        // The other three ended instead of parking.
        try await Task.sleep(for: .milliseconds(200))
        #expect(threads.parked(named: "ipdirect-test-bound") == 2)
    }
}

// A ThreadSanitizer report with no race (Swift 6.3.1, found by `make tsan-opt`): an unsafe continuation
// resumed from another thread, its value read by the awaiting task, reported at -O only.
//
//   swiftc -parse-as-library -sanitize=thread -O -g tsan-continuation-resume.swift -o repro && ./repro
//     "WARNING: ThreadSanitizer: data race": read in withUnsafeThrowingContinuation(isolation:_:)
//     (specialized), previous write in UnsafeContinuation.resume(returning:) on the resuming thread;
//   swiftc ... -Onone: clean ("done"), the read being inside the uninstrumented stdlib;
//   with withCheckedThrowingContinuation: clean; with withUnsafeContinuation (not throwing): reported,
//     inlined into the caller (so the top frame is the caller's).
//   TSAN_OPTIONS=suppressions=scripts/tsan-suppressions.txt: clean (the one suppression matched; it
//     names the inlined frame, which the symbolizer sees from -g's debug info: SwiftPM's builds have it).
import Foundation

func fromThread() async throws -> [Int] {
    try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<[Int], any Error>) in
        Thread { continuation.resume(returning: Array(0..<Int.random(in: 1...5))) }.start()
    }
}

@main struct Main {
    static func main() async throws {
        var total = 0
        for _ in 0..<200 { total += try await fromThread().count }
        print("done", total)
    }
}

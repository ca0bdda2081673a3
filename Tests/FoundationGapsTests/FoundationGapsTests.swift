// Each of FoundationGaps' stand-ins against the full Foundation it replaces in the binary (tests
// may import Foundation: they do not ship), on the inputs ipdirect meets and the awkward ones.
import Foundation
import FoundationGaps
import Testing

@Suite struct FoundationGapsTests {
    static let awkward = [
        "", " ", "\t a b \t", " \u{00A0}x\u{3000} ", "\n x \r\n", "\u{2028}y\u{85}", "\u{0B}z\u{0C}", "plain",
        "  only spaces  ", "é\u{301} ", "\u{200B}zero-width\u{200B}", "[::1]", "..a.b..", "\u{1F600} ",
    ]

    @Test func trimmingMatchesFoundationsWhitespaceSets() {
        for text in Self.awkward {
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
            #expect(
                text.trimmingWhitespaceAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(text.debugDescription)")
            #expect(
                text.trimming(charactersIn: "[].") == text.trimmingCharacters(in: CharacterSet(charactersIn: "[].")),
                "\(text.debugDescription)")
        }
    }

    @Test func percentEncodingMatchesFoundationForEveryASCIIByte() {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let everyByte = String(decoding: (1...127).map { UInt8($0) }, as: UTF8.self)
        for text in [everyByte, "www.example.com", "a b&c=d/é", "ip=1.2.3.4&ttl=60", ""] {
            #expect(text.percentEncoded(keeping: "-._~") == text.addingPercentEncoding(withAllowedCharacters: allowed))
            #expect(text.percentEncoded() == text.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        }
        // Each byte of a non-ASCII character is escaped, never kept raw.
        #expect("é".percentEncoded() == "%C3%A9")
    }

    @Test func percentDecodingMatchesFoundation() {
        for text in ["a%20b", "%E4%BD%A0", "100%", "%zz", "%4", "%C3", "%c3%a9", "plain", "", "%00x", "+"] {
            #expect(text.percentDecoded == text.removingPercentEncoding, "\(text.debugDescription)")
        }
    }

    @Test func cFormatMatchesFoundationForTheFormatsUsed() {
        let doubles: [Double] = [0, 0.05, 0.15, 1.25, 2.5, 99.95, 1234.5678, -3.14159, 1e9]
        for format in ["%.1f", "%.2f", "%.0f ms", "%8.1f", "+%.3fs", "%g", "%.3g", "%18.1f ms"] {
            for value in doubles {
                #expect(String(cFormat: format, value) == NSString(format: format as NSString, value) as String)
            }
        }
        for value in [0, 7, 59, 255, 4095, 65535] {
            for format in ["%02x", "%08x", "\\u%04x", "\\u%04X", "\\%03o", "%02d", "%d:%02d"] {
                #expect(
                    String(cFormat: format, value, value) == NSString(format: format as NSString, value, value)
                        as String)
            }
        }
        #expect(String(cFormat: "%04d-%02d-%02d", 2026, 11, 27) == "2026-11-27")
        // Longer than the first buffer: measured, then written whole.
        #expect(String(cFormat: "%300d", 1).count == 300)
    }

    @Test func pathComponentsMatchNSString() {
        for path in ["/tmp/a.pem", "/tmp/x/", "/a", "/", "a.pem", "", "a/b/c", "//tmp//a", "/tmp/x//", "rel/"] {
            #expect(path.deletingLastPathComponent == (path as NSString).deletingLastPathComponent, "\(path)")
            #expect(path.lastPathComponent == (path as NSString).lastPathComponent, "\(path)")
            #expect(
                path.appendingPathComponent("b.pem") == (path as NSString).appendingPathComponent("b.pem"), "\(path)")
        }
    }

    @Test func canonicalCompositionMatchesFoundation() {
        for text in ["e\u{301}", "ｅ", "A\u{30A}", "Å", "한국", "\u{1100}\u{1161}", "plain", "ﬁ", ""] {
            #expect(text.canonicallyComposed == text.precomposedStringWithCanonicalMapping, "\(text.debugDescription)")
        }
    }

    @Test func aDetachedThreadRunsItsBodyUnderItsName() async {
        let name = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            detachThread(named: "ipdirect-test-thread-name") {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                continuation.resume(returning: comm.trimmingCharacters(in: .newlines))
            }
        }
        #expect(name == "ipdirect-test-t")
    }

    @Test func lockedSerialisesWriters() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1000 { counter.withLock { $0 += 1 } } }
            }
        }
        #expect(counter.withLock { $0 } == 8000)
    }

    /// State kept outside the lock that guards it, as TransferLoop's hand-off and the signal table do.
    final class Tally: @unchecked Sendable { var count = 0 }

    /// Under `make tsan` this was reported as a race before Locked kept its value behind a pointer:
    /// the zero-sized value's access landed on the object's first word.
    @Test func aLockOfNothingSerialisesWhatItGuards() async {
        let lock = Locked(())
        let tally = Tally()
        // Two threads of their own, so the two meet whatever the cooperative pool's width.
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<2 {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        detachThread(named: "ipdirect-test-\(index)") {
                            for _ in 0..<20_000 { lock.withLock { _ in tally.count += 1 } }
                            continuation.resume()
                        }
                    }
                }
            }
        }
        #expect(lock.withLock { _ in tally.count } == 40_000)
    }

    /// What a thread builds and hands over: the task reads what the thread wrote.
    final class Built: Sendable {
        let task: Int
        let thread: String
        init(task: Int, thread: String) {
            self.task = task
            self.thread = thread
        }
    }

    /// Two threads race to hand each of many tasks a value through one hand-off, as a result and
    /// its deadline do: every task gets exactly one value, its own, and exactly one delivery per
    /// task is taken.
    @Test func aHandOffGivesEachTaskOneValueOfTheManyOffered() async {
        let handOff = HandOff()
        let taken = Locked(0)
        let tasks = 100
        let received = await withTaskGroup(of: Built.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    await handOff.value { delivery in
                        for thread in ["result", "deadline"] {
                            detachThread(named: "ipdirect-test-\(thread)") {
                                if delivery.deliver(Built(task: task, thread: thread)) { taken.withLock { $0 += 1 } }
                            }
                        }
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(received.map(\.task).sorted() == Array(0..<tasks))
        #expect(received.allSatisfy { ["result", "deadline"].contains($0.thread) })
        // The losing thread of the last task may still be on its way to its refused delivery.
        for _ in 0..<1000 where taken.withLock({ $0 }) < tasks { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(taken.withLock { $0 } == tasks)
        #expect(handOff.waiting == 0)
    }

    /// `waiting` counts a task from the moment it waits to the moment it has its value (what
    /// TransferLoop.unfinished reports), and a second delivery changes nothing.
    @Test func aHandOffCountsItsWaitingTasks() async {
        let handOff = HandOff()
        let held = Locked<HandOff.Delivery<String>?>(nil)
        let waiter = Task { await handOff.value { delivery in held.withLock { $0 = delivery } } }
        while held.withLock({ $0 }) == nil { await Task.yield() }
        #expect(handOff.waiting == 1)
        let delivery = held.withLock { $0 }!
        #expect(delivery.deliver("first"))
        #expect(await waiter.value == "first")
        #expect(handOff.waiting == 0)
        #expect(!delivery.deliver("second"))
    }
}

// The resolver cache's non-blocking lookup at 10,000 entries, alone and with a writer thread
// refreshing entries, against a plain Dictionary under the same kind of lock as the peer.
import Foundation
import NameResolution

enum CacheBenchmark {
    static let entryCount = 10_000
    /// `IPDIRECT_BENCH_LOOKUPS` and `IPDIRECT_BENCH_ROUNDS` shrink a run, e.g. under callgrind,
    /// which counts instructions whatever else the machine is doing.
    static let lookups = ProcessInfo.processInfo.environment["IPDIRECT_BENCH_LOOKUPS"].flatMap { Int($0) } ?? 2_000_000
    static let rounds = ProcessInfo.processInfo.environment["IPDIRECT_BENCH_ROUNDS"].flatMap { Int($0) } ?? 5

    static func run() async throws {
        let names = (0..<entryCount).map { "host-\($0).bench.test" }
        let now = Date()
        let snapshots = names.enumerated().map { index, name in
            CacheEntrySnapshot(
                host: name, family: .v4, ips: ["192.0.2.\(index % 250 + 1)", "198.51.100.\(index % 250 + 1)"],
                ttl: 86_400, resolvedAt: now, source: .httpdns)
        }
        let cache = ResolverCache(
            configuration: ResolverConfiguration(provider: .system, family: .v4), provider: SystemProvider())
        for snapshot in snapshots { cache.insert(snapshot) }
        let peer = Locked([String: CacheEntrySnapshot]())
        peer.withLock { dictionary in for snapshot in snapshots { dictionary[snapshot.host] = snapshot } }

        // Random order, so the lookups do not walk the table in insertion order.
        var generator = SplitMix(seed: 42)
        let order = (0..<lookups).map { _ in names[Int(generator.next() % UInt64(entryCount))] }

        print("lookup at \(entryCount) entries, \(lookups) lookups a round, best of \(rounds) rounds")
        print("                        ResolverCache.lookup   peer: Dictionary under a mutex   ratio")
        for withWriter in [false, true] {
            let stop = Locked(false)
            var writers: [Thread] = []
            if withWriter {
                writers.append(writer(stop: stop) { index in cache.insert(refreshed(snapshots[index])) })
            }
            let ours = best { measure(order) { cache.lookup($0, family: .v4)?.ips.count ?? 0 } }
            stop.withLock { $0 = true }
            var peerWriters: [Thread] = []
            let peerStop = Locked(false)
            if withWriter {
                peerWriters.append(
                    writer(stop: peerStop) { index in
                        let entry = refreshed(snapshots[index])
                        peer.withLock { $0[entry.host] = entry }
                    })
            }
            let theirs = best {
                measure(order) { name in
                    peer.withLock { dictionary -> CacheEntrySnapshot? in dictionary[name] }?.ips.count ?? 0
                }
            }
            peerStop.withLock { $0 = true }
            _ = writers + peerWriters
            let label = withWriter ? "with a writer thread" : "alone"
            print(
                label.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(
                        format: "%8.1f ns/lookup        %8.1f ns/lookup               %.2f", ours, theirs, ours / theirs
                    ))
        }
        print("aim: under 250 ns per lookup")
    }

    /// A writer refreshing entries on its own thread until told to stop.
    static func writer(stop: Locked<Bool>, _ write: @escaping @Sendable (Int) -> Void) -> Thread {
        let thread = Thread {
            var generator = SplitMix(seed: 7)
            var count = 0
            while true {
                write(Int(generator.next() % UInt64(entryCount)))
                count += 1
                if count % 64 == 0, stop.withLock({ $0 }) { break }
            }
        }
        thread.start()
        return thread
    }

    static func refreshed(_ entry: CacheEntrySnapshot) -> CacheEntrySnapshot {
        var copy = entry
        copy.resolvedAt = Date()
        return copy
    }

    /// Nanoseconds per call of `body` over every name.
    static func measure(_ names: [String], _ body: (String) -> Int) -> Double {
        var sink = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for name in names { sink &+= body(name) }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        if sink == -1 { print("unreachable") }
        return Double(elapsed) / Double(names.count)
    }

    /// The lowest of several rounds: the machine is shared, and noise only ever adds time.
    static func best(_ round: () -> Double) -> Double {
        (0..<rounds).map { _ in round() }.min() ?? 0
    }
}

/// A small deterministic random generator, so every run looks up the same names.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

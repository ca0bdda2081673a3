// IP ranking and watching against the real lab: addresses ranked by real TCP connects with
// failures last, and a watch that records the round where a scenario's outcome changed.
import Foundation
import Lab
import NameResolution
import Probe
import Testing

@Suite("IP ranking and watch against the lab")
struct RankWatchTests {
    @Test("an address where nothing listens ranks last, with a sentence; the answering ones first")
    func refusedAddressRanksLast() async throws {
        try await withLab { lab in
            let url = lab.url("plain.lab.test")
            let port = try ProbeURL.parse(url).port
            // HTTPDNS puts the dead address first; the SDK's ranking must move it behind.
            let resolve = zoneResolver(
                lab, system: ["plain.lab.test": ["127.0.0.1"]],
                httpdns: ["plain.lab.test": ["127.0.0.2", "127.0.0.1"]])
            let resolution = await resolve("plain.lab.test")
            let engine = ProbeEngine(resolve: resolve, options: ProbeOptions(), environment: [:])
            let report = try #require(await engine.probeAll([url]).first)
            let ranking = await IPRanking.rank(resolution, port: port, attempts: report.attempts)
            #expect(ranking.ips.map(\.ip) == ["127.0.0.1", "127.0.0.2"])
            #expect(ranking.sdkOrder == ["127.0.0.1", "127.0.0.2"])
            let live = try #require(ranking.ips.first)
            #expect(live.connectMs != nil && live.error == nil)
            #expect(Set(live.sources) == [.httpdns, .system])
            #expect(live.usedBy.contains(.systemDNS))
            let dead = try #require(ranking.ips.last)
            #expect(dead.connectMs == nil)
            #expect(dead.error?.sentence.contains("refused") == true)
            #expect(dead.sdkRank == 2)
            #expect(dead.usedBy.contains(.directHTTP))
            #expect(ranking.tableLines().joined(separator: "\n").contains("failed"))
        }
    }

    @Test("the dual-stack name: both addresses connect and get a time")
    func dualStack() async throws {
        try await withLab { lab in
            let url = lab.url("dual.lab.test")
            let resolution = await zoneResolver(lab)("dual.lab.test")
            let ranking = await IPRanking.rank(resolution, port: try ProbeURL.parse(url).port)
            #expect(Set(ranking.ips.map(\.ip)) == ["127.0.0.1", "::1"])
            #expect(ranking.ips.allSatisfy { $0.connectMs != nil })
            #expect(ranking.note == nil)
        }
    }

    @Test("a watch records the round where a scenario stopped working, and what changed")
    func watchRecordsChange() async throws {
        try await withLab { lab in
            let flip = Flip()
            let zone = zoneResolver(lab)
            let resolve: HostResolver = { host in
                var answer = await zone(host)
                // From round 3 on HTTPDNS answers an address where nothing listens.
                if flip.next() >= 3 { answer.httpdns.ipv4 = ["127.0.0.2"] }
                return answer
            }
            let engine = ProbeEngine(resolve: resolve, options: ProbeOptions(), environment: [:])
            let watch = Watch(engine: engine, url: lab.url("plain.lab.test"))
            var history = WatchHistory(capacity: 3)
            var seen: [WatchRound] = []
            for await (round, _) in watch.rounds(every: { 0.01 }, count: 4) {
                seen.append(round)
                history.record(round)
            }
            #expect(seen.map(\.round) == [1, 2, 3, 4])
            #expect(seen[0].cell(.directHTTP)?.outcome == .ok)
            #expect(seen[2].cell(.directHTTP)?.outcome == .connectFailed)
            #expect(seen[1].changes.isEmpty && seen[3].changes.isEmpty)
            #expect(seen[2].changes.contains("direct-http: ok → connect-failed"))
            #expect(seen[2].changes.contains("recommended: direct-http → none"))
            // The history keeps the newest three rounds and the changed one.
            #expect(history.rounds.map(\.round) == [2, 3, 4])
            #expect(history.total == 4)
            #expect(history.changed.map(\.round) == [3])
            let lines = String(decoding: history.jsonLines(), as: UTF8.self).split(separator: "\n")
            #expect(lines.count == 3)
        }
    }
}

/// Counts resolutions, so a test can change the answer from a given round on.
private final class Flip: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}

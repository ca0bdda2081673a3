// The cache's hash table against a Dictionary doing the same inserts, replacements and
// removals: every key stays findable after removals shift probe runs back.
import Foundation
import Testing

@testable import NameResolution

@Suite("Entry table")
struct EntryTableTests {
    func entry(_ host: String, _ n: Int) -> CacheEntrySnapshot {
        CacheEntrySnapshot(
            host: host, family: .v4, ips: ["192.0.2.\(n % 250 + 1)"], ttl: n + 1,
            resolvedAt: Date(timeIntervalSince1970: 0), source: .httpdns)
    }

    @Test("matches a Dictionary through 20,000 random operations")
    func againstDictionary() {
        var table = EntryTable()
        var model: [String: CacheEntrySnapshot] = [:]
        var state: UInt64 = 1
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for step in 0..<20_000 {
            let host = "h\(next() % 3000).test"
            let key = CacheKey(host: host, family: .v4)
            if next() % 3 == 0 {
                table[key] = nil
                model[host] = nil
            } else {
                table[key] = entry(host, step)
                model[host] = entry(host, step)
            }
        }
        #expect(table.count == model.count)
        for (host, expected) in model { #expect(table[CacheKey(host: host, family: .v4)] == expected) }
        #expect(Set(table.values.map(\.host)) == Set(model.keys))
        table.removeAll { $0.host.hasPrefix("h1") }
        #expect(table.values.allSatisfy { !$0.host.hasPrefix("h1") })
        #expect(table.count == model.keys.filter { !$0.hasPrefix("h1") }.count)
    }

    @Test("keys differ by family and are normalised")
    func keys() {
        var table = EntryTable()
        table[CacheKey(host: "A.Test.", family: .v4)] = entry("a.test", 1)
        #expect(table[CacheKey(host: "a.test", family: .v4)] != nil)
        #expect(table[CacheKey(host: "a.test", family: .v6)] == nil)
    }
}

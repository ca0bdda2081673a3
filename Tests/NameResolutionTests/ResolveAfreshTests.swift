// `resolve` asks afresh, as dig would, and says what the cache held beside the fresh answer;
// the SDK's read (the console's) still answers from the cache.
import Foundation
import Lab
import NameResolution
import Testing

@Suite("resolve afresh beside the cache")
struct ResolveAfreshTests {
    @Test("afresh asks the service every time and shows what the cache held, and whether it differs")
    func asksEveryTime() async throws {
        try await withLab { lab in
            let cache = ResolverCache(
                configuration: LabFormat.alicloud.configuration(lab), provider: try LabFormat.alicloud.provider(lab))
            let first = await cache.resolve("sni-a.lab.test", family: .v4, afresh: true)
            #expect(first.httpdns.source == .httpdns)
            #expect(first.cached == CacheComparison(held: false))
            let asked = lab.httpdnsQueries().count

            let second = await cache.resolve("sni-a.lab.test", family: .v4, afresh: true)
            #expect(second.httpdns.source == .httpdns)
            #expect(lab.httpdnsQueries().count == asked + 1)
            #expect(second.cached?.held == true)
            #expect(second.cached?.ipv4 == first.httpdns.ipv4)
            #expect(second.cached?.differs == false)

            // The cache holds something else: the fresh answer says it differs, and replaces it.
            cache.insert(
                CacheEntrySnapshot(
                    host: "sni-a.lab.test", family: .v4, ips: ["192.0.2.99"], ttl: 600, resolvedAt: Date(),
                    source: .httpdns))
            let third = await cache.resolve("sni-a.lab.test", family: .v4, afresh: true)
            #expect(third.cached?.ipv4 == ["192.0.2.99"])
            #expect(third.cached?.differs == true)
            #expect(cache.lookup("sni-a.lab.test", family: .v4)?.ips == first.httpdns.ipv4)
        }
    }

    @Test("the SDK's read answers from the cache without asking, and says nothing of a comparison")
    func sdkReadUsesTheCache() async throws {
        try await withLab { lab in
            let cache = ResolverCache(
                configuration: LabFormat.alicloud.configuration(lab), provider: try LabFormat.alicloud.provider(lab))
            _ = await cache.resolve("sni-a.lab.test", family: .v4, afresh: true)
            let asked = lab.httpdnsQueries().count
            let read = await cache.resolve("sni-a.lab.test", family: .v4)
            #expect(read.httpdns.source == .cache)
            #expect(read.cached == nil)
            #expect(lab.httpdnsQueries().count == asked)
        }
    }
}

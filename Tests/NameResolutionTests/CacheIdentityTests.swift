// Answers kept per provider: an answer belongs to the provider identity that gave it (kind,
// endpoint or service set, account, cipher), in memory and in the persistent file.
import ConfigurationSources
import Foundation
import Lab
import NameResolution
import TestSupport
import Testing

@Suite("Resolver cache: answers kept per provider")
struct CacheIdentityTests {
    static func cache(_ format: LabFormat, _ lab: Lab, path: String) throws -> ResolverCache {
        var configuration = format.configuration(lab)
        configuration.cachePath = path
        configuration.family = .v4
        return ResolverCache(configuration: configuration, provider: try format.provider(lab))
    }

    @Test(
        "an answer from one provider is never served for another, from the file or in memory",
        arguments: [LabFormat.tencent, .alicloudAESCBC, .alicloudLegacy])
    func neverServedForAnother(other: LabFormat) async throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.path + "/cache.json"
        try await withLab { lab in
            let first = try Self.cache(.alicloud, lab, path: path)
            #expect(await first.resolve("sni-a.lab.test", family: .v4).httpdns.source == .httpdns)
            try first.save()

            // Counted before the lookup: a miss starts a background query (the SDK's
            // non-blocking read), which the resolve below may then join.
            let before = lab.httpdnsQueries().count
            let second = try Self.cache(other, lab, path: path)
            #expect(second.entries().isEmpty)
            #expect(second.lookup("sni-a.lab.test", family: .v4) == nil)
            // The miss's background query may land before this resolve (then it answers from
            // the cache, with its own provider's answer): either way never the first's file entry.
            let fresh = await second.resolve("sni-a.lab.test", family: .v4)
            #expect(fresh.httpdns.source == .httpdns || fresh.httpdns.source == .cache)
            #expect(lab.httpdnsQueries().count > before)
            try second.save()

            // Each provider finds its own answer in the file, and only its own.
            let again = try Self.cache(.alicloud, lab, path: path)
            #expect(again.entries().map(\.host) == ["sni-a.lab.test"])
            #expect(await again.resolve("sni-a.lab.test", family: .v4).httpdns.source == .persisted)
            let stored = PersistentCache.entries(at: path).entries
            #expect(Set(stored.map(\.provider)).count == 2)
        }
    }

    @Test("a cache file from before identities belongs to nobody: ignored, no warning")
    func oldFileIgnored() throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.path + "/cache.json"
        let now = Date().timeIntervalSince1970
        let json = """
            {"version":1,"savedAt":\(now),"entries":[
             {"host":"ok.test","family":"v4","ips":["192.0.2.9"],"ttl":600,"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false}]}
            """
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let configuration = ResolverConfiguration(family: .v4, cachePath: path)
        let cache = ResolverCache(configuration: configuration, provider: SystemProvider())
        #expect(cache.loadWarnings.isEmpty)
        #expect(cache.entries().isEmpty)
        #expect(PersistentCache.entries(at: path).entries.isEmpty)
    }

    @Test("the identity names kind, endpoint or service set, account and cipher, never a secret or key")
    func identity() {
        var configuration = ResolverConfiguration(
            provider: .alicloud, account: "139450", secret: "00112233445566778899aabbccddeeff")
        configuration.cipher = .aesCBC
        configuration.key = "ffeeddccbbaa99887766554433221100"
        let identity = configuration.cacheIdentity
        #expect(identity == "alicloud | service discovery (region cn) | 139450 | aes-cbc")
        #expect(!identity.contains("0011") && !identity.contains("ffee"))
    }
}

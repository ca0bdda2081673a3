// The resolver cache's promises, on a clock moved by hand: TTL expiry, expired-IP reuse with
// a background refresh, one request per name, persistence across restarts, a corrupt file.
import ConfigurationSources
import Foundation
import Lab
import NameResolution
import NameResolutionTesting
import TestSupport
import Testing

@Suite("Resolver cache")
struct CacheTests {
    static func answer(_ host: String, _ ips: [IPAddress], ttl: Int = 60) -> Result<ProviderAnswer, ResolutionError> {
        .success(ProviderAnswer(host: host, ipv4: ips, ttl: FamilyTTL(ttl, for: [.v4]), answered: [.v4]))
    }

    /// A scripted provider answers at once; the wide timeout only keeps a test thread starved by
    /// the other suites (labs making certificates) from turning that answer into a timeout. Both
    /// sides' answers wait for a cooperative thread while their deadline's timer does not: 120 s,
    /// the most a configuration takes (a whole-suite run at load 10-16 failed the fallback at 30 s).
    static func config(reuse: Bool = false, path: String? = nil) -> ResolverConfiguration {
        ResolverConfiguration(timeout: 120, family: .v4, fallbackToSystem: false, reuseExpired: reuse, cachePath: path)
    }

    @Test("short-ttl.lab.test expires once its 2 s TTL has passed (against the lab, clock moved by hand)")
    func shortTTLExpiresOnTime() async throws {
        try await withLab { lab in
            let clock = ManualClock()
            let cache = ResolverCache(
                configuration: LabFormat.alicloud.configuration(lab), provider: try LabFormat.alicloud.provider(lab),
                clock: clock)
            let first = await cache.resolve("short-ttl.lab.test", family: .v4)
            #expect(first.httpdns.ttl == FamilyTTL(v4: 2))
            #expect(first.httpdns.source == .httpdns)
            let again = await cache.resolve("short-ttl.lab.test", family: .v4)
            #expect(again.httpdns.source == .cache)
            clock.advance(1.9)
            #expect(cache.lookup("short-ttl.lab.test", family: .v4) != nil)
            clock.advance(0.2)
            #expect(cache.lookup("short-ttl.lab.test", family: .v4) == nil)
            let later = await cache.resolve("short-ttl.lab.test", family: .v4)
            #expect(later.httpdns.source == .httpdns)
        }
    }

    @Test("an entry expires exactly at its TTL (manual clock)")
    func expiryManualClock() async {
        let clock = ManualClock()
        let provider = ScriptedProvider(["short-ttl.lab.test": Self.answer("short-ttl.lab.test", ["127.0.0.1"], ttl: 2)]
        )
        let cache = ResolverCache(configuration: Self.config(), provider: provider, clock: clock)
        _ = await cache.resolve("short-ttl.lab.test", family: .v4)
        clock.advance(1.9)
        #expect(cache.lookup("short-ttl.lab.test", family: .v4)?.ips == ["127.0.0.1"])
        clock.advance(0.2)
        #expect(cache.lookup("short-ttl.lab.test", family: .v4) == nil)
    }

    @Test("with expired-IP reuse, an expired entry is served stale and refreshed in the background")
    func staleAndRefreshed() async throws {
        let clock = ManualClock()
        let provider = ScriptedProvider(["a.test": Self.answer("a.test", ["192.0.2.1"], ttl: 2)])
        let cache = ResolverCache(configuration: Self.config(reuse: true), provider: provider, clock: clock)
        _ = await cache.resolve("a.test", family: .v4)
        provider.set("a.test", Self.answer("a.test", ["192.0.2.2"], ttl: 2))
        clock.advance(5)

        let stale = try #require(cache.lookup("a.test", family: .v4))
        #expect(stale.source == .stale)
        #expect(stale.ips == ["192.0.2.1"])
        // The refresh lands without anyone waiting for it (polled for up to 10 s).
        for _ in 0..<1000 where cache.lookup("a.test", family: .v4)?.ips != ["192.0.2.2"] {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let fresh = try #require(cache.lookup("a.test", family: .v4))
        #expect(fresh.ips == ["192.0.2.2"])
        #expect(fresh.source == .httpdns)
        #expect(fresh.resolvedAt == clock.now())

        // resolve() serves stale too, without waiting for the network.
        clock.advance(5)
        let resolution = await cache.resolve("a.test", family: .v4)
        #expect(resolution.httpdns.source == .stale)
    }

    @Test("without reuse, a lookup of an expired or unknown name returns nothing and starts a resolve")
    func missStartsResolve() async throws {
        let provider = ScriptedProvider(["b.test": Self.answer("b.test", ["192.0.2.3"])])
        let cache = ResolverCache(configuration: Self.config(), provider: provider)
        #expect(cache.lookup("b.test", family: .v4) == nil)
        for _ in 0..<1000 where cache.lookup("b.test", family: .v4) == nil {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(cache.lookup("B.Test.", family: .v4)?.ips == ["192.0.2.3"])
    }

    @Test("one request in flight per name")
    func coalescing() async {
        let provider = ScriptedProvider(["c.test": Self.answer("c.test", ["192.0.2.4"])], delay: 0.3)
        let cache = ResolverCache(configuration: Self.config(), provider: provider)
        await withTaskGroup(of: HostResolution.self) { group in
            for _ in 0..<20 { group.addTask { await cache.resolve("c.test", family: .v4) } }
            for await resolution in group { #expect(resolution.httpdns.ipv4 == ["192.0.2.4"]) }
        }
        for _ in 0..<20 { _ = cache.lookup("c.test", family: .v4) }
        #expect(provider.requests == ["c.test"])
        #expect((cache.entries().first?.hits ?? 0) >= 20)
    }

    @Test("a failed refresh keeps what the cache had")
    func failureKeepsEntry() async {
        let clock = ManualClock()
        let provider = ScriptedProvider(["d.test": Self.answer("d.test", ["192.0.2.5"])])
        let cache = ResolverCache(configuration: Self.config(), provider: provider, clock: clock)
        _ = await cache.resolve("d.test", family: .v4)
        provider.set("d.test", .failure(.timeout(seconds: 2)))
        clock.advance(120)
        let resolution = await cache.resolve("d.test", family: .v4)
        #expect(resolution.httpdns.error == "timed out after 2 s")
        #expect(cache.entries().map(\.ips) == [["192.0.2.5"]])
        #expect(cache.entries().first?.refreshing == false)
    }

    @Test("persisted entries survive a restart; expired ones only with reuse")
    func persistence() async throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.path + "/ipdirect/cache.json"
        let clock = ManualClock()
        let provider = ScriptedProvider([
            "long.test": Self.answer("long.test", ["192.0.2.6"], ttl: 600),
            "short.test": Self.answer("short.test", ["192.0.2.7"], ttl: 5),
        ])
        let first = ResolverCache(configuration: Self.config(path: path), provider: provider, clock: clock)
        _ = await first.resolve("long.test", family: .v4)
        _ = await first.resolve("short.test", family: .v4)
        try first.save()
        clock.advance(60)

        let second = ResolverCache(configuration: Self.config(path: path), provider: provider, clock: clock)
        #expect(second.loadWarnings.isEmpty)
        #expect(second.entries().map(\.host) == ["long.test"])
        let entry = try #require(second.lookup("long.test", family: .v4))
        #expect(entry.ips == ["192.0.2.6"])
        #expect(entry.source == .persisted)
        let resolution = await second.resolve("long.test", family: .v4)
        #expect(resolution.httpdns.source == .persisted)
        #expect(provider.requests == ["long.test", "short.test"])

        let third = ResolverCache(configuration: Self.config(reuse: true, path: path), provider: provider, clock: clock)
        #expect(third.entries().map(\.host) == ["long.test", "short.test"])
    }

    @Test("a corrupt cache file gives a warning and an empty cache", arguments: ["{not json", "", "\u{0}\u{1}\u{2}"])
    func corruptFile(contents: String) async throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.path + "/cache.json"
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        let provider = ScriptedProvider(["e.test": Self.answer("e.test", ["192.0.2.8"])])
        let cache = ResolverCache(configuration: Self.config(path: path), provider: provider)
        #expect(cache.entries().isEmpty)
        #expect(cache.loadWarnings.first?.contains("corrupt") == true)
        // And the cache works and can write a good file over the bad one.
        _ = await cache.resolve("e.test", family: .v4)
        try cache.save()
        let next = ResolverCache(configuration: Self.config(path: path), provider: provider)
        #expect(next.loadWarnings.isEmpty)
        #expect(next.entries().map(\.ips) == [["192.0.2.8"]])
    }

    @Test("a tampered cache file cannot smuggle junk in")
    func tamperedFile() throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.path + "/cache.json"
        let now = Date().timeIntervalSince1970
        let identity = Self.config().cacheIdentity
        let json = """
            {"version":2,"savedAt":\(now),"providers":{"\(identity)":[
             {"host":"ok.test","family":"v4","ips":["192.0.2.9"],"ttl":600,"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false},
             {"host":"bad.test","family":"v4","ips":["evil.example"],"ttl":600,"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false}]}}
            """
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let cache = ResolverCache(configuration: Self.config(path: path), provider: ScriptedProvider())
        #expect(cache.entries().map(\.host) == ["ok.test"])
    }

    @Test("cache clear NAME takes that name out of the file, written in any case or with a final dot")
    func removeOneNameFromFile() throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.path + "/cache.json"
        let now = Date().timeIntervalSince1970
        let json = """
            {"version":2,"savedAt":\(now),"providers":{"\(Self.config().cacheIdentity)":[
             {"host":"a.test","family":"v4","ips":["192.0.2.1"],"ttl":600,"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false},
             {"host":"a.test","family":"v6","ips":["2001:db8::1"],"ttl":600,"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false},
             {"host":"b.test","family":"v4","ips":["192.0.2.2"],"ttl":600,"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false}]}}
            """
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try PersistentCache.remove(host: "A.Test.", at: path) == 2)
        #expect(PersistentCache.entries(at: path).entries.map(\.entry.host) == ["b.test"])
    }

    @Test("a name is one entry whatever its ASCII case or final dot, at every length and position")
    func nameCase() {
        let cache = ResolverCache(configuration: Self.config(), provider: ScriptedProvider())
        // Lengths 1 to 40 cross the 8-byte words the case check reads.
        for length in 1...40 {
            let name = String(repeating: "a", count: length)
            cache.insert(
                CacheEntrySnapshot(
                    host: name, family: .v4, ips: ["192.0.2.1"], ttl: 600, resolvedAt: Date(), source: .httpdns))
            for position in 0..<length {
                var bytes = Array(name.utf8)
                bytes[position] = UInt8(ascii: "A")
                let upper = String(decoding: bytes, as: UTF8.self)
                #expect(cache.lookup(upper, family: .v4)?.host == name, "\(upper) finds \(name)")
                #expect(cache.lookup(upper + ".", family: .v4)?.host == name, "\(upper). finds \(name)")
            }
            #expect(cache.lookup(name + ".", family: .v4)?.host == name)
            #expect(cache.lookup(name, family: .v6) == nil)
        }
        // Letters beside 'A'-'Z' ('@' and '[') and bytes of non-ASCII characters are not case.
        for name in ["@[`{.test", "b\u{DC}cher.example.test", "\u{C9}\u{C9}\u{C9}\u{C9}\u{C9}.test"] {
            cache.insert(
                CacheEntrySnapshot(
                    host: name, family: .v6, ips: ["2001:db8::1"], ttl: 600, resolvedAt: Date(), source: .httpdns))
            #expect(cache.lookup(name, family: .v6)?.host == name)
        }
        #expect(
            cache.entries().filter { $0.family == .v6 }.map(\.host).sorted()
                == ["@[`{.test", "b\u{DC}cher.example.test", "\u{C9}\u{C9}\u{C9}\u{C9}\u{C9}.test"].sorted())
    }

    @Test("names that differ in one byte, at every length and position, are separate entries")
    func nameBytes() {
        let cache = ResolverCache(configuration: Self.config(), provider: ScriptedProvider())
        // Each name has its own address, so an answer for the wrong name shows. Lengths 1 to 40
        // cross the 8-byte words (and the overlapping last word) the key reads.
        var expected: [String: String] = [:]
        for length in 1...40 {
            for position in 0..<length {
                for (letter, last) in [(UInt8(ascii: "b"), 1), (UInt8(ascii: "c"), 2)] {
                    var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = letter
                    let name = String(decoding: bytes, as: UTF8.self)
                    let ip = "10.\(length).\(position).\(last)"
                    expected[name] = ip
                    cache.insert(
                        CacheEntrySnapshot(
                            host: name, family: .v4, ips: [IPAddress(ip)].compactMap { $0 }, ttl: 600,
                            resolvedAt: Date(),
                            source: .httpdns))
                }
            }
        }
        for (name, ip) in expected {
            #expect(cache.lookup(name, family: .v4)?.ips.map(\.text) == [ip], "\(name)")
        }
        #expect(cache.entries().count == expected.count)
        // A name one byte longer or shorter than a cached one is not it.
        #expect(cache.lookup(String(repeating: "a", count: 9), family: .v4) == nil)
    }

    @Test("events tell hit, miss, refresh, expired and flush")
    func events() async throws {
        let clock = ManualClock()
        let provider = ScriptedProvider(["f.test": Self.answer("f.test", ["192.0.2.10"], ttl: 2)])
        let cache = ResolverCache(configuration: Self.config(), provider: provider, clock: clock)
        let stream = cache.events()
        _ = await cache.resolve("f.test", family: .v4)
        _ = cache.lookup("f.test", family: .v4)
        clock.advance(3)
        _ = await cache.resolve("f.test", family: .v4)
        cache.flush("f.test")
        var kinds: [ResolverEvent.Kind] = []
        for await event in stream {
            kinds.append(event.kind)
            if event.kind == .flush { break }
        }
        #expect(kinds == [.miss, .refresh, .hit, .expired, .refresh, .flush])
        #expect(cache.entries().isEmpty)
    }

    @Test("fallback to system DNS when HTTPDNS fails, shown as such; off means no addresses")
    func fallback() async {
        let provider = ScriptedProvider(["localhost": .failure(.refused(endpoint: "http://127.0.0.1:1", detail: "x"))])
        var config = Self.config()
        config.fallbackToSystem = true
        let on = await ResolverCache(configuration: config, provider: provider).resolve("localhost", family: .v4)
        #expect(on.httpdns.source == .systemFallback)
        #expect(on.httpdns.ipv4 == ["127.0.0.1"])
        #expect(on.httpdns.error?.sentence.hasPrefix("connection refused") == true)
        config.fallbackToSystem = false
        let off = await ResolverCache(configuration: config, provider: provider).resolve("localhost", family: .v4)
        #expect(off.httpdns.ipv4.isEmpty)
        #expect(off.httpdns.source == .httpdns)
    }

    @Test("pre-resolve fills the cache for a configured list")
    func prefetch() async throws {
        try await withLab { lab in
            var config = LabFormat.alicloud.configuration(lab)
            config.family = .v4
            config.prefetch = [
                "plain.lab.test", "single.lab.test", "sni-a.lab.test", "sni-b.lab.test", "dual.lab.test",
                "slow.lab.test",
            ]
            let cache = ResolverCache(configuration: config, provider: try ProviderFactory.make(config))
            await cache.prefetch()
            #expect(cache.entries().map(\.host).sorted() == config.prefetch.sorted())
            #expect(lab.httpdnsQueries().filter { $0.format == "alicloud-v2" }.count == 2)
        }
    }
}

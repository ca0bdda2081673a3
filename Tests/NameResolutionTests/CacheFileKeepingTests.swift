// The persistent cache file loses nothing it cannot read: an entry that does not parse is skipped
// and kept as it was, a file from a newer ipdirect is left alone, a version-1 file is ignored.
import ConfigurationSources
import CoreFoundation
import Foundation
import NameResolution
import TestSupport
import Testing

@Suite("Persistent cache file: nothing lost that cannot be read")
struct CacheFileKeepingTests {
    static let now = Date().timeIntervalSince1970.rounded()

    /// One stored answer as the file has it; `ttl` is written as given (so `"\"x\""` is a string).
    static func entry(_ host: String, ip: String = "192.0.2.9", ttl: String = "600") -> String {
        """
        {"host":"\(host)","family":"v4","ips":["\(ip)"],"ttl":\(ttl),"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false}
        """
    }

    /// Fifty answers from two other providers; the fourth of the first has `"ttl": "x"`.
    static func fiftyWithOneBad() -> String {
        let first = (0..<30).map { entry("a\($0).test", ttl: $0 == 3 ? "\"x\"" : "600") }
        let second = (0..<20).map { entry("b\($0).test") }
        return """
            {"version":2,"savedAt":\(now),"providers":{
             "alicloud | service discovery (region cn) | 139450 | none":[\(first.joined(separator: ",\n"))],
             "tencent | http://119.29.29.98/d | 1 | des":[\(second.joined(separator: ",\n"))]}}
            """
    }

    /// Our provider's cache over `path`, holding one answer of its own, as a resolve leaves it.
    static func cacheWithAnAnswer(_ path: String) -> ResolverCache {
        let configuration = ResolverConfiguration(
            provider: .dohJSON, endpoint: "https://dns.example/resolve", family: .v4, cachePath: path)
        let cache = ResolverCache(configuration: configuration, provider: SystemProvider())
        cache.insert(
            CacheEntrySnapshot(
                host: "ours.test", family: .v4, ips: ["198.51.100.7"], ttl: 300, resolvedAt: Date(),
                source: .httpdns))
        return cache
    }

    @Test("one entry that does not parse among fifty: the 49 others are kept through a rewrite, and so is it")
    func oneBadAmongFifty() throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.file("cache.json")
        try Self.fiftyWithOneBad().write(toFile: path, atomically: true, encoding: .utf8)

        let before = PersistentCache.entries(at: path)
        #expect(before.entries.count == 49)
        #expect(
            before.skipped == [
                PersistentCache.Skipped(
                    provider: "alicloud | service discovery (region cn) | 139450 | none", position: 4,
                    reason: "ttl is not a number")
            ])

        let cache = Self.cacheWithAnAnswer(path)
        try cache.save()

        let after = PersistentCache.entries(at: path)
        #expect(after.entries.count == 50, "\(after.warning ?? "")")
        #expect(Set(after.entries.map(\.provider)).count == 3)
        let ours = cache.configuration.cacheIdentity
        #expect(after.entries.contains { $0.entry.host == "ours.test" && $0.provider == ours })
        // The entry that could not be read is still there, as it was.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("a3.test"))
        #expect(text.contains("\"x\""))
        #expect(after.skipped.map(\.reason) == ["ttl is not a number"])

        // Clearing one name leaves the unreadable entry; clearing everything takes it too.
        #expect(try PersistentCache.remove(host: "a0.test", at: path) == 1)
        #expect(PersistentCache.entries(at: path).skipped.count == 1)
        #expect(try PersistentCache.remove(host: nil, at: path) == 50)
        let emptied = PersistentCache.entries(at: path)
        #expect(emptied.entries.isEmpty && emptied.skipped.isEmpty)
    }

    @Test("a file written by a newer ipdirect is left byte for byte, and the warning says why")
    func newerVersionUntouched() throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.file("cache.json")
        let newer = """
            {"version":3,"savedAt":\(Self.now),"answers":{"somewhere":[\(Self.entry("new.test"))]}}
            """
        try newer.write(toFile: path, atomically: true, encoding: .utf8)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let cache = Self.cacheWithAnAnswer(path)
        #expect(cache.loadWarnings.contains { $0.contains("newer ipdirect") && $0.contains("not written") })
        try cache.save()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(throws: ConfigurationError.self) { try PersistentCache.remove(host: nil, at: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(PersistentCache.entries(at: path).warning?.contains("newer ipdirect") == true)
    }

    @Test("a version-1 file is still ignored, without a warning, and replaced by this provider's answers")
    func versionOneUnchanged() throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.file("cache.json")
        try """
        {"version":1,"savedAt":\(Self.now),"entries":[\(Self.entry("old.test"))]}
        """.write(toFile: path, atomically: true, encoding: .utf8)

        let cache = Self.cacheWithAnAnswer(path)
        #expect(cache.loadWarnings.isEmpty)
        #expect(cache.entries().map(\.host) == ["ours.test"])
        try cache.save()
        #expect(PersistentCache.entries(at: path).entries.map(\.entry.host) == ["ours.test"])
    }

    @Test("a file that is not a cache file at all is set aside as .bad, not deleted, and the cache works again")
    func corruptFileSetAside() throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.file("cache.json")
        let garbage = Data("{\"version\": 2, \"providers\": {\"x\": [".utf8)
        try garbage.write(to: URL(fileURLWithPath: path))

        let cache = Self.cacheWithAnAnswer(path)
        #expect(cache.loadWarnings.contains { $0.contains("\(path).bad") }, "\(cache.loadWarnings)")
        try cache.save()
        #expect(FileManager.default.contents(atPath: path + ".bad") == garbage)
        #expect(PersistentCache.entries(at: path).entries.map(\.entry.host) == ["ours.test"])
    }

    @Test("a FIFO as the cache file is refused at once, never waited on, and never replaced")
    func fifoCacheFile() throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.file("cache.json")
        #expect(mkfifo(path, 0o600) == 0)
        let release = releaseBlockedReaders(of: path)
        defer { release.cancel() }

        let cache = Self.cacheWithAnAnswer(path)
        #expect(
            cache.loadWarnings.contains { $0.contains("\(path): it is a FIFO, not a regular file") },
            "\(cache.loadWarnings)")
        try cache.save()
        #expect(PersistentCache.entries(at: path).warning?.contains("it is a FIFO") == true)
        var info = stat()
        #expect(lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
    }

    /// A stored answer whose numbers no answer can hold, and the reason the note gives.
    struct OutOfRange: Sendable, CustomTestStringConvertible {
        var fields: String
        var reason: String
        var testDescription: String { fields }
    }

    static let outOfRange = [
        OutOfRange(
            fields: #""ttl":9223372036854775807,"resolvedAt":NOW"#,
            reason: "ttl is not between 0 and 2147483647 seconds"),
        OutOfRange(
            fields: #""ttl":60,"resolvedAt":1e19"#,
            reason: "resolvedAt is not a time between the years 1970 and 9999"),
        OutOfRange(
            fields: #""ttl":60,"resolvedAt":-1e19"#,
            reason: "resolvedAt is not a time between the years 1970 and 9999"),
        OutOfRange(
            fields: #""ttl":60,"resolvedAt":NOW,"originTTL":-9223372036854775808"#,
            reason: "originTTL is not between 0 and 2147483647 seconds"),
        OutOfRange(
            fields: #""ttl":60,"resolvedAt":NOW,"hits":-1"#, reason: "hits is below 0"),
    ]

    @Test(
        "a number no answer can hold skips that answer with a note: the listing, the load and resolve go on",
        arguments: outOfRange)
    func numberOutOfRange(_ case: OutOfRange) async throws {
        let dir = try ScratchDirectory("cache")
        defer { dir.remove() }
        let path = dir.file("cache.json")
        let configuration = ResolverConfiguration(provider: .system, family: .v4, reuseExpired: true, cachePath: path)
        let fields = `case`.fields.replacingOccurrences(of: "NOW", with: "\(Self.now)")
        let bad =
            #"{"host":"localhost","family":"v4","ips":["127.0.0.1"],"source":"httpdns","refreshing":false,"#
            + (fields.contains("\"hits\"") ? fields : fields + #","hits":0"#) + "}"
        let file = """
            {"version":2,"savedAt":\(Self.now),"providers":{"\(configuration.cacheIdentity)":[\(bad),\(Self.entry("good.test"))]}}
            """
        try file.write(toFile: path, atomically: true, encoding: .utf8)

        let listing = PersistentCache.entries(at: path)
        #expect(listing.entries.map(\.entry.host) == ["good.test"])
        #expect(listing.skipped.map(\.reason) == [`case`.reason])

        let cache = ResolverCache(configuration: configuration, provider: SystemProvider())
        #expect(cache.entries().map(\.host) == ["good.test"])
        #expect(
            cache.loadWarnings.contains {
                $0.contains("skipped 1 of this provider's answers") && $0.contains(`case`.reason)
            },
            "\(cache.loadWarnings)")
        // What `ipdirect resolve` does: ask afresh and compare with what the cache held.
        let resolved = await cache.resolve("localhost", afresh: true)
        #expect(resolved.cached?.held == false)
        // The answer that could not be read stays in the file as it was.
        try cache.save()
        #expect(PersistentCache.entries(at: path).skipped.map(\.reason) == [`case`.reason])
    }
}

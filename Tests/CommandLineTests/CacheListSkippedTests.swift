// `ipdirect cache list` over a file it cannot wholly read: the readable entries listed, a warning
// saying how many were skipped, which and why; a FIFO in the cache's place refused, never waited on.
import Foundation
import TestSupport
import Testing

@Suite("cache list says what it skipped")
struct CacheListSkippedTests {
    @Test("cache list with a FIFO as the cache file ends at once, says so, and leaves the FIFO there")
    func fifoCache() async throws {
        let home = try ScratchDirectory("special")
        defer { home.remove() }
        let fifo = home.file("cache.json")
        #expect(mkfifo(fifo, 0o600) == 0)
        let config = home.file("config.toml")
        try "cache_path = \"\(fifo)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try await runIPDirect(["cache", "list", "--config", config], home: home)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.contains("\(fifo): it is a FIFO, not a regular file"), "\(result.errors)")
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
    }

    @Test("one unreadable entry among three: two listed, the third named with its reason, the file unchanged")
    func skippedNamed() async throws {
        let home = try ScratchDirectory("cache-list")
        defer { home.remove() }
        let cache = home.file("cache.json")
        let now = Date().timeIntervalSince1970.rounded()
        func entry(_ host: String, ttl: String) -> String {
            """
            {"host":"\(host)","family":"v4","ips":["192.0.2.9"],"ttl":\(ttl),"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false}
            """
        }
        let file = """
            {"version":2,"savedAt":\(now),"providers":{"evil\\u001b[2J | x":[\(entry("a.test", ttl: "600")),\
            \(entry("b.test", ttl: "\"x\"")),\(entry("c.test", ttl: "600"))]}}
            """
        try file.write(toFile: cache, atomically: true, encoding: .utf8)
        let config = home.file("config.toml")
        try "cache_path = \"\(cache)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try await runIPDirect(["cache", "list", "--config", config], home: home)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("a.test") && result.output.contains("c.test"))
        #expect(!result.output.contains("b.test"))
        #expect(
            result.errors.contains("skipped 1 of 3 entries in \(cache) that cannot be read"), "\(result.errors)")
        #expect(result.errors.contains("entry 2 of evil\\x1b[2J | x: ttl is not a number"), "\(result.errors)")
        #expect(!result.errors.utf8.contains(0x1B))
        #expect(try String(contentsOfFile: cache, encoding: .utf8) == file)
    }

    @Test(
        "cache list over an answer with a number no answer can hold: no crash, the others listed, the note says why",
        arguments: [
            (#""ttl":9223372036854775807,"resolvedAt":NOW"#, "ttl is not between 0 and 2147483647 seconds"),
            (#""ttl":60,"resolvedAt":1e19"#, "resolvedAt is not a time between the years 1970 and 9999"),
        ])
    func hugeNumber(fields: String, reason: String) async throws {
        let home = try ScratchDirectory("cache-list")
        defer { home.remove() }
        let cache = home.file("cache.json")
        let now = Date().timeIntervalSince1970.rounded()
        let huge = fields.replacingOccurrences(of: "NOW", with: "\(now)")
        let file = """
            {"version":2,"savedAt":\(now),"providers":{"x":[\
            {"host":"huge.test","family":"v4","ips":["192.0.2.9"],\(huge),"source":"httpdns","hits":0,"refreshing":false},\
            {"host":"fine.test","family":"v4","ips":["192.0.2.9"],"ttl":600,"resolvedAt":\(now),"source":"httpdns","hits":0,"refreshing":false}]}}
            """
        try file.write(toFile: cache, atomically: true, encoding: .utf8)
        let config = home.file("config.toml")
        try "cache_path = \"\(cache)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        for format in ["table", "json"] {
            let result = try await runIPDirect(["cache", "list", "--config", config, "--format", format], home: home)
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains("fine.test") && !result.output.contains("huge.test"), "\(result.output)")
            #expect(result.errors.contains("entry 1 of x: \(reason)"), "\(result.errors)")
        }
        #expect(try String(contentsOfFile: cache, encoding: .utf8) == file)
    }
}

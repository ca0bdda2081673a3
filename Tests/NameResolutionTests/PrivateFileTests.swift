// Files written whole (the resolver cache, the console's exports) are the user's alone and
// never seen half-written: mode 0600, temporary file, fsync, rename.
import Foundation
import TestSupport
import Testing

@testable import NameResolution

@Suite("Private files")
struct PrivateFileTests {
    private func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }

    @Test("a file written whole is mode 0600, replaces a readable one, and leaves no temporary file")
    func writtenPrivately() throws {
        let dir = try ScratchDirectory("files")
        defer { dir.remove() }
        let path = dir.path + "/export.har"
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        try PrivateFile.write(Data("new contents".utf8), to: path)
        #expect(mode(path) == 0o600)
        #expect(FileManager.default.contents(atPath: path) == Data("new contents".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["export.har"])
        do {
            try PrivateFile.write(Data(), to: dir.path + "/missing/x.har")
            Issue.record("a write into a missing folder succeeded")
        } catch {
            #expect(error.description.contains("cannot write \(dir.path)/missing/x.har"), "\(error)")
        }
    }

    @Test("the persistent cache file is written 0600")
    func cacheFileMode() throws {
        let dir = try ScratchDirectory("files")
        defer { dir.remove() }
        let path = dir.path + "/ipdirect/cache.json"
        try CacheFile.save([], identity: "doh-json | https://dns.example/resolve | - | none", to: path, now: Date())
        #expect(mode(path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/ipdirect") == ["cache.json"])
    }
}

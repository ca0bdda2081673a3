// Files written whole (the resolver cache, the console's exports) are the user's alone and
// never seen half-written: mode 0600, temporary file, fsync, rename.
import CoreFoundation
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

    /// What is at `path` without following a symlink: its kind bits and permissions.
    private func kind(_ path: String) -> (type: mode_t, permissions: mode_t)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & S_IFMT, info.st_mode & 0o7777)
    }

    /// A character device like /dev/full (1, 7), made in the scratch folder.
    private func device(_ path: String) -> Bool { mknod(path, S_IFCHR | 0o666, dev_t((1 << 8) | 7)) == 0 }

    @Test(
        "a device node or a FIFO at the path is refused with a sentence and left as it was, written whole or streamed")
    func specialFilesRefused() throws {
        let dir = try ScratchDirectory("files")
        defer { dir.remove() }
        let node = dir.file("node")
        let fifo = dir.file("fifo")
        #expect(device(node), "mknod needs root")
        #expect(mkfifo(fifo, 0o644) == 0)
        for (path, sentence) in [
            (node, "it is a character device, not a regular file"), (fifo, "it is a FIFO, not a regular file"),
        ] {
            let before = kind(path)
            #expect(throws: ConfigurationError.io("cannot write \(path): \(sentence)")) {
                try PrivateFile.write(Data("x".utf8), to: path)
            }
            #expect(throws: PrivateFile.Unwritable(path: path, reason: sentence)) {
                _ = try PrivateFile.open(path, flags: O_WRONLY | O_TRUNC)
            }
            #expect(kind(path)?.type == before?.type && kind(path)?.permissions == before?.permissions)
        }
        // Through a symlink the same: the device it names is refused, the link left alone.
        let link = dir.file("link-to-node")
        #expect(symlink(node, link) == 0)
        #expect(throws: ConfigurationError.self) { try PrivateFile.write(Data("x".utf8), to: link) }
        #expect(throws: PrivateFile.Unwritable.self) { _ = try PrivateFile.open(link, flags: O_WRONLY) }
        #expect(kind(link)?.type == S_IFLNK && kind(node)?.type == S_IFCHR)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["fifo", "link-to-node", "node"])
    }

    @Test("a symlink is written through to the file it names, dangling or not, and stays a symlink")
    func symlinksWrittenThrough() throws {
        let dir = try ScratchDirectory("files")
        defer { dir.remove() }
        let real = dir.file("real.toml")
        try Data("old".utf8).write(to: URL(fileURLWithPath: real))
        let link = dir.file("link.toml")
        #expect(symlink("real.toml", link) == 0)
        try PrivateFile.write(Data("whole".utf8), to: link)
        #expect(kind(link)?.type == S_IFLNK)
        #expect(FileManager.default.contents(atPath: real) == Data("whole".utf8))

        let dangling = dir.file("dangling.jsonl")
        #expect(symlink(dir.file("made.jsonl"), dangling) == 0)
        let descriptor = try PrivateFile.open(dangling, flags: O_WRONLY | O_TRUNC)
        #expect(Foundation.write(descriptor, "line\n", 5) == 5)
        close(descriptor)
        #expect(kind(dangling)?.type == S_IFLNK)
        #expect(FileManager.default.contents(atPath: dir.file("made.jsonl")) == Data("line\n".utf8))

        let danglingWhole = dir.file("dangling.json")
        #expect(symlink("made.json", danglingWhole) == 0)
        try PrivateFile.write(Data("{}".utf8), to: danglingWhole)
        #expect(kind(danglingWhole)?.type == S_IFLNK)
        #expect(FileManager.default.contents(atPath: dir.file("made.json")) == Data("{}".utf8))
    }
}

// Files a user names (probe's target lists) are read whole whatever kind they are, a pipe included;
// where a regular file is expected a FIFO, device or directory is refused before a byte is read.
import Foundation
import TestSupport
import Testing

@testable import NameResolution

@Suite("Text files a user names")
struct TextFileTests {
    @Test("a pipe is read to its end, past any one read's size")
    func pipe() async throws {
        let scratch = try ScratchDirectory("textfile")
        defer { scratch.remove() }
        let fifo = scratch.file("list")
        #expect(mkfifo(fifo, 0o600) == 0)
        let text = (1...20_000).map { "https://host-\($0).example.test/\n" }.joined()
        // The writer blocks until the reader opens the pipe, as a shell's <(...) would.
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data(text.utf8))
            try? handle?.close()
        }
        writer.start()
        #expect(try TextFile.contents(of: fifo) == text)
    }

    @Test("a /proc file longer than a page is read whole")
    func procFile() throws {
        // Every mapping of this process: well over a page in a Swift test process.
        let read = try TextFile.contents(of: "/proc/self/maps")
        #expect(read.utf8.count > 4096)
        #expect(read.hasSuffix("\n"))
    }

    @Test(
        "a file that cannot be read says why",
        arguments: [
            ("missing", "it does not exist"),
            ("directory", "it is a directory"),
            ("latin1", "it is not UTF-8 text"),
        ])
    func unreadable(kind: String, reason: String) throws {
        let scratch = try ScratchDirectory("textfile")
        defer { scratch.remove() }
        let path = scratch.file(kind)
        switch kind {
        case "directory": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        case "latin1": try Data([0x63, 0x61, 0x66, 0xE9, 0x0A]).write(to: URL(fileURLWithPath: path))
        default: break
        }
        #expect(throws: TextFileError(path: path, reason: reason)) { try TextFile.contents(of: path) }
    }

    @Test(
        "where a regular file is expected, a FIFO, a device or a directory is refused with what it is",
        arguments: [
            ("fifo", "it is a FIFO, not a regular file"),
            ("/dev/zero", "it is a character device, not a regular file"),
            ("directory", "it is a directory"),
        ])
    func regularFileExpected(kind: String, reason: String) throws {
        let scratch = try ScratchDirectory("textfile")
        defer { scratch.remove() }
        var path = kind.hasPrefix("/") ? kind : scratch.file(kind)
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "directory": path = scratch.path
        default: break
        }
        let release = releaseBlockedReaders(of: path)
        defer { release.cancel() }
        #expect(throws: TextFileError(path: path, reason: reason)) {
            try TextFile.contents(of: path, accepting: .regularFile)
        }
        #expect(throws: TextFileError(path: path, reason: reason)) { try TextFile.requireRegularFile(path) }
    }

    @Test("a regular file reads the same either way, through a symbolic link too")
    func regularFileRead() throws {
        let scratch = try ScratchDirectory("textfile")
        defer { scratch.remove() }
        let path = scratch.file("config.toml")
        try "timeout = 3\n".write(toFile: path, atomically: true, encoding: .utf8)
        let link = scratch.file("link.toml")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(try TextFile.contents(of: link, accepting: .regularFile) == "timeout = 3\n")
        #expect(try TextFile.bytes(of: path, accepting: .regularFile) == Array("timeout = 3\n".utf8))
    }
}

/// Opens `fifo` for writing and closes it whenever a reader waits on it, for at most about ten
/// seconds: a reader that blocks on the FIFO then reads an empty file and the test fails on what
/// it read, instead of hanging the suite.
func releaseBlockedReaders(of fifo: String) -> Thread {
    let thread = Thread {
        for _ in 0..<1000 where !Thread.current.isCancelled {
            let descriptor = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if descriptor >= 0 { close(descriptor) }
            usleep(10_000)
        }
    }
    thread.start()
    return thread
}

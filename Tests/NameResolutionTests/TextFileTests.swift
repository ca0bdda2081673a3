// Files a user names (configuration, target lists) are read whole whatever kind they are, a
// pipe included, and one that cannot be read is refused with the reason.
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
}

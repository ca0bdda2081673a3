// Compares a rendered frame with the text stored under __Snapshots__. Set
// IPDIRECT_RECORD_SNAPSHOTS=1 to write the files anew, then review the diff before committing.
import Console
import Foundation
import Testing

enum Snapshot {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "__Snapshots__")

    static var recording: Bool { ProcessInfo.processInfo.environment["IPDIRECT_RECORD_SNAPSHOTS"] == "1" }

    /// Checks `buffer` against the snapshot `name`, or records it when recording.
    static func check(_ buffer: CellBuffer, named name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        checkText(buffer.text + "\n", named: name, sourceLocation: sourceLocation)
    }

    /// Checks `actual` against the snapshot `name`, or records it when recording.
    static func checkText(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let file = directory.appendingPathComponent(name + ".txt")
        if recording {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try? actual.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
            Issue.record(
                "no snapshot \(name).txt; run with IPDIRECT_RECORD_SNAPSHOTS=1 to record it:\n\(actual)",
                sourceLocation: sourceLocation)
            return
        }
        if expected != actual {
            let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
            let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
            var diff: [String] = []
            for index in 0..<max(expectedLines.count, actualLines.count) {
                let e = index < expectedLines.count ? String(expectedLines[index]) : "<none>"
                let a = index < actualLines.count ? String(actualLines[index]) : "<none>"
                if e != a { diff.append("line \(index + 1):\n  expected: \(e)\n  actual:   \(a)") }
            }
            Issue.record(
                Comment(
                    rawValue:
                        "snapshot \(name) differs (IPDIRECT_RECORD_SNAPSHOTS=1 re-records):\n\(diff.joined(separator: "\n"))"
                ),
                sourceLocation: sourceLocation)
        }
    }
}

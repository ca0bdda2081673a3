// Replays the whole fuzz corpus (seeds and every input that ever crashed) through the same
// entry points `make fuzz` fuzzes, without a fuzzer build: a finding stays fixed.
import Foundation
import FuzzTargets
import Testing

@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    /// Tests/Fuzz/Corpus, beside this file's folder.
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus")

    @Test("every corpus input runs through its parser without a trap", arguments: FuzzTarget.allCases)
    func replay(target: FuzzTarget) throws {
        let folder = Self.corpus.appendingPathComponent(target.rawValue)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }
        #expect(!files.isEmpty, "the corpus of \(target.rawValue) has no seed")
        for file in files.sorted() {
            let data = try #require(FileManager.default.contents(atPath: folder.appendingPathComponent(file).path))
            target.run(Array(data))
        }
    }
}

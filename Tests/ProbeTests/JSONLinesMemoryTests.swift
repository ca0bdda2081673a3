// A JSON Lines record leaves nothing behind once written: the agent writes one per probed URL,
// for as long as it runs, so whatever a record kept would grow its memory without end.
import Foundation
import Testing

@testable import Probe

@Suite("JSON Lines memory")
struct JSONLinesMemoryTests {
    /// Hands the encoder it is given to `seen`, weakly: alive afterwards means something kept it
    /// (and, with it, the buffer the record was written into).
    private struct Watched: Encodable {
        let seen: EncoderSeen
        let text: String

        func encode(to encoder: any Encoder) throws {
            seen.encoders.append(Weak(encoder as AnyObject))
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(text, forKey: .text)
        }

        enum Key: String, CodingKey { case text }
    }

    private struct Weak {
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    private final class EncoderSeen: @unchecked Sendable {
        var encoders: [Weak] = []
        /// Distinct encoders still alive (a reused one is seen once per record).
        var alive: Int { Set(encoders.compactMap { $0.object.map(ObjectIdentifier.init) }).count }
    }

    @Test("a record's encoder and buffer are freed once its line is written (agent --jsonl, watch)")
    func oneShotLinesKeepNothing() throws {
        let seen = EncoderSeen()
        for index in 0..<100 {
            let line = try #require(ProbeJSON.line(Watched(seen: seen, text: "record \(index)")))
            #expect(String(decoding: line, as: UTF8.self) == "{\"text\":\"record \(index)\"}\n")
        }
        #expect(seen.encoders.count == 100)
        #expect(seen.alive == 0)
    }

    @Test("a batch writer's reused buffer is freed with the writer")
    func lineWriterKeepsNothingAfterIt() {
        let seen = EncoderSeen()
        do {
            let writer = CompactJSONEncoder.LineWriter()
            for index in 0..<10 {
                let text = writer.withLine(Watched(seen: seen, text: "\(index)")) {
                    String(decoding: $0, as: UTF8.self)
                }
                #expect(text == "{\"text\":\"\(index)\"}\n")
            }
            // While the writer lives its one frame is kept for the next record, on purpose.
            #expect(seen.alive == 1)
        }
        #expect(seen.alive == 0)
    }
}

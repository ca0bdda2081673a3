// The console grid against text from a hostile server: escape sequences, C1 controls, bidi
// overrides, zero-width and wide characters reach the cells as visible escapes, never shift.
import Console
import Foundation
import Lab
import NameResolution
import Probe
import Testing

@Suite("Console: hostile text")
struct HostileTextTests {
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 && scalar != CellBuffer.continuation || (0x7F...0x9F).contains(scalar.value)
            || scalar.properties.generalCategory == .format
    }

    @Test("put: controls and bidi as escapes, a wide character takes two cells")
    func put() {
        var buffer = CellBuffer(width: 20, height: 2)
        let end = buffer.put("a\u{1b}[2J\u{9b}\u{202e}", x: 0, y: 0)
        #expect(buffer.line(0) == "a\\x1b[2J\\u009b\\u202e")
        #expect(end == 20)
        #expect(buffer.put("中文x", x: 0, y: 1) == 5)
        #expect(buffer[1, 1].character == CellBuffer.continuation)
        #expect(buffer[4, 1].character == "x")
        #expect(buffer.text.split(separator: "\n").last == "中文x")
        // Writing over half of a wide character blanks the other half.
        buffer.put("y", x: 1, y: 1)
        #expect(buffer[0, 1].character == " ")
        #expect(buffer.cells.allSatisfy { !Self.isControl($0.character) })
    }

    @Test("trace detail of a real hostile response: no control reaches a cell")
    func traceDetailOfHostileResponse() async throws {
        try await withLab { lab in
            let zone = lab.endpoints.zone
            var options = ProbeOptions(scenarios: [.directSNI])
            options.caFile = lab.endpoints.ca
            let engine = ProbeEngine(
                resolve: { host in
                    let record = zone.first { $0.name == host }
                    return HostResolution(
                        host: host, system: SystemAnswer(error: "no such name"),
                        httpdns: HTTPDNSAnswer(
                            provider: "lab-zone", ipv4: (record?.ipv4 ?? []).compactMap(IPAddress.init),
                            ttl: FamilyTTL(v4: 60)))
                }, options: options, environment: [:])
            let url = (lab.endpoints.hosts["hostile.lab.test"] ?? "") + "escapes"
            let report = try #require(await engine.probeAll([url]).first)
            var state = ConsoleFixtures.emptyState(size: TerminalSize(width: 120, height: 60))
            ConsoleFixtures.send(&state, keys: "hostile.lab.test")
            _ = reduce(into: &state, action: .key(.enter))
            _ = reduce(into: &state, action: .probeEvent(runID: 1, .resolved(report.resolution)))
            for attempt in report.attempts {
                _ = reduce(into: &state, action: .probeEvent(runID: 1, .attemptFinished(attempt)))
            }
            _ = reduce(into: &state, action: .probeEvent(runID: 1, .finished(report)))
            _ = reduce(into: &state, action: .probeEnded(runID: 1))
            _ = reduce(into: &state, action: .key(.character("3")))
            _ = reduce(into: &state, action: .key(.enter))
            let frame = render(state)
            #expect(frame.text.contains("X-Hostile"), "\(frame.text)")
            #expect(frame.text.contains("\\x1b[31mred\\u009b1m\\u202etxt\\u200b"), "\(frame.text)")
            #expect(frame.cells.allSatisfy { !Self.isControl($0.character) })
        }
    }
}

// The lab names the console suggests before the first probe come from the lab's zone
// (lab-zone.json through `Lab.examples()`), as the lab gives them: one place writes them.
import Console
import Foundation
import Lab
import Testing

@Suite struct LabExamplesTests {
    @Test("the first screen suggests the lab zone's names, each with what it shows, in the zone's order")
    func firstScreenSuggestsZone() throws {
        let examples = try Lab.examples()
        #expect(examples.map(\.typed).prefix(2) == ["sni-a.lab.test", "single.lab.test"])
        let engine = EngineDescription(
            provider: "alicloud", endpoint: "http://127.0.0.1:18080/lab", lab: true, labExamples: examples)
        let state = ConsoleState(
            size: TerminalSize(width: 120, height: 40), now: ConsoleFixtures.now, engine: engine, timeZone: .gmt)
        let lines = render(state).text.split(separator: "\n")
        var next = lines.startIndex
        for example in examples {
            let row = lines[next...].firstIndex { $0.contains(example.typed) && $0.contains(example.shows) }
            #expect(row != nil, "\(example.typed) is not suggested below the one before it")
            next = (row ?? next) + 1
        }
    }
}

// The compare view's render with 8 providers (a mix of agreeing, disagreeing and failing rows),
// dark and light, at 80x24 and 120x40: aim under 5 ms a frame.
import Console
import Foundation
import NameResolution

enum CompareBenchmark {
    static func run() async throws {
        for theme in ConsoleTheme.allCases {
            for size in ConsoleBenchmark.sizes {
                var state = self.state(size: size)
                state.theme = theme
                var tick = 0
                let ours = ConsoleBenchmark.timeFrames {
                    // A new clock each frame, as the live console's tick gives, so nothing is reused.
                    tick += 1
                    state.now = ConsoleBenchmark.start.addingTimeInterval(Double(tick))
                    return render(state)
                }
                ConsoleBenchmark.report("compare view, 8 providers, \(theme.rawValue)", size, ours: ours)
            }
        }
    }

    /// The compare view open on a host, with 8 providers' answers in.
    static func state(size: TerminalSize) -> ConsoleState {
        var state = ConsoleState(
            size: size, now: ConsoleBenchmark.start, engine: ConsoleBenchmark.engine,
            timeZone: .gmt)
        for character in "www.bench.test" { _ = reduce(into: &state, action: .key(.character(character))) }
        _ = reduce(into: &state, action: .key(.enter))
        _ = reduce(into: &state, action: .key(.character("v")))
        let kinds: [ProviderKind] = [.alicloud, .alicloudLegacy, .tencent, .doh, .dohJSON]
        var rows: [ProviderRow] = []
        for index in 0..<8 {
            let agrees = index % 3 != 2
            let ipv4: [IPAddress] =
                agrees
                ? ["203.0.113.7", "203.0.113.8"] : [IPAddress("198.51.100.\(index)"), "198.51.100.9"].compactMap { $0 }
            var row = ProviderRow(
                name: "provider-\(index)", kind: kinds[index % kinds.count], endpoint: "https://192.0.2.\(index)")
            row.ipv4 = ipv4
            row.ipv6 = index % 2 == 0 ? ["2001:db8::7"] : []
            row.ttl = FamilyTTL(v4: 60 + index)
            row.ms = 10 + Double(index) * 3.3
            row.clientIP = index % 2 == 0 ? IPAddress("100.64.0.\(index)") : nil
            if index == 7 { row.error = "HTTPDNS timed out after 2 s (https://192.0.2.7): check the endpoint" }
            rows.append(row)
        }
        let comparison = ProviderComparison(
            host: "www.bench.test",
            system: SystemAnswer(ipv4: ["203.0.113.7", "203.0.113.8"], ms: 4.2),
            providers: rows)
        _ = reduce(into: &state, action: .providersCompared(comparison))
        precondition(state.view == .compare && state.compare.result != nil, "the compare view did not open")
        return state
    }
}

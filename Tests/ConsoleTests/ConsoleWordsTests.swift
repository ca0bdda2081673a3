// The console's words where a new user read them wrong (issue 37): a detail that names the source
// its address came from, a failed handshake that is no transfer, a status line that belongs to
// its view, keys read from the key map, a filter said in words, the default provider, whole lines.
import ConfigurationSources
import Console
import Foundation
import NameResolution
import Probe
import Testing

@Suite("Console words a new user reads")
struct ConsoleWordsTests {
    /// The screen's text as one line: its rows trimmed and joined, so a wrapped sentence reads whole.
    func joined(_ text: String) -> String {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    /// The populated state with one more probe run whose only attempt is `attempt`, its detail open.
    func detail(of attempt: Attempt, width: Int = 120) -> String {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: width, height: 40))
        ConsoleFixtures.send(&state, keys: "psni-a.lab.test")
        _ = reduce(into: &state, action: .key(.enter))
        _ = reduce(into: &state, action: .probeEvent(runID: 2, .resolved(ConsoleFixtures.resolution)))
        _ = reduce(into: &state, action: .probeEvent(runID: 2, .attemptFinished(attempt)))
        _ = reduce(into: &state, action: .key(.character("3")))
        _ = reduce(into: &state, action: .key(.enter))
        return render(state).text
    }

    @Test("a trace whose address came from the system resolver does not say it came from HTTPDNS")
    func systemAddressOrigin() {
        var attempt = ConsoleFixtures.attempt(.directSNI, outcome: .connectFailed, total: 20, sni: "sni-a.lab.test")
        attempt.ip = "127.0.0.2"
        attempt.ipSource = .system
        let text = detail(of: attempt)
        #expect(text.contains("127.0.0.2 (system)"))
        #expect(text.contains("address from the system resolver"))
        #expect(!text.contains("addresses from HTTPDNS"))

        let fromHTTPDNS = detail(
            of: ConsoleFixtures.attempt(.directSNI, outcome: .ok, status: 200, total: 5.6, sni: "sni-a.lab.test"))
        #expect(fromHTTPDNS.contains("addresses from HTTPDNS alicloud"))
    }

    @Test("a handshake that failed shows as the handshake, not as a transfer that moved nothing")
    func failedHandshakeIsNoTransfer() {
        var attempt = ConsoleFixtures.attempt(.directSNI, outcome: .tlsFailed, total: 23.5, sni: "sni-a.lab.test")
        attempt.timings = PhaseTimings(nameLookup: 0.02, connect: 0.9, tlsDone: nil, firstByte: nil, total: 23.5)
        attempt.hops[0].timings = attempt.timings
        let phases = detail(of: attempt).split(separator: "\n").filter { $0.contains(" to ") && $0.contains(".") }
        #expect(phases.contains { $0.contains("handshake") && $0.contains("0.9 to") && $0.contains("23.5") })
        #expect(!phases.contains { $0.contains("transfer") })
    }

    @Test("a status message stays in the view it was made in: Copied to the clipboard is gone in the next view")
    func messageBelongsToItsView() {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 120, height: 40))
        _ = reduce(into: &state, action: .key(.character("c")))
        _ = reduce(into: &state, action: .clipboardCopied(true))
        _ = reduce(into: &state, action: .key(.escape))
        #expect(render(state).text.contains("Copied to the clipboard"))
        _ = reduce(into: &state, action: .key(.character("2")))
        #expect(!render(state).text.contains("Copied to the clipboard"))
        #expect(state.message.isEmpty)
    }

    @Test("the empty cache view names the key that types a host, as the key map has it")
    func emptyCacheNamesTheKey() throws {
        var state = ConsoleFixtures.emptyState(size: TerminalSize(width: 120, height: 40))
        _ = reduce(into: &state, action: .key(.character("2")))
        #expect(render(state).text.contains("Probe a host (p, then type it)"))
        state.keyMap = try KeyMap.remapped([KeyRemap(action: "type-host", keys: ["Ctrl-T"])])
        #expect(render(state).text.contains("Probe a host (Ctrl-T, then type it)"))
    }

    @Test("a filtered traces list says how many requests it shows and which filter")
    func filteredTracesInWords() {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 120, height: 40))
        _ = reduce(into: &state, action: .key(.character("3")))
        ConsoleFixtures.send(&state, keys: "/direct-sni")
        _ = reduce(into: &state, action: .key(.enter))
        let text = render(state).text
        #expect(text.contains("1 of 3 requests shown (filter: direct-sni)"))
        #expect(!text.contains("requests kept"))
    }

    @Test("off the lab with the default provider, the probe view says which provider runs and how to change it")
    func defaultProviderSaid() {
        let provider = ResolverConfiguration.defaults.provider.rawValue
        func firstScreen(_ engine: EngineDescription, width: Int) -> String {
            joined(
                render(
                    ConsoleState(size: TerminalSize(width: width, height: 24), now: ConsoleFixtures.now, engine: engine)
                )
                .text)
        }
        for width in [60, 80, 120] {
            let text = firstScreen(
                EngineDescription(provider: provider, endpoint: "https://dns.example/", lab: false), width: width)
            #expect(text.contains("Provider: \(provider), the default"))
            #expect(text.contains("not an HTTPDNS account"))
            #expect(text.contains("configuration file"))
        }
        let chosen = firstScreen(
            EngineDescription(provider: "alicloud", endpoint: "https://h.example/", lab: false), width: 120)
        #expect(!chosen.contains("the default"))
    }

    @Test("a long failure sentence in the probe view is wrapped whole, never cut mid-word")
    func longLinesWrapped() {
        let host = "api.internal.example.com"
        let resolution = HostResolution(
            host: host, system: SystemAnswer(ms: 5003, error: .systemDNS(.temporary(host: host))),
            httpdns: HTTPDNSAnswer(provider: "doh-json", ipv4: ["192.0.2.7"], ttl: FamilyTTL(v4: 60), ms: 40))
        for width in [60, 80] {
            var state = ConsoleFixtures.emptyState(size: TerminalSize(width: width, height: 24))
            ConsoleFixtures.send(&state, keys: "p" + host)
            _ = reduce(into: &state, action: .key(.enter))
            _ = reduce(into: &state, action: .probeEvent(runID: 1, .resolved(resolution)))
            let text = render(state).text
            #expect(joined(text).contains("(no DNS server answered)"), "at \(width) columns:\n\(text)")
        }
    }
}

// The IP view (`i`) and the watch view (`w`) through the reducer and the pure render: what each
// key asks of the engine, what arrives back, and the frames at 80x24 and 120x40.
import Console
import Foundation
import NameResolution
import Probe
import Testing

@Suite("IP view and watch view")
struct IPWatchViewTests {
    static let sizes = [TerminalSize(width: 80, height: 24), TerminalSize(width: 120, height: 40)]

    static let dualResolution = HostResolution(
        host: "dual.lab.test", system: SystemAnswer(ipv4: ["127.0.0.1"], ipv6: ["::1"], ms: 0.3),
        httpdns: HTTPDNSAnswer(provider: "alicloud", ipv4: ["127.0.0.2", "127.0.0.1"], ttl: FamilyTTL(v4: 60), ms: 2.1))

    /// The lab's dual-stack name as measured: the dead HTTPDNS address last, ::1 from system DNS only.
    static let dualRanking = IPRanking(
        host: "dual.lab.test", port: 18443,
        ips: [
            RankedIP(
                ip: "127.0.0.1", sources: [.httpdns, .system], connectMs: 0.21, sdkRank: 1,
                usedBy: [.systemDNS, .directHTTPS, .directSNI]),
            RankedIP(ip: "::1", sources: [.system], connectMs: 0.35),
            RankedIP(
                ip: "127.0.0.2", sources: [.httpdns],
                error: "connection refused by 127.0.0.2:18443: nothing listens on that port there", sdkRank: 2),
        ], sdkOrder: ["127.0.0.1", "127.0.0.2"])

    /// The fixture's console after probing dual.lab.test too (run 2, selected).
    static func dualState(size: TerminalSize, glyphs: Glyphs = .unicode) -> ConsoleState {
        var state = ConsoleFixtures.populatedState(size: size, glyphs: glyphs)
        ConsoleFixtures.send(&state, keys: "p")
        ConsoleFixtures.send(&state, keys: "dual.lab.test")
        _ = reduce(into: &state, action: .key(.enter))
        var attempts = ConsoleFixtures.attempts
        for index in attempts.indices { attempts[index].url = "https://dual.lab.test:18443/" }
        attempts[0].ip = "127.0.0.1"
        var report = ConsoleFixtures.report
        report.url = "https://dual.lab.test:18443/"
        report.host = "dual.lab.test"
        report.resolution = dualResolution
        report.attempts = attempts
        _ = reduce(into: &state, action: .probeEvent(runID: 2, .resolved(dualResolution)))
        _ = reduce(into: &state, action: .probeEvent(runID: 2, .finished(report)))
        _ = reduce(into: &state, action: .probeEnded(runID: 2))
        return state
    }

    @Test("i asks the engine to time the addresses; the ranking shows every address and each one's use")
    func ipView() throws {
        var state = Self.dualState(size: TerminalSize(width: 120, height: 40))
        let effects = reduce(into: &state, action: .key(.character("i")))
        guard case .rankIPs(let request, let resolution, let port, let attempts)? = effects.first else {
            Issue.record("i should ask for a ranking, got \(effects)")
            return
        }
        #expect(resolution == Self.dualResolution && port == 18443 && attempts.count == 3)
        // Before the times arrive the addresses are listed, waiting.
        #expect(render(state).text.contains("127.0.0.2"))
        #expect(state.ipView?.measuring == true)
        // An answer to an older request is dropped.
        _ = reduce(into: &state, action: .ipsRanked(request: request - 1, Self.dualRanking))
        #expect(state.ipView?.ranking == nil)
        _ = reduce(into: &state, action: .ipsRanked(request: request, Self.dualRanking))
        let text = render(state).text
        #expect(text.contains("SDK order after ranking: 127.0.0.1, 127.0.0.2"))
        #expect(text.contains("connection refused by 127.0.0.2"))
        #expect(state.ipView?.selected == 0)

        // Enter probes the recommended technique against the selected address; t switches it.
        _ = reduce(into: &state, action: .key(.down))
        #expect(
            reduce(into: &state, action: .key(.enter)) == [
                .probeIP(runID: 3, target: "dual.lab.test", scenario: .directSNI, ip: "::1")
            ])
        _ = reduce(into: &state, action: .key(.character("t")))
        #expect(
            reduce(into: &state, action: .key(.enter)) == [
                .probeIP(runID: 4, target: "dual.lab.test", scenario: .directHTTPS, ip: "::1")
            ])
        // r measures again; the selected address stays selected when the order changes.
        guard case .rankIPs(let again, _, _, _)? = reduce(into: &state, action: .key(.character("r"))).first else {
            Issue.record("r should ask for a ranking")
            return
        }
        var reordered = Self.dualRanking
        reordered.ips.swapAt(0, 1)
        _ = reduce(into: &state, action: .ipsRanked(request: again, reordered))
        #expect(state.ipView?.rows[state.ipView?.selected ?? -1].ip == "::1")
        // Esc closes the view; the probe view is back.
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.ipView == nil)
        #expect(render(state).text.contains("Verdict:"))
    }

    @Test("IP view at 80x24 and 120x40", arguments: sizes)
    func ipViewSnapshot(size: TerminalSize) {
        var state = Self.dualState(size: size)
        _ = reduce(into: &state, action: .key(.character("i")))
        _ = reduce(into: &state, action: .ipsRanked(request: 1, Self.dualRanking))
        _ = reduce(into: &state, action: .key(.enter))
        var attempt = ConsoleFixtures.attempts[2]
        attempt.url = "https://dual.lab.test:18443/"
        _ = reduce(into: &state, action: .probeEvent(runID: 3, .attemptFinished(attempt)))
        Snapshot.check(render(state), named: "ip-view-\(size.width)x\(size.height)")
    }

    /// A round's report: every scenario as in the fixture, direct-sni failing when `broken`.
    static func roundReport(_ index: Int, broken: Bool) -> URLReport {
        var report = ConsoleFixtures.report
        for position in report.attempts.indices {
            report.attempts[position].timings.total = 3 + Double((index * 7 + position * 3) % 11)
            report.attempts[position].hops[0].timings.total = report.attempts[position].timings.total
        }
        if broken {
            report.attempts[2].outcome = .connectFailed
            report.attempts[2].status = nil
            report.verdict.recommended = nil
            report.verdict.works = []
        }
        return report
    }

    /// Starts a watch of the fixture's host and runs `rounds` rounds, direct-sni failing in `broken`.
    static func watchedState(
        size: TerminalSize, rounds: Int, broken: Range<Int> = 11..<15, glyphs: Glyphs = .unicode
    ) -> ConsoleState {
        var state = ConsoleFixtures.populatedState(size: size, glyphs: glyphs)
        var effects = reduce(into: &state, action: .key(.character("w")))
        var now = ConsoleFixtures.now
        for index in 1...rounds {
            guard case .probe(let runID, _)? = effects.first else { break }
            _ = reduce(
                into: &state, action: .probeEvent(runID: runID, .finished(roundReport(index, broken: broken ~= index))))
            _ = reduce(into: &state, action: .probeEnded(runID: runID))
            now = now.addingTimeInterval(5)
            effects = reduce(into: &state, action: .tick(now))
        }
        return state
    }

    @Test("w probes at once, then every 5 s; + and - change that; a change of verdict is listed")
    func watchRounds() throws {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 80, height: 24))
        let first = reduce(into: &state, action: .key(.character("w")))
        #expect(first == [.probe(runID: 2, target: "sni-a.lab.test")])
        // Nothing starts while a round is under way, nor before its time.
        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(6))).isEmpty)
        _ = reduce(into: &state, action: .probeEvent(runID: 2, .finished(Self.roundReport(1, broken: false))))
        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(4))).isEmpty)
        #expect(
            reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(5)))
                == [.probe(runID: 3, target: "sni-a.lab.test")])
        _ = reduce(into: &state, action: .probeEvent(runID: 3, .finished(Self.roundReport(2, broken: true))))
        #expect(state.watch?.history.changed.map(\.round) == [2])
        #expect(state.message.contains("direct-sni: ok \u{2192} connect-failed"))
        #expect(render(state).text.contains("#2     08:00:05  direct-sni: ok \u{2192} connect-failed"))

        // + waits a second more between rounds.
        _ = reduce(into: &state, action: .key(.character("+")))
        #expect(state.watch?.interval == 6)
        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(10))).isEmpty)
        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(11))).count == 1)
        _ = reduce(into: &state, action: .key(.character("-")))
        _ = reduce(into: &state, action: .key(.character("-")))
        #expect(state.watch?.interval == 4)

        // A round whose probe ends without a report does not stop the watch.
        _ = reduce(into: &state, action: .probeEnded(runID: 4))
        #expect(state.watch?.pendingRunID == nil)
        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(30))).count == 1)

        // e exports the rounds as JSON Lines; Esc stops the watch.
        let exported = reduce(into: &state, action: .key(.character("e")))
        guard case .exportWatch(let rounds, let path)? = exported.first else {
            Issue.record("e should export the rounds, got \(exported)")
            return
        }
        #expect(rounds.map(\.round) == [1, 2] && path.hasSuffix(".jsonl"))
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.watch == nil)
        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(60))).isEmpty)
    }

    @Test("w hides the watch view and the rounds go on; w shows it again")
    func watchHidden() throws {
        var state = Self.watchedState(size: TerminalSize(width: 80, height: 24), rounds: 3)
        _ = reduce(into: &state, action: .key(.character("w")))
        #expect(state.watch?.shown == false)
        #expect(render(state).text.contains("Verdict:"))
        // Hidden, the watch still says it goes on, beside the lab's fault in the tab bar.
        let wide = render(state, size: TerminalSize(width: 120, height: 40)).text
        let tabBar = try #require(wide.split(separator: "\n").first)
        #expect(tabBar.contains("watching sni-a.lab.test every 5s (w)") && tabBar.contains("lab fault: slow"))
        _ = reduce(into: &state, action: .key(.character("3")))
        let pending = try #require(state.watch?.pendingRunID)
        _ = reduce(into: &state, action: .probeEvent(runID: pending, .finished(Self.roundReport(4, broken: false))))
        #expect(state.watch?.history.total == 4)
        let effects = reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(100)))
        #expect(effects.contains { if case .probe = $0 { true } else { false } })
        _ = reduce(into: &state, action: .key(.character("1")))
        _ = reduce(into: &state, action: .key(.character("w")))
        #expect(render(state).text.contains("Watching sni-a.lab.test"))
    }

    @Test("watch view at 80x24 and 120x40: strips, sparklines, the changes", arguments: sizes)
    func watchSnapshot(size: TerminalSize) {
        let state = Self.watchedState(size: size, rounds: 30)
        Snapshot.check(render(state), named: "watch-\(size.width)x\(size.height)")
    }

    @Test("without a UTF-8 locale the watch view draws in ASCII, and its marks differ by shape")
    func watchASCII() {
        let state = Self.watchedState(size: TerminalSize(width: 80, height: 24), rounds: 30, glyphs: .ascii)
        let buffer = render(state)
        Snapshot.check(buffer, named: "watch-ascii-80x24")
        #expect(buffer.cells.allSatisfy { $0.character.isASCII })
        let strip = buffer.text.split(separator: "\n").first { $0.hasPrefix(" direct-sni") }
        #expect(strip?.contains("#") == true && strip?.contains("x") == true)
    }

    /// The IP view with a ranking and one probe from it, as in its snapshot.
    static func rankedState(size: TerminalSize, theme: ConsoleTheme) -> ConsoleState {
        var state = Self.dualState(size: size)
        state.theme = theme
        _ = reduce(into: &state, action: .key(.character("i")))
        _ = reduce(into: &state, action: .ipsRanked(request: 1, Self.dualRanking))
        _ = reduce(into: &state, action: .key(.enter))
        var attempt = ConsoleFixtures.attempts[2]
        attempt.url = "https://dual.lab.test:18443/"
        _ = reduce(into: &state, action: .probeEvent(runID: 3, .attemptFinished(attempt)))
        return state
    }

    @Test("light and dark: the same words, each theme's colours", arguments: sizes)
    func themes(size: TerminalSize) {
        let suffix = "\(size.width)x\(size.height)"
        for (name, make) in [
            ("ip-view", { (theme: ConsoleTheme) in Self.rankedState(size: size, theme: theme) }),
            (
                "watch",
                { (theme: ConsoleTheme) in
                    var state = Self.watchedState(size: size, rounds: 30)
                    state.theme = theme
                    return state
                }
            ),
        ] {
            let dark = render(make(.dark))
            let light = render(make(.light))
            #expect(dark.text == light.text, "\(name): a theme changes colours, never words")
            Snapshot.check(light, named: "\(name)-\(suffix)")
            Snapshot.checkText(dark.styleText + "\n", named: "\(name)-dark-styles-\(suffix)")
            Snapshot.checkText(light.styleText + "\n", named: "\(name)-light-styles-\(suffix)")
        }
    }

    @Test("the help lists the IP and watch views' keys")
    func help() {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 120, height: 40))
        _ = reduce(into: &state, action: .key(.character("?")))
        var text = ""
        for _ in 0..<6 {
            text += render(state).text
            _ = reduce(into: &state, action: .key(.pageDown))
        }
        #expect(text.contains("IP view (i)") && text.contains("Watch view (w)"))
    }
}

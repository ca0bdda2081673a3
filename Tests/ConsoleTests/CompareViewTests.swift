// The compare view (`v`), `[keys]` remapping and the light and dark themes: snapshots of what a
// person sees, the reducer's effects, and the sentences a bad `[keys]` entry gets.
import ConfigurationSources
import Console
import Foundation
import NameResolution
import Testing

@Suite("Compare view, keys and themes")
struct CompareViewTests {
    static let sizes = [TerminalSize(width: 80, height: 24), TerminalSize(width: 120, height: 40)]

    /// Four providers: three agree with each other, one sees another address, one cannot start,
    /// and the DNS server is hijacked.
    static let comparison = ProviderComparison(
        host: "sni-a.lab.test",
        system: SystemAnswer(
            ipv4: ["127.0.0.2"], ms: 0.6, resolver: .dns(try! DNSServer.parse("127.0.0.1:5353")), ttl: 300),
        providers: [
            ProviderRow(
                name: "lab-alicloud", kind: .alicloud, endpoint: "https://127.0.0.1:18443", ipv4: ["127.0.0.1"],
                ttl: FamilyTTL(v4: 60),
                ms: 2.4, clientIP: "127.0.0.1"),
            ProviderRow(
                name: "lab-alicloud-legacy", kind: .alicloudLegacy, endpoint: "https://127.0.0.1:18443",
                ipv4: ["127.0.0.1"], ttl: FamilyTTL(v4: 60), ms: 2.1),
            ProviderRow(
                name: "lab-tencent", kind: .tencent, endpoint: "http://127.0.0.1:18080",
                ipv4: ["127.0.0.1", "10.0.0.9"],
                ttl: FamilyTTL(v4: 30), ms: 1.7, clientIP: "127.0.0.1"),
            ProviderRow(
                name: "lab-doh", kind: .doh, endpoint: "https://127.0.0.1:18443/dns-query", ipv4: ["127.0.0.1"],
                ttl: FamilyTTL(v4: 60), ms: 3.0),
            ProviderRow(
                name: "aliyun", kind: .alicloud, endpoint: "service discovery (region cn)", ms: 0,
                error:
                    "provider 'aliyun' takes its signing secret from ALI_SECRET, which is not set: export ALI_SECRET or remove the setting"
            ),
        ])

    private func compared(size: TerminalSize, theme: ConsoleTheme = .dark) -> ConsoleState {
        var state = ConsoleFixtures.populatedState(size: size)
        state.theme = theme
        _ = reduce(into: &state, action: .key(.character("1")))
        let effects = reduce(into: &state, action: .key(.character("v")))
        #expect(effects == [.compareProviders(host: "sni-a.lab.test")])
        _ = reduce(into: &state, action: .providersCompared(Self.comparison))
        return state
    }

    private func check(_ state: ConsoleState, _ name: String, styles: Bool = false) {
        let buffer = render(state)
        let suffix = "\(state.size.width)x\(state.size.height)"
        Snapshot.check(buffer, named: "\(name)-\(suffix)")
        if styles {
            // What colour adds, checked as text: a theme must change colours, never words.
            Snapshot.checkText(buffer.styleText + "\n", named: "\(name)-styles-\(suffix)")
        }
    }

    @Test("compare view: every provider, the DNS server column, letters for agreement (dark)", arguments: sizes)
    func compareDark(size: TerminalSize) {
        check(compared(size: size), "compare-dark", styles: true)
    }

    @Test("compare view in the light theme: the same words, colours that read on white", arguments: sizes)
    func compareLight(size: TerminalSize) {
        let light = compared(size: size, theme: .light)
        check(light, "compare-light", styles: true)
        let dark = render(compared(size: size))
        let lightFrame = render(light)
        #expect(lightFrame.text == dark.text)
        #expect(!lightFrame.cells.contains { $0.style.foreground == .yellow || $0.style.foreground == .cyan })
    }

    @Test("v with nothing probed says what to do; r in the view asks again; Esc goes back")
    func compareKeys() {
        var empty = ConsoleFixtures.emptyState()
        _ = reduce(into: &empty, action: .key(.escape))
        #expect(reduce(into: &empty, action: .key(.character("v"))).isEmpty)
        #expect(empty.message.contains("Nothing to compare"))

        var state = compared(size: TerminalSize(width: 80, height: 24))
        #expect(state.view == .compare)
        #expect(state.message.contains("the system column gave C"))
        #expect(reduce(into: &state, action: .key(.character("r"))) == [.compareProviders(host: "sni-a.lab.test")])
        #expect(state.compare.running)
        // The old answer stays on screen while the new one is asked for.
        #expect(render(state).text.contains("lab-tencent"))
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.view == .probe)
    }

    @Test("an engine with no providers gets a view that says how to name some")
    func noProviders() {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 80, height: 24))
        _ = reduce(into: &state, action: .key(.character("1")))
        _ = reduce(into: &state, action: .key(.character("v")))
        _ = reduce(
            into: &state,
            action: .providersCompared(
                ProviderComparison(host: "sni-a.lab.test", system: SystemAnswer(), providers: [])))
        let text = render(state).text
        #expect(text.contains("No providers to compare"))
        #expect(text.contains("[[providers]]"))
    }

    // MARK: [keys]

    @Test("[keys] remaps an action everywhere: the reducer obeys the new key and the help shows it")
    func remapping() throws {
        let map = try KeyMap.remapped([
            KeyRemap(action: "quit", keys: ["Q", "Ctrl-Q"]), KeyRemap(action: "compare-providers", keys: ["C"]),
        ])
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 120, height: 40))
        state.keyMap = map
        _ = reduce(into: &state, action: .key(.character("1")))
        #expect(reduce(into: &state, action: .key(.character("q"))).isEmpty)
        #expect(reduce(into: &state, action: .key(.character("C"))) == [.compareProviders(host: "sni-a.lab.test")])
        _ = reduce(into: &state, action: .key(.character("?")))
        // The global keys close the help; it is longer than one screen, so read its end.
        _ = reduce(into: &state, action: .key(.character("G")))
        let help = render(state).text
        #expect(help.contains("Q, Ctrl-Q"))
        #expect(!help.contains("q, Ctrl-C"))
        #expect(reduce(into: &state, action: .key(.control("q"))) == [.quit])
    }

    @Test("a bad [keys] entry stops the start with a sentence naming it")
    func remapErrors() {
        let cases: [([KeyRemap], String)] = [
            ([KeyRemap(action: "qiut", keys: ["x"])], "'qiut' is not an action; the actions are"),
            ([KeyRemap(action: "quit", keys: ["F13"])], "'F13' is not a key"),
            ([KeyRemap(action: "quit", keys: [])], "give at least one key"),
            ([KeyRemap(action: "quit", keys: ["r"])], "'r' would mean both"),
            ([KeyRemap(action: "submit", keys: ["x"])], "would be typed as text"),
            ([KeyRemap(action: "help", keys: ["v"])], "'v' would mean both"),
        ]
        for (remaps, sentence) in cases {
            #expect(throws: KeyMapError.self) { try KeyMap.remapped(remaps) }
            do {
                _ = try KeyMap.remapped(remaps)
            } catch {
                #expect("\(error)".contains(sentence), "\(error)")
            }
        }
    }

    @Test("the shipped keys have no clash")
    func standardKeysClean() {
        #expect(KeyMap.standard.firstClash == nil)
    }

    // MARK: Themes

    @Test("theme auto follows COLORFGBG's background, dark when it is absent or unreadable")
    func autoTheme() {
        #expect(ConsoleTheme.resolve(.auto, environment: ["COLORFGBG": "15;0"]) == .dark)
        #expect(ConsoleTheme.resolve(.auto, environment: ["COLORFGBG": "0;15"]) == .light)
        #expect(ConsoleTheme.resolve(nil, environment: ["COLORFGBG": "0;default;7"]) == .light)
        #expect(ConsoleTheme.resolve(.auto, environment: ["COLORFGBG": "default;default"]) == .dark)
        #expect(ConsoleTheme.resolve(.auto, environment: [:]) == .dark)
        #expect(ConsoleTheme.resolve(.dark, environment: ["COLORFGBG": "0;15"]) == .dark)
        #expect(ConsoleTheme.resolve(.light, environment: [:]) == .light)
    }

    @Test("the other views' light variants keep their words", arguments: ["1", "2", "3", "4"])
    func lightViews(key: String) {
        var dark = ConsoleFixtures.populatedState(size: TerminalSize(width: 80, height: 24))
        _ = reduce(into: &dark, action: .key(.character(Character(key))))
        var light = dark
        light.theme = .light
        let frame = render(light)
        #expect(frame.text == render(dark).text)
        #expect(!frame.cells.contains { $0.style.foreground == .yellow || $0.style.foreground == .cyan })
    }

    @Test("the reproduce panel in the light theme: the same command, colours that read on white", arguments: sizes)
    func reproduceLight(size: TerminalSize) throws {
        var state = try ReproducePanelTests.state(size: size)
        _ = reduce(into: &state, action: .key(.character("c")))
        _ = reduce(into: &state, action: .clipboardCopied(true))
        let dark = render(state)
        state.theme = .light
        check(state, "reproduce-probe-light", styles: true)
        #expect(render(state).text == dark.text)
    }
}

// The reproduce panel and the console's manners: `c` shows and copies the command, the panel
// lays long commands out so a selection still runs, non-ASCII hosts are probed in ASCII form.
import Console
import CurlTransport
import Foundation
import Probe
import Testing

@Suite("Reproduce panel")
struct ReproducePanelTests {
    static let sizes = [TerminalSize(width: 80, height: 24), TerminalSize(width: 120, height: 40)]

    /// The fixture's state with a command on every attempt, as the engine writes them.
    static func state(size: TerminalSize) throws -> ConsoleState {
        var state = ConsoleFixtures.emptyState(size: size)
        let url = try ProbeURL.parse("https://sni-a.lab.test:18443/")
        var attempts = ConsoleFixtures.attempts
        for index in attempts.indices {
            attempts[index].reproduce = ReproduceCommand.command(
                for: .init(
                    scenario: attempts[index].scenario, url: url, ip: attempts[index].ip,
                    headers: [HeaderField(name: "Authorization", value: "Bearer x")],
                    caFile: "/tmp/ipdirect-lab-fixture/ca.pem", timeout: .seconds(10)))
        }
        _ = reduce(into: &state, action: .key(.character("p")))
        state.input = "sni-a.lab.test"
        _ = reduce(into: &state, action: .key(.enter))
        for attempt in attempts { _ = reduce(into: &state, action: .probeEvent(runID: 1, .attemptFinished(attempt))) }
        return state
    }

    @Test("c on a trace opens the panel with its command and asks for a clipboard copy", arguments: sizes)
    func traceSnapshot(size: TerminalSize) throws {
        var state = try Self.state(size: size)
        _ = reduce(into: &state, action: .key(.character("3")))
        _ = reduce(into: &state, action: .key(.down))
        let effects = reduce(into: &state, action: .key(.character("c")))
        let command = try #require(state.reproducePanel?.command)
        #expect(effects == [.copyToClipboard(command)])
        #expect(command.contains("openssl s_client"))
        _ = reduce(into: &state, action: .clipboardCopied(false))
        #expect(state.message.contains("select the command with the mouse"))
        Snapshot.check(render(state), named: "reproduce-trace-\(size.width)x\(size.height)")
        // Esc closes it and the traces list is back.
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.reproducePanel == nil)
        #expect(render(state).text.contains("SCENARIO"))
    }

    @Test("c on a probed host gives every attempt's command", arguments: sizes)
    func probeSnapshot(size: TerminalSize) throws {
        var state = try Self.state(size: size)
        _ = reduce(into: &state, action: .key(.character("c")))
        let command = try #require(state.reproducePanel?.command)
        #expect(command.contains("# direct-sni 127.0.0.1: ok 200"))
        #expect(command.contains("--resolve sni-a.lab.test:18443:127.0.0.1"))
        _ = reduce(into: &state, action: .clipboardCopied(true))
        Snapshot.check(render(state), named: "reproduce-probe-\(size.width)x\(size.height)")
    }

    @Test("a long command is broken between words with a backslash, and the pieces rejoin to it")
    func wrapping() throws {
        var state = try Self.state(size: TerminalSize(width: 80, height: 24))
        _ = reduce(into: &state, action: .key(.character("3")))
        _ = reduce(into: &state, action: .key(.character("c")))
        let command = try #require(state.reproducePanel?.command)
        let screen = render(state).text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        let shown = screen.dropFirst(2).prefix { !$0.isEmpty }
        #expect(shown.allSatisfy { $0.count <= 80 })
        let rejoined = shown.filter { !$0.hasPrefix("#") }.joined(separator: "\n")
            .replacingOccurrences(of: " \\\n  ", with: " ")
        #expect(rejoined == command.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n"))
    }

    @Test("the help lists c and wraps long summaries instead of cutting them")
    func help() {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 120, height: 40))
        _ = reduce(into: &state, action: .key(.character("?")))
        let text = render(state).text
        #expect(text.contains("copy the command that reproduces"))
        #expect(text.contains("malformed, down)"))
    }

    @Test("a host typed in UTF-8 is accepted and probed in its ASCII form")
    func internationalHost() {
        var state = ConsoleFixtures.emptyState()
        ConsoleFixtures.send(&state, keys: "pbücher.lab.test")
        #expect(state.input == "bücher.lab.test")
        let effects = reduce(into: &state, action: .key(.enter))
        #expect(effects == [.probe(runID: 1, target: "xn--bcher-kva.lab.test")])
    }
}

// Every view drawn by the pure render at 80x24 and 120x40, compared with the text stored under
// __Snapshots__ (SnapshotSupport.swift); a change to a view shows as a diff of those files.
import Console
import Foundation
import NameResolution
import Probe
import Testing

@Suite("Console views as text")
struct SnapshotTests {
    static let sizes = [TerminalSize(width: 80, height: 24), TerminalSize(width: 120, height: 40)]

    private func check(_ state: ConsoleState, _ name: String) {
        Snapshot.check(render(state), named: "\(name)-\(state.size.width)x\(state.size.height)")
    }

    @Test("probe view: matrix, verdict, a probe still running", arguments: sizes)
    func probeView(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(into: &state, action: .key(.character("1")))
        ConsoleFixtures.send(&state, keys: "p")
        ConsoleFixtures.send(&state, keys: "wrong-name.lab.test")
        _ = reduce(into: &state, action: .key(.enter))
        _ = reduce(
            into: &state,
            action: .probeEvent(
                runID: 2,
                .attemptStarted(
                    PlannedAttempt(
                        id: UUID(), url: "https://wrong-name.lab.test/", scenario: .directSNI, ip: "127.0.0.1",
                        ipSource: .httpdns))))
        check(state, "probe")
    }

    /// The probe view at 120x24 after `host` was entered and `resolution` came back for it.
    static func probed(_ host: String, _ resolution: HostResolution) -> ConsoleState {
        var state = ConsoleFixtures.emptyState(size: TerminalSize(width: 120, height: 24))
        ConsoleFixtures.send(&state, keys: "p" + host)
        _ = reduce(into: &state, action: .key(.enter))
        _ = reduce(into: &state, action: .probeEvent(runID: 1, .resolved(resolution)))
        return state
    }

    @Test("probe view names the client address the HTTPDNS service judged this client by")
    func probeViewClientIP() {
        var resolution = ConsoleFixtures.resolution
        resolution.httpdns.clientIP = "198.51.100.23"
        let buffer = render(Self.probed("sni-a.lab.test", resolution))
        Snapshot.check(buffer, named: "probe-client-ip-120x24")
        #expect(buffer.text.contains("ttl 60s from httpdns  saw you as 198.51.100.23"))
    }

    @Test("probe view: a DNS server's answer shows its TTL and CNAME chain")
    func probeViewDNSServerTTLAndChain() {
        var resolution = ConsoleFixtures.resolution
        resolution.system = SystemAnswer(
            ipv4: ["127.0.0.1"], ms: 0.4, resolver: .dns(DNSServer(address: "127.0.0.1", port: 5353)), ttl: 5,
            cname: ["alias-hop.lab.test", "plain.lab.test"])
        let text = render(Self.probed("alias.lab.test", resolution)).text
        #expect(text.contains("127.0.0.1  ttl 5s  via alias-hop.lab.test -> plain.lab.test"), "\(text)")
    }

    @Test("probe view before anything was probed, typing", arguments: sizes)
    func probeViewEmpty(size: TerminalSize) {
        var state = ConsoleFixtures.emptyState(size: size)
        ConsoleFixtures.send(&state, keys: "psni-a.lab")
        check(state, "probe-empty")
    }

    @Test("the first screen: the keys obeyed, the host line waiting for p", arguments: sizes)
    func firstScreen(size: TerminalSize) {
        check(ConsoleFixtures.emptyState(size: size), "first-screen")
    }

    @Test("an export's whole path on lines of its own above the status bar", arguments: sizes)
    func exportMessage(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(
            into: &state,
            action: .exported([
                "/home/someone/ipdirect-exports/ipdirect-20261123-080000.jsonl",
                "/home/someone/ipdirect-exports/ipdirect-20261123-080000.har",
            ]))
        check(state, "export-message")
    }

    @Test("cache view: countdowns, states, sources", arguments: sizes)
    func cacheView(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(into: &state, action: .key(.character("2")))
        check(state, "cache")
    }

    @Test("traces view: newest first", arguments: sizes)
    func tracesView(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(into: &state, action: .key(.character("3")))
        check(state, "traces")
    }

    @Test("trace detail: waterfall, headers, certificate, log", arguments: sizes)
    func traceDetail(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(into: &state, action: .key(.character("3")))
        _ = reduce(into: &state, action: .key(.down))
        _ = reduce(into: &state, action: .key(.enter))
        check(state, "trace-detail")
    }

    @Test("events view with the lab's fault switch", arguments: sizes)
    func eventsView(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(into: &state, action: .key(.character("4")))
        check(state, "events")
    }

    @Test("help view, generated from the key map", arguments: sizes)
    func helpView(size: TerminalSize) {
        var state = ConsoleFixtures.populatedState(size: size)
        _ = reduce(into: &state, action: .key(.character("?")))
        check(state, "help")
    }

    @Test("without a UTF-8 locale the views draw in ASCII")
    func asciiFallback() {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 80, height: 24), glyphs: .ascii)
        _ = reduce(into: &state, action: .key(.character("3")))
        _ = reduce(into: &state, action: .key(.enter))
        let buffer = render(state)
        Snapshot.check(buffer, named: "trace-detail-ascii-80x24")
        #expect(buffer.cells.allSatisfy { $0.character.isASCII })
    }

    @Test("below 60x16 the console says so instead of drawing")
    func tooSmall() {
        let state = ConsoleFixtures.populatedState(size: TerminalSize(width: 50, height: 12))
        let buffer = render(state)
        Snapshot.check(buffer, named: "too-small-50x12")
        #expect(buffer.text.contains("Terminal too small: 50x12"))
    }

    @Test("flushing everything asks first")
    func confirmPrompt() {
        var state = ConsoleFixtures.populatedState(size: TerminalSize(width: 80, height: 24))
        _ = reduce(into: &state, action: .key(.character("2")))
        _ = reduce(into: &state, action: .key(.character("D")))
        Snapshot.check(render(state), named: "cache-confirm-80x24")
    }
}

@Suite("Console doctor view as text")
struct DoctorSnapshotTests {
    @Test("doctor view: every status, a long sentence cut to the width, the summary", arguments: SnapshotTests.sizes)
    func doctorView(size: TerminalSize) {
        let state = DoctorFixtures.finished(size: size)
        Snapshot.check(render(state), named: "doctor-\(size.width)x\(size.height)")
    }

    @Test("doctor view while the checks run: rows still running, the time so far", arguments: SnapshotTests.sizes)
    func doctorRunning(size: TerminalSize) {
        var state = DoctorFixtures.opened(size: size)
        for finding in DoctorFixtures.findings.prefix(4) {
            _ = reduce(into: &state, action: .doctorFinding(run: 1, finding))
        }
        _ = reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(3)))
        Snapshot.check(render(state), named: "doctor-running-\(size.width)x\(size.height)")
    }

    @Test("a check's detail: what was sent and seen, the advice, the commands", arguments: SnapshotTests.sizes)
    func doctorDetail(size: TerminalSize) {
        var state = DoctorFixtures.finished(size: size)
        _ = reduce(into: &state, action: .key(.down))
        _ = reduce(into: &state, action: .key(.down))
        _ = reduce(into: &state, action: .key(.enter))
        Snapshot.check(render(state), named: "doctor-detail-\(size.width)x\(size.height)")
    }
}

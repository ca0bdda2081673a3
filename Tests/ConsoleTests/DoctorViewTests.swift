// The doctor view as a person meets it: D opens it with every check running, rows fill in as
// findings arrive, Enter shows what a check sent and saw, r runs again, e exports, c copies.
import ConfigurationSources
import Console
import Doctor
import Foundation
import Testing

/// Findings of every status, one with a long sentence, trace and commands, as a run could end.
enum DoctorFixtures {
    static let reachability = DoctorFinding(
        check: .serviceReachability, status: .fail,
        seen:
            "127.0.0.1:18443 never answered within 5 s over HTTPS (timeout) and 127.0.0.1:18080 refused the connection over HTTP, while the region's other service address 127.0.0.2 answered both in 3.1 ms.",
        advice: "Let the client reach 127.0.0.1 (a firewall or the carrier blocks it), or list 127.0.0.2 first.",
        trace: [
            DoctorTraceLine(.sent, "GET https://127.0.0.1:18443/100000/d?host=www.aliyun.com"),
            DoctorTraceLine(.seen, "no answer within 5000 ms (timeout)"),
            DoctorTraceLine(.sent, "GET http://127.0.0.2:18080/100000/d?host=www.aliyun.com"),
            DoctorTraceLine(.seen, "HTTP/1.1 200 OK, 96 bytes, connect 0.4 ms"),
            DoctorTraceLine(.note, "127.0.0.1 is blocked; 127.0.0.2 is the way out"),
        ],
        reproduce: [
            "curl -sS -m 5 'https://127.0.0.1:18443/100000/d?host=www.aliyun.com'",
            "curl -sS -m 5 'http://127.0.0.2:18080/100000/d?host=www.aliyun.com'",
        ], durationMs: 5012)

    static let findings: [DoctorFinding] = [
        DoctorFinding(
            check: .ipStack, status: .pass, seen: "IPv4 and IPv6 both route; the SDKs would ask for A and AAAA.",
            durationMs: 2.1),
        DoctorFinding(
            check: .proxiesAndResolvers, status: .skipped, seen: "This check is not written yet.", durationMs: 0.1),
        reachability,
        DoctorFinding(
            check: .clock, status: .warn, seen: "This machine's clock is 45 s behind the service's Date header.",
            advice: "Set the clock right (timedatectl set-ntp true): past 600 s signed requests are refused.",
            trace: [
                DoctorTraceLine(.sent, "HEAD https://127.0.0.1:18443/"),
                DoctorTraceLine(.seen, "Date: Mon, 23 Nov 2026 08:00:45 GMT"),
            ], reproduce: ["curl -sI https://127.0.0.1:18443/ | grep -i '^date:'"], durationMs: 12.5),
        DoctorFinding(
            check: .account, status: .pass, seen: "Signed requests are answered; www.aliyun.com resolved to 127.0.0.1.",
            durationMs: 8.4),
        DoctorFinding(check: .dnsPaths, status: .skipped, seen: "This check is not written yet."),
        DoctorFinding(
            check: .clientAddress, status: .pass, seen: "The service saw this machine as 127.0.0.1, one of its own.",
            durationMs: 3.3),
        DoctorFinding(check: .interception, status: .skipped, seen: "This check is not written yet."),
    ]

    static let report = DoctorReport(
        startedAt: ConsoleFixtures.now, durationMs: 5040, provider: "alicloud at http://127.0.0.1:18080/lab",
        findings: findings)

    /// A console on the probe view that pressed D: the doctor's first run under way.
    static func opened(size: TerminalSize = TerminalSize(width: 80, height: 24)) -> ConsoleState {
        var state = ConsoleFixtures.emptyState(size: size)
        _ = reduce(into: &state, action: .key(.character("D")))
        return state
    }

    /// The same after every finding arrived and the run ended.
    static func finished(size: TerminalSize = TerminalSize(width: 80, height: 24)) -> ConsoleState {
        var state = opened(size: size)
        for finding in findings { _ = reduce(into: &state, action: .doctorFinding(run: 1, finding)) }
        _ = reduce(into: &state, action: .doctorFinished(run: 1, report))
        return state
    }

    /// The rows of the frame that name a check, in screen order.
    static func rows(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { line in
            DoctorCheckID.allCases.contains { line.contains(" " + $0.title + " ") || line.hasSuffix(" " + $0.title) }
        }
    }
}

@Suite("Console doctor view")
struct DoctorViewTests {
    @Test("D opens the doctor view with every check running, in the report's order, and runs them")
    func opens() {
        var state = ConsoleFixtures.emptyState()
        #expect(reduce(into: &state, action: .key(.character("D"))) == [.runDoctor(run: 1)])
        #expect(state.view == .doctor)
        let rows = DoctorFixtures.rows(render(state).text)
        #expect(rows.count == 8, "\(render(state).text)")
        for (row, check) in zip(rows, DoctorCheckID.allCases) {
            #expect(row.contains("running") && row.contains(check.title), "\(row)")
        }
        // Opening it again shows the run there is; it does not start another.
        _ = reduce(into: &state, action: .key(.character("1")))
        #expect(reduce(into: &state, action: .key(.character("D"))).isEmpty)
        #expect(state.view == .doctor)
    }

    @Test("a finding fills in its row; a finding of an earlier run is dropped")
    func findingArrives() {
        var state = DoctorFixtures.opened()
        _ = reduce(into: &state, action: .doctorFinding(run: 1, DoctorFixtures.findings[3]))
        var rows = DoctorFixtures.rows(render(state).text)
        #expect(rows[3].contains("warn") && rows[3].contains("45 s behind"), "\(rows[3])")
        #expect(rows[2].contains("running"))
        #expect(render(state).text.contains("1 of 8 checks answered"))

        // r starts another run: every row runs again, and the old run's late findings are ignored.
        #expect(reduce(into: &state, action: .key(.character("r"))) == [.runDoctor(run: 2)])
        _ = reduce(into: &state, action: .doctorFinding(run: 1, DoctorFixtures.reachability))
        rows = DoctorFixtures.rows(render(state).text)
        #expect(rows.allSatisfy { $0.contains("running") }, "\(rows)")
        _ = reduce(into: &state, action: .doctorFinding(run: 2, DoctorFixtures.reachability))
        #expect(DoctorFixtures.rows(render(state).text)[2].contains("fail"))
    }

    @Test("the end of the run shows the counts and the exit code's meaning")
    func summary() {
        let state = DoctorFixtures.finished(size: TerminalSize(width: 120, height: 40))
        let text = render(state).text
        #expect(text.contains("8 checks in 5.04s: 3 pass, 3 skipped, 1 warn, 1 fail; exit code 3"), "\(text)")
        #expect(text.contains("some check failed"))
        #expect(!text.contains("running"))
    }

    @Test("Enter on a row shows what the check sent and saw, the advice and the commands; Esc goes back")
    func detail() {
        var state = DoctorFixtures.finished(size: TerminalSize(width: 120, height: 40))
        for _ in 0..<2 { _ = reduce(into: &state, action: .key(.down)) }
        _ = reduce(into: &state, action: .key(.enter))
        let text = render(state).text
        #expect(text.contains("> GET https://127.0.0.1:18443/100000/d?host=www.aliyun.com"), "\(text)")
        #expect(text.contains("< no answer within 5000 ms (timeout)"))
        #expect(text.contains("* 127.0.0.1 is blocked; 127.0.0.2 is the way out"))
        #expect(text.contains("Let the client reach 127.0.0.1"))
        #expect(text.contains("curl -sS -m 5 'http://127.0.0.2:18080/100000/d?host=www.aliyun.com'"))
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.view == .doctor && DoctorFixtures.rows(render(state).text).count == 8)
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.view == .probe)
    }

    @Test("a long detail scrolls, says which lines show, and stops at its end")
    func detailScrolls() {
        var state = DoctorFixtures.opened()
        var long = DoctorFixtures.reachability
        long.trace = (1...40).map { DoctorTraceLine(.seen, "answer line \($0)") }
        _ = reduce(into: &state, action: .doctorFinding(run: 1, long))
        for _ in 0..<2 { _ = reduce(into: &state, action: .key(.down)) }
        _ = reduce(into: &state, action: .key(.enter))
        #expect(render(state).text.contains("lines 1-"), "\(render(state).text)")
        _ = reduce(into: &state, action: .key(.character("G")))
        let end = render(state).text
        #expect(end.contains("curl -sS -m 5 'http://127.0.0.2:18080/"), "\(end)")
        // Up from the end moves at once: the scroll went no further than the last screenful.
        _ = reduce(into: &state, action: .key(.up))
        #expect(render(state).text != end)
    }

    @Test("without a UTF-8 locale the doctor view and a detail draw in ASCII")
    func ascii() {
        var state = DoctorFixtures.finished()
        state.glyphs = .ascii
        #expect(render(state).cells.allSatisfy { $0.character.isASCII }, "\(render(state).text)")
        #expect(DoctorFixtures.rows(render(state).text)[2].contains("x fail"))
        _ = reduce(into: &state, action: .key(.enter))
        #expect(render(state).cells.allSatisfy { $0.character.isASCII }, "\(render(state).text)")
    }

    @Test("Enter on a check still running says so and opens nothing")
    func detailWhileRunning() {
        var state = DoctorFixtures.opened()
        _ = reduce(into: &state, action: .key(.enter))
        #expect(state.message == "IP stack is still running")
        #expect(!state.doctor.detailOpen)
        #expect(render(state).text.contains("0 of 8 checks answered"))
    }

    @Test("e exports the finished report as JSON into export_dir and says where; not before the end")
    func export() {
        var state = DoctorFixtures.opened()
        state.exportDirectory = "/home/someone/ipdirect-exports"
        #expect(reduce(into: &state, action: .key(.character("e"))).isEmpty)
        #expect(state.message.contains("still running"))
        for finding in DoctorFixtures.findings { _ = reduce(into: &state, action: .doctorFinding(run: 1, finding)) }
        _ = reduce(into: &state, action: .doctorFinished(run: 1, DoctorFixtures.report))
        let path = "/home/someone/ipdirect-exports/ipdirect-doctor-20261123-080000.json"
        #expect(
            reduce(into: &state, action: .key(.character("e"))) == [.exportDoctor(DoctorFixtures.report, path: path)])
        _ = reduce(into: &state, action: .doctorExported(path))
        #expect(state.message == "Exported the doctor's report to \(path)")
        #expect(state.events.elements.last?.kind == .export)
        #expect(render(state).text.contains("ipdirect-doctor-20261123-080000.json"))
    }

    @Test("the report's JSON is what probe --format json's encoder writes: every finding, in check order")
    func reportJSON() throws {
        let data = DoctorFixtures.report.json()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(findings.compactMap { $0["check"] as? String } == DoctorCheckID.allCases.map(\.rawValue))
        #expect(object["startedAt"] as? String == "2026-11-23T08:00:00.000Z")
        // Slashes as they are, as in probe's JSON: a URL in a trace stays searchable.
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("GET https://127.0.0.1:18443/100000/d") && !text.contains("\\/"), "\(text)")
    }

    @Test("c copies the selected check's commands; a check that ran none says so")
    func copy() {
        var state = DoctorFixtures.finished()
        #expect(reduce(into: &state, action: .key(.character("c"))).isEmpty)
        #expect(state.message.contains("ran no command"))
        _ = reduce(into: &state, action: .key(.down))
        _ = reduce(into: &state, action: .key(.down))
        let commands = DoctorFixtures.reachability.reproduce.joined(separator: "\n")
        #expect(reduce(into: &state, action: .key(.character("c"))) == [.copyToClipboard(commands)])
        #expect(render(state).text.contains("curl -sS -m 5 'https://127.0.0.1:18443/"))
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.reproducePanel == nil && state.view == .doctor)
    }

    @Test("what a finding quotes from a server is shown escaped, in the rows and the detail")
    func hostileText() {
        var state = DoctorFixtures.opened(size: TerminalSize(width: 120, height: 40))
        let hostile = DoctorFinding(
            check: .ipStack, status: .fail, seen: "the portal said \u{1B}[2J\u{202E}gninraw",
            advice: "ring the bell\u{07}", trace: [DoctorTraceLine(.seen, "HTTP/1.1 200 \u{1B}]52;c;cGF3bmVk\u{07}")],
            reproduce: ["curl '\u{1B}[31mred'"])
        _ = reduce(into: &state, action: .doctorFinding(run: 1, hostile))
        var text = render(state).text
        #expect(text.contains("the portal said \\x1b[2J\\u202egninraw"), "\(text)")
        _ = reduce(into: &state, action: .key(.enter))
        text = render(state).text
        #expect(text.contains("ring the bell\\x07"))
        #expect(text.contains("\\x1b]52;c;cGF3bmVk\\x07"))
        #expect(text.contains("curl '\\x1b[31mred'"))
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
    }

    @Test("help lists D; [keys] remaps it like any other action; the cache view's D still flushes")
    func keys() throws {
        var state = ConsoleFixtures.emptyState(size: TerminalSize(width: 120, height: 40))
        _ = reduce(into: &state, action: .key(.character("?")))
        #expect(render(state).text.contains("the doctor: is it the network? [doctor]"))
        #expect(KeyMap.standard.firstClash == nil)

        state = ConsoleFixtures.emptyState()
        state.keyMap = try KeyMap.remapped([KeyRemap(action: "doctor", keys: ["X"])])
        #expect(reduce(into: &state, action: .key(.character("D"))).isEmpty)
        #expect(reduce(into: &state, action: .key(.character("X"))) == [.runDoctor(run: 1)])

        state = ConsoleFixtures.emptyState()
        _ = reduce(into: &state, action: .key(.character("2")))
        _ = reduce(into: &state, action: .key(.character("D")))
        #expect(state.mode == .confirmFlushAll && state.view == .cache)
    }
}

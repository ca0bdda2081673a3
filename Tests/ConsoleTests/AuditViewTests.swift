// The audit view as a person meets it: A opens it, A again starts the traps' lab, the setup and
// trap URLs show, rows fill in from the ledger on the tick, Enter shows a trap's evidence.
import Audit
import Console
import Foundation
import Testing

/// A scripted audit: the setup a run prints and reports as the ledger fills.
enum AuditFixtures {
    static let token = "5eed1e55"

    /// The setup of a run on loopback, every trap's URL under the token.
    static let setup: AuditSetup = {
        let traps = AuditTrapID.allCases.map { trap in
            let url = "https://\(trap.rawValue).\(token).audit.lab.test:18444/"
            return """
                {"trap":"\(trap.rawValue)","url":"\(url)","urls":["\(url)"],
                "exercises":"What \(trap.title) exercises.","asks":"Request the URL once."}
                """
        }
        let json = """
            {"token":"\(token)","httpdns":{"ip":"http://127.0.0.1:18080/ip?host=NAME",
            "alicloud-v2":"http://127.0.0.1:18080/v2/d?id=100000&m=0&dn=NAME"},
            "httpdnsTLS":"https://127.0.0.1:18443","account":"100000","secret":"labsecret",
            "dns":"127.0.0.1:18053","proxy":"http://127.0.0.1:18081","caPEM":"/tmp/ipdirect-audit/ca.pem",
            "caDER":"/tmp/ipdirect-audit/ca.der",
            "traps":[\(traps.joined(separator: ","))]}
            """
        return try! JSONDecoder().decode(AuditSetup.self, from: Data(json.utf8))
    }()

    static func name(_ trap: AuditTrapID) -> String { "\(trap.rawValue).\(token).audit.lab.test" }

    /// Every trap not exercised but those given.
    static func report(_ findings: [AuditFinding]) -> AuditReport {
        let rest = AuditTrapID.allCases.filter { trap in !findings.contains { $0.trap == trap } }.map {
            AuditFinding(trap: $0, status: .notExercised, seen: "The app never reached \(name($0)).")
        }
        return AuditReport(token: token, startedAt: ConsoleFixtures.now, durationMs: 12_000, findings: findings + rest)
    }

    static let sniPass = AuditFinding(
        trap: .sni, status: .pass, seen: "Every request arrived with SNI \(name(.sni)).",
        evidence: ["08:00:03.120 TLS 127.0.0.1:18444 SNI \(name(.sni)), handshake completed"])

    static let wrongNameFail = AuditFinding(
        trap: .wrongName, status: .fail,
        seen: "A request arrived at the wrong-name origin: the app accepted a certificate for another name.",
        advice: "Evaluate the server trust for the original host with SecPolicyCreateSSL(true, host).",
        evidence: [
            "08:00:01.002 HTTPDNS alicloud-v2 \(name(.wrongName)) -> 127.0.0.3",
            "08:00:01.010 TLS 127.0.0.3:18444 SNI \(name(.wrongName)), presented other.lab.test, completed",
            "08:00:01.015 GET / Host: \(name(.wrongName)):18444 \u{1B}[31mUser-Agent: evil",
        ])

    static let hostWarn = AuditFinding(
        trap: .host, status: .warn, seen: "Host carried the name but not the port 18444.",
        advice: "Put the port in Host when it is not the scheme's default.")

    /// A console on the probe view that pressed A twice: the audit asked to start.
    static func starting(size: TerminalSize = TerminalSize(width: 80, height: 24)) -> ConsoleState {
        var state = ConsoleFixtures.emptyState(size: size)
        _ = reduce(into: &state, action: .key(.character("A")))
        _ = reduce(into: &state, action: .key(.character("A")))
        return state
    }

    /// The same once the lab is up and the ledger gave a report of `findings`.
    static func running(
        _ findings: [AuditFinding] = [wrongNameFail, sniPass, hostWarn],
        size: TerminalSize = TerminalSize(width: 80, height: 24)
    ) -> ConsoleState {
        var state = starting(size: size)
        _ = reduce(into: &state, action: .auditStarted(setup))
        _ = reduce(into: &state, action: .auditReport(report(findings)))
        return state
    }

    /// The frame's row of a trap.
    static func row(_ text: String, _ trap: AuditTrapID) -> String {
        text.split(separator: "\n").map(String.init).first {
            $0.contains(" " + trap.title + " ") || $0.hasSuffix(" " + trap.title)
        } ?? ""
    }
}

@Suite("Console audit view")
struct AuditViewTests {
    @Test("A opens the audit view without opening ports; A there starts the audit, once")
    func startsOnAsking() {
        var state = ConsoleFixtures.emptyState()
        #expect(reduce(into: &state, action: .key(.character("A"))).isEmpty)
        #expect(state.view == .audit)
        let text = render(state).text
        #expect(text.contains("A starts the traps in a lab on loopback"), "\(text)")
        #expect(AuditFixtures.row(text, .sni).contains("not started"), "\(text)")
        #expect(reduce(into: &state, action: .key(.character("A"))) == [.startAudit])
        #expect(reduce(into: &state, action: .key(.character("A"))).isEmpty, "a second start while starting")
        #expect(render(state).text.contains("starting the lab"))
    }

    @Test("once started: the setup an app needs, and every trap not exercised with its URL")
    func setupShown() {
        var state = AuditFixtures.starting(size: TerminalSize(width: 120, height: 40))
        #expect(reduce(into: &state, action: .auditStarted(AuditFixtures.setup)) == [.loadAuditReport])
        let text = render(state).text
        for essential in [
            "http://127.0.0.1:18080/ip?host=NAME", "127.0.0.1:18053", "http://127.0.0.1:18081",
            "/tmp/ipdirect-audit/ca.pem", "run 5eed1e55",
        ] {
            #expect(text.contains(essential), "missing \(essential):\n\(text)")
        }
        for trap in AuditTrapID.allCases {
            let row = AuditFixtures.row(text, trap)
            #expect(row.contains("not exercised"), "\(trap): \(row)")
            #expect(row.contains("https://\(trap.rawValue).5eed1e55.audit.lab.test:18444/"), "\(row)")
        }
    }

    @Test("the tick reads the ledger while the view is shown, one asking at a time; rows fill in")
    func fillsInLive() {
        var state = AuditFixtures.starting()
        _ = reduce(into: &state, action: .auditStarted(AuditFixtures.setup))
        // The start's own asking has not come back: the tick does not pile another on it.
        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(1))).isEmpty)
        _ = reduce(into: &state, action: .auditReport(AuditFixtures.report([])))
        #expect(AuditFixtures.row(render(state).text, .sni).contains("not exercised"))

        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(2))) == [.loadAuditReport])
        _ = reduce(into: &state, action: .auditReport(AuditFixtures.report([AuditFixtures.sniPass])))
        var text = render(state).text
        #expect(AuditFixtures.row(text, .sni).contains("pass"), "\(text)")
        #expect(AuditFixtures.row(text, .sni).contains("Every request arrived with SNI"))
        #expect(text.contains("1 pass, \(AuditTrapID.allCases.count - 1) not exercised, 0 warn, 0 fail"))

        // Not shown: no asking; shown again, the next tick asks.
        _ = reduce(into: &state, action: .key(.character("1")))
        #expect(reduce(into: &state, action: .tick(ConsoleFixtures.now.addingTimeInterval(3))).isEmpty)
        _ = reduce(into: &state, action: .key(.character("A")))
        _ = reduce(into: &state, action: .auditReport(AuditFixtures.report([AuditFixtures.wrongNameFail])))
        text = render(state).text
        #expect(AuditFixtures.row(text, .wrongName).contains("fail"), "\(text)")
    }

    @Test("Enter shows the trap's URL, what it asks, the advice and the ledger's evidence, escaped; Esc goes back")
    func detail() {
        var state = AuditFixtures.running(size: TerminalSize(width: 120, height: 40))
        _ = reduce(into: &state, action: .key(.enter))
        let text = render(state).text
        #expect(text.contains("https://wrong-name.5eed1e55.audit.lab.test:18444/"), "\(text)")
        #expect(text.contains("Request the URL once."))
        #expect(text.contains("SecPolicyCreateSSL(true, host)"))
        #expect(text.contains("presented other.lab.test, completed"))
        #expect(!text.contains("\u{1B}"), "a client's bytes reached the terminal raw")
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.view == .audit && !state.audit.detailOpen)
        _ = reduce(into: &state, action: .key(.escape))
        #expect(state.view == .probe)
    }

    @Test("an audit that cannot start says why, and A tries again")
    func failure() {
        var state = AuditFixtures.starting()
        _ = reduce(into: &state, action: .auditFailed("the lab cannot listen on 127.0.0.1:18444: address in use"))
        #expect(render(state).text.contains("The audit could not start: the lab cannot listen"))
        #expect(reduce(into: &state, action: .key(.character("A"))) == [.startAudit])
    }
}

@Suite("Console audit view as text")
struct AuditSnapshotTests {
    @Test("audit view: the setup, a pass, a warn, a fail and traps not exercised", arguments: SnapshotTests.sizes)
    func auditView(size: TerminalSize) {
        Snapshot.check(render(AuditFixtures.running(size: size)), named: "audit-\(size.width)x\(size.height)")
    }

    @Test("a trap's detail: its URL, advice and evidence", arguments: SnapshotTests.sizes)
    func auditDetail(size: TerminalSize) {
        var state = AuditFixtures.running(size: size)
        _ = reduce(into: &state, action: .key(.enter))
        Snapshot.check(render(state), named: "audit-detail-\(size.width)x\(size.height)")
    }
}

// `--web-config-file` on the agent's listener: basic auth with bcrypt hashes (401 without, 200
// with) and TLS, in exporter-toolkit's file format; what the reader does not take is refused.
import Foundation
import FoundationGaps
import NameResolution
import TestSupport
import Testing

@testable import Agent

@Suite("The listener's web configuration")
struct ListenerWebConfigTests {
    /// OpenBSD's bcrypt test vector: the password `U*U` at cost 5.
    static let hash = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"

    private static func config(_ text: String) throws -> ListenerWebConfig {
        let scratch = try ScratchDirectory("web-config")
        defer { scratch.remove() }
        let path = scratch.file("web.yml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return try ListenerWebConfig(file: path)
    }

    @Test("basic auth: 401 without a user, or with a wrong password; 200 with the password of the bcrypt hash")
    func basicAuth() async throws {
        let web = try Self.config(
            """
            # exporter-toolkit's format
            basic_auth_users:
              prometheus: '\(Self.hash)'
            """)
        let server = try await MetricsServer(host: "127.0.0.1", port: 0, web: web) { Array("up 1\n".utf8) }
        // curl, not URLSession: FoundationNetworking waits on a 401's challenge for a delegate.
        func status(_ user: String?) async throws -> (code: String, body: String) {
            let body = NSTemporaryDirectory() + "ipdirect-auth-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: body) }
            let result = try await ChildProcess.run(
                "/usr/bin/curl",
                ["-sS", "--max-time", "10", "-o", body, "-w", "%{http_code}"] + (user.map { ["-u", $0] } ?? [])
                    + ["http://127.0.0.1:\(server.port)/metrics"])
            return (result.output, (try? String(contentsOfFile: body, encoding: .utf8)) ?? "")
        }
        let without = try await status(nil)
        let wrong = try await status("prometheus:U*V")
        let stranger = try await status("root:U*U")
        let right = try await status("prometheus:U*U")
        let again = try await status("prometheus:U*U")
        await server.close()
        #expect(without.code == "401")
        #expect(wrong.code == "401")
        #expect(stranger.code == "401")
        #expect(right.code == "200")
        #expect(right.body == "up 1\n")
        #expect(again.code == "200")
    }

    @Test("TLS: the listener serves the configured certificate; curl trusting it scrapes /metrics")
    func tls() async throws {
        let scratch = try ScratchDirectory("web-config")
        defer { scratch.remove() }
        let made = try await ChildProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                scratch.file("key.pem"), "-out", scratch.file("cert.pem"),
            ])
        try #require(made.status == 0, "\(made.errors)")
        let web = try Self.config(
            """
            tls_server_config:
              cert_file: \(scratch.file("cert.pem"))
              key_file: "\(scratch.file("key.pem"))"
            """)
        let server = try await MetricsServer(host: "127.0.0.1", port: 0, web: web) { Array("up 1\n".utf8) }
        let scraped = try await ChildProcess.run(
            "/usr/bin/curl",
            ["-sS", "--cacert", scratch.file("cert.pem"), "https://127.0.0.1:\(server.port)/metrics"])
        let plain = try await ChildProcess.run(
            "/usr/bin/curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(server.port)/metrics"])
        await server.close()
        #expect(scraped.status == 0, "\(scraped.errors)")
        #expect(scraped.output == "up 1\n")
        #expect(plain.output != "up 1\n")
    }

    @Test(
        "ipdirect agent --web-config-file: /probe and /metrics need the user; a bad file stops the agent with exit 2",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary was not built"))
    func agentCommand() async throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let web = scratch.file("web.yml")
        try "basic_auth_users:\n  prometheus: \(Self.hash)\n".write(toFile: web, atomically: true, encoding: .utf8)
        let run = try AgentRun(
            [
                "--interval", "60", "--metrics-listen", "127.0.0.1:0", "--web-config-file", web,
                "https://sni-a.lab.test/",
            ],
            scratch: scratch)
        let port = try #require(await run.metricsPort())
        func code(_ path: String, _ user: [String]) async throws -> String {
            try await ChildProcess.run(
                "/usr/bin/curl",
                ["-s", "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code}"] + user
                    + ["http://127.0.0.1:\(port)\(path)"]
            ).output
        }
        let probe = "/probe?target=https%3A%2F%2Fsni-a.lab.test%2F&scenario=direct-sni"
        #expect(try await code("/metrics", []) == "401")
        #expect(try await code(probe, []) == "401")
        #expect(try await code("/metrics", ["-u", "prometheus:U*U"]) == "200")
        #expect(try await code(probe, ["-u", "prometheus:U*U"]) == "200")
        run.signal(SIGTERM)
        #expect(await run.exitStatus(within: 60) == 0)

        try "tls_server_config:\n  cert_file: missing.pem\n".write(toFile: web, atomically: true, encoding: .utf8)
        let refused = try AgentRun(
            ["--metrics-listen", "127.0.0.1:0", "--web-config-file", web, "https://sni-a.lab.test/"], scratch: scratch)
        #expect(await refused.exitStatus(within: 30) == 2)

        // A cost that would wedge every check is refused at start, the user named.
        let wedging = Self.hash.replacingOccurrences(of: "$05$", with: "$31$")
        try "basic_auth_users:\n  slow: '\(wedging)'\n".write(toFile: web, atomically: true, encoding: .utf8)
        let costly = try AgentRun(
            ["--metrics-listen", "127.0.0.1:0", "--web-config-file", web, "https://sni-a.lab.test/"], scratch: scratch)
        #expect(await costly.exitStatus(within: 30) == 2)
        #expect(costly.child.errorsText.contains("'slow' has a bcrypt cost of 31"), "\(costly.child.errorsText)")
    }

    /// curl's status code for `/metrics` as `user` (NAME:PASSWORD), "000" when no answer came.
    private static func status(_ port: Int, _ user: String, within seconds: Int = 20) async throws -> String {
        try await ChildProcess.run(
            "/usr/bin/curl",
            ["-s", "--max-time", "\(seconds)", "-o", "/dev/null", "-w", "%{http_code}", "-u", user]
                + ["http://127.0.0.1:\(port)/metrics"]
        ).output
    }

    @Test("a duplicate key is refused with its name and both lines, never silently the last")
    func duplicateKey() throws {
        for (text, name, line) in [
            ("tls_server_config:\n  cert_file: a.pem\n  key_file: a.key\n  cert_file: b.pem\n", "cert_file", 4),
            ("basic_auth_users:\n  prometheus: '\(Self.hash)'\n  prometheus: '\(Self.hash)'\n", "prometheus", 3),
            ("basic_auth_users:\n  a: '\(Self.hash)'\nbasic_auth_users:\n", "basic_auth_users", 3),
        ] {
            do {
                _ = try Self.config(text)
                Issue.record("a duplicate '\(name)' was taken")
            } catch {
                let words = "\(error)"
                #expect(words.contains("line \(line):"), "\(words)")
                #expect(words.contains("'\(name)' is given twice (first on line"), "\(words)")
            }
        }
    }

    @Test("a FIFO or a file without a certificate as cert_file or key_file: refused with a sentence, no hang")
    func unreadableTLSFiles() async throws {
        let scratch = try ScratchDirectory("web-config")
        defer { scratch.remove() }
        let fifo = scratch.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let garbage = scratch.file("garbage.pem")
        try "not a certificate\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        for (tls, expected) in [
            ((fifo, garbage), "cert_file \(fifo): it is a FIFO, not a regular file"),
            ((garbage, fifo), "key_file \(fifo): it is a FIFO, not a regular file"),
            ((garbage, garbage), "cert_file \(garbage): it holds no"),
        ] {
            let web = ListenerWebConfig(tls: (tls.0, tls.1))
            do {
                let server = try await MetricsServer(host: "127.0.0.1", port: 0, web: web) { Array("up 1\n".utf8) }
                await server.close()
                Issue.record("the listener started with \(tls)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
                #expect(!"\(error)".contains("failedTo"), "\(error)")
            }
        }
    }

    /// A listener answering `/metrics` with the web configuration `text`, its bcrypt through `crypt`.
    private static func serve(_ text: String, crypt: CryptCalls) async throws -> MetricsServer {
        try await MetricsServer(host: "127.0.0.1", port: 0, web: try config(text), crypt: crypt.crypt) {
            Array("up 1\n".utf8)
        }
    }

    @Test(
        "a bcrypt check that does not end holds neither a remembered user's scrape nor shutdown; checks run one at a time"
    )
    func slowCheckHoldsNothing() async throws {
        let calls = CryptCalls()
        let server = try await Self.serve(
            "basic_auth_users:\n  prometheus: '\(Self.hash)'\n  slow: '\(Self.hash)'\n", crypt: calls)
        let port = server.port
        let first = try await Self.status(port, "prometheus:U*U")
        let held = (0..<3).map { _ in Task { try await Self.status(port, "slow:hold", within: 60) } }
        let holding = await eventually(within: 30) { calls.count("hold") == 1 }
        // prometheus was checked before: answered from what is remembered, with bcrypt held.
        let remembered = try await Self.status(port, "prometheus:U*U")
        let stillHeld = calls.running == 1
        await server.close()
        calls.release(3)
        var heldCodes: [String] = []
        for request in held { heldCodes.append(try await request.value) }
        #expect(first == "200")
        #expect(holding)
        #expect(remembered == "200")
        #expect(stillHeld)
        #expect(calls.mostAtOnce == 1)
        // The held checks' connections ended with the listener: none was let in.
        #expect(!heldCodes.contains("200"), "\(heldCodes)")
        #expect(calls.count("hold") == 1, "the checks waiting behind the held one ran after close")
    }

    @Test(
        "each (user, hash, password) is checked once, a wrong one too; an unknown user costs one check against a stand-in hash, like a known one"
    )
    func checksRemembered() async throws {
        let calls = CryptCalls()
        let server = try await Self.serve("basic_auth_users:\n  prometheus: '\(Self.hash)'\n", crypt: calls)
        var codes: [String] = []
        for user in ["prometheus:wrong", "prometheus:wrong", "prometheus:wrong", "stranger:guess", "stranger:guess"] {
            codes.append(try await Self.status(server.port, user))
        }
        let right = try await Self.status(server.port, "prometheus:U*U")
        let again = try await Self.status(server.port, "prometheus:U*U")
        await server.close()
        #expect(codes == ["401", "401", "401", "401", "401"])
        #expect(right == "200" && again == "200")
        #expect(calls.count("wrong") == 1, "a wrong password was checked \(calls.count("wrong")) times")
        #expect(calls.count("U*U") == 1)
        // The unknown user's check ran as a known one's would, at the users' cost, and only once.
        #expect(calls.count("guess") == 1, "an unknown user was checked \(calls.count("guess")) times")
        #expect(calls.settings("guess").allSatisfy { $0.hasPrefix("$2b$05$") && $0 != Self.hash })
    }

    @Test("what the reader does not take is refused with the line")
    func refusals() throws {
        for (text, reason) in [
            ("tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n", "line 2"),
            ("http_server_config:\n  http2: false\n", "'http_server_config' is not read here"),
            ("basic_auth_users:\n  alice: plaintext\n", "needs a bcrypt hash"),
            // crypt_r would run 2^31 rounds for every request naming alice: days each.
            (
                "basic_auth_users:\n  alice: '\(Self.hash.replacingOccurrences(of: "$05$", with: "$31$"))'\n",
                "'alice' has a bcrypt cost of 31; the listener takes 4 to 14"
            ),
            (
                "basic_auth_users:\n  alice: '\(Self.hash.replacingOccurrences(of: "$05$", with: "$03$"))'\n",
                "bcrypt cost of 3"
            ),
            // crypt_r takes MD5-crypt and SHA-crypt too; exporter-toolkit does not.
            (
                "basic_auth_users:\n  alice: $1$saltsalt$qjXMvOEsNUx1FR1y8aW2A.\n",
                "'alice' needs a bcrypt hash ($2a$, $2b$ or $2y$, as htpasswd -nB writes), not an MD5-crypt hash ($1$)"
            ),
            ("basic_auth_users:\n  alice: '$6$salt$abc'\n", "not a SHA-512-crypt hash ($6$)"),
            ("basic_auth_users:\n  alice: '$2b$10$short'\n", "53 characters"),
            ("tls_server_config:\n  cert_file: a.pem\n", "needs cert_file and key_file"),
        ] {
            #expect(throws: AgentSettingError.self) { try Self.config(text) }
            do {
                _ = try Self.config(text)
            } catch {
                #expect("\(error)".contains(reason), "\(error)")
            }
        }
    }
}

/// A crypt seam that counts: each password's calls and settings, and how many ran at once. The
/// password `hold` is held until `release`, as a hash of cost 31 would hold it for days.
private final class CryptCalls: Sendable {
    private let gate = DispatchSemaphore(value: 0)

    /// crypt_r, counted (and held for `hold`).
    var crypt: ListenerAuth.Crypt {
        { password, setting in
            self.begin(password, setting)
            defer { self.end() }
            if password == "hold" { self.gate.wait() }
            return ListenerWebConfig.crypt(password, setting)
        }
    }

    /// Lets `count` held checks end.
    func release(_ count: Int) { for _ in 0..<count { gate.signal() } }

    private struct State {
        var calls: [(password: String, setting: String)] = []
        var running = 0
        var mostAtOnce = 0
    }
    private let state = Locked(State())

    func begin(_ password: String, _ setting: String) {
        state.withLock {
            $0.calls.append((password, setting))
            $0.running += 1
            $0.mostAtOnce = max($0.mostAtOnce, $0.running)
        }
    }

    func end() { state.withLock { $0.running -= 1 } }

    func count(_ password: String) -> Int { state.withLock { $0.calls.filter { $0.password == password }.count } }
    func settings(_ password: String) -> [String] {
        state.withLock { $0.calls.filter { $0.password == password }.map(\.setting) }
    }
    var running: Int { state.withLock { $0.running } }
    var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }

}

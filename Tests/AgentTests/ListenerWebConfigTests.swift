// `--web-config-file` on the agent's listener: basic auth with bcrypt hashes (401 without, 200
// with) and TLS, in exporter-toolkit's file format; what the reader does not take is refused.
import Agent
import Foundation
import TestSupport
import Testing

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
        #expect(await run.exitStatus(within: 10) == 0)

        try "tls_server_config:\n  cert_file: missing.pem\n".write(toFile: web, atomically: true, encoding: .utf8)
        let refused = try AgentRun(
            ["--metrics-listen", "127.0.0.1:0", "--web-config-file", web, "https://sni-a.lab.test/"], scratch: scratch)
        #expect(await refused.exitStatus(within: 30) == 2)
    }

    @Test("what the reader does not take is refused with the line")
    func refusals() throws {
        for (text, reason) in [
            ("tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n", "line 2"),
            ("http_server_config:\n  http2: false\n", "'http_server_config' is not read here"),
            ("basic_auth_users:\n  alice: plaintext\n", "needs a bcrypt hash"),
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

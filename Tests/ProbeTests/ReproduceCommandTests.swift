// The reproduce commands: quoted for a POSIX shell with secrets as variables, and run against
// the lab with stock curl and openssl, where they must succeed or fail as the attempt did.
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe
import TestSupport
import Testing

@Suite("Reproduce as a command")
struct ReproduceCommandTests {
    @Test("each scenario gets the tool and flags that repeat it")
    func shapes() throws {
        let url = try ProbeURL.parse("https://sni-a.lab.test:8443/a?b=1")
        let sni = ReproduceCommand.command(
            for: .init(
                scenario: .directSNI, url: url, ip: "127.0.0.1", caFile: "/tmp/ca dir/ca.pem", timeout: .seconds(5)))
        #expect(
            sni == "curl -sS -i --max-time 5 --resolve sni-a.lab.test:8443:127.0.0.1 --cacert '/tmp/ca dir/ca.pem' "
                + "'https://sni-a.lab.test:8443/a?b=1'")

        let plain = try ProbeURL.parse("http://plain.lab.test:8080/")
        let http = ReproduceCommand.command(for: .init(scenario: .directHTTP, url: plain, ip: "::1"))
        #expect(http == "curl -sS -i --max-time 10 -H 'Host: plain.lab.test:8080' 'http://[::1]:8080/'")

        let system = ReproduceCommand.command(
            for: .init(scenario: .systemDNS, url: url, ip: "10.0.0.1", pins: ["10.0.0.1", "::1"]))
        #expect(system.contains("--resolve 'sni-a.lab.test:8443:10.0.0.1,[::1]'"))
        let unresolved = ReproduceCommand.command(for: .init(scenario: .systemDNS, url: url, ip: nil))
        #expect(!unresolved.contains("--resolve"))
        let server = DNSServer(address: "127.0.0.1", port: 5353)
        let dug = ReproduceCommand.command(
            for: .init(scenario: .systemDNS, url: url, ip: "10.0.0.1", timeout: .seconds(2), dnsServer: server))
        #expect(
            dug.hasPrefix("dig @127.0.0.1 -p 5353 +short +tries=1 +time=2 sni-a.lab.test A sni-a.lab.test AAAA | grep"))
        #expect(dug.hasSuffix("--resolve sni-a.lab.test:8443:10.0.0.1 'https://sni-a.lab.test:8443/a?b=1'"))
        let failed = ReproduceCommand.command(for: .init(scenario: .systemDNS, url: url, ip: nil, dnsServer: server))
        #expect(failed.hasPrefix("dig @127.0.0.1 -p 5353") && !failed.contains("curl"))

        let https = ReproduceCommand.command(
            for: .init(scenario: .directHTTPS, url: url, ip: "127.0.0.1", method: .post, body: Array("a=1".utf8)))
        #expect(
            https.hasPrefix(
                "openssl s_client -connect 127.0.0.1:8443 -noservername -verify_hostname sni-a.lab.test -verify_return_error -brief </dev/null &&\n"
            ))
        #expect(https.contains("'POST /a?b=1 HTTP/1.1' 'Host: sni-a.lab.test:8443'"))
        #expect(https.contains("'Content-Length: 3'"))
        #expect(https.contains("printf '%s' a=1; }"))
    }

    @Test("secrets become variables, named in a comment, never written")
    func secrets() async throws {
        let url = try ProbeURL.parse("https://user:hunter22@api.lab.test/x?token=abc123&v=1")
        let command = ReproduceCommand.command(
            for: .init(
                scenario: .directSNI, url: url, ip: "127.0.0.1",
                headers: [
                    HeaderField(name: "Authorization", value: "Bearer s3cr3t"),
                    HeaderField(name: "X-Mode", value: "it's"),
                ]))
        for secret in ["hunter22", "abc123", "s3cr3t"] { #expect(!command.contains(secret), "\(command)") }
        #expect(command.contains("-H \"Authorization: ${IPDIRECT_AUTHORIZATION}\""))
        #expect(command.contains("# IPDIRECT_AUTHORIZATION: the value of the Authorization header"))
        #expect(
            command.contains(
                "\"https://user:${IPDIRECT_URL_PASSWORD}@api.lab.test/x?token=${IPDIRECT_QUERY_TOKEN}&v=1\""))
        #expect(command.contains("-H 'X-Mode: it'\\''s'"))
        let https = ReproduceCommand.command(for: .init(scenario: .directHTTPS, url: url, ip: "127.0.0.1"))
        #expect(!https.contains("abc123"), "\(https)")
        #expect(https.contains("\"GET /x?token=${IPDIRECT_QUERY_TOKEN}&v=1 HTTP/1.1\""))

        // The shell turns the variables back into the values.
        let echo = "printf '%s\\n' " + ReproduceCommand.quoted("it's $HOME") + " \"${IPDIRECT_AUTHORIZATION}\""
        let result = try await ChildProcess.shell(echo, environment: ["IPDIRECT_AUTHORIZATION": "Bearer s3cr3t"])
        #expect(result.output == "it's $HOME\nBearer s3cr3t\n")
    }

    @Test("a quote or a backtick followed by a combining mark is still escaped: the text stays one word")
    func combiningMarks() async throws {
        // `'` or `` ` `` with a combining mark (U+0301) is one Character; escaping by Character
        // left it bare, so the shell ended the quotes there and ran what followed.
        let text = "it'\u{301}s; echo INJECTED '\u{301}"
        let single = "printf '%s\\n' " + ReproduceCommand.quoted(text)
        #expect(try await ChildProcess.shell(single).output == text + "\n", "\(single)")

        let url = try ProbeURL.parse("https://api.lab.test/x?token=abc123&note=`\u{301}id`\u{301}")
        let command = ReproduceCommand.command(for: .init(scenario: .directSNI, url: url, ip: "127.0.0.1"))
        let word = try #require(command.split(separator: " ").last { $0.hasPrefix("\"https://") })
        let double = "printf '%s\\n' " + word
        let result = try await ChildProcess.shell(double, environment: ["IPDIRECT_QUERY_TOKEN": "abc123"])
        #expect(!result.output.contains("uid="), "\(double)")
        #expect(result.output.hasSuffix("&note=`\u{301}id`\u{301}\n"), "\(double)")
    }

    static let names = [
        "plain.lab.test", "single.lab.test", "sni-a.lab.test", "wrong-name.lab.test", "expired.lab.test",
        "self-signed.lab.test", "untrusted.lab.test", "slow.lab.test", "redirect.lab.test", "dual.lab.test",
    ]

    @Test("every command, run with curl and openssl, ends as its attempt did", arguments: ["GET", "POST"])
    func againstTheLab(method: String) async throws {
        try await withLab { lab in
            var options = ProbeOptions(allIPs: true, method: RequestMethod(rawValue: method)!, timeout: .seconds(2))
            if method == "POST" { options.body = Array("name=ipdirect&note=it's".utf8) }
            options.headers = [HeaderField(name: "X-Reproduce", value: "yes")]
            // System DNS knows two names here, so system-dns runs pinned as well as failing.
            let system = ["single.lab.test": ["127.0.0.1"], "plain.lab.test": ["127.0.0.1"]]
            let reports = await lab.engine(options, system: system).probeAll(Self.names.map { lab.url($0) })
            #expect(reports.count == Self.names.count)
            var checked = 0
            for report in reports {
                for attempt in report.attempts {
                    guard let command = attempt.reproduce else {
                        #expect(attempt.outcome == .skipped || attempt.hops.isEmpty)
                        continue
                    }
                    let result = try await ChildProcess.shell(command)
                    let label = "\(attempt.scenario.rawValue) \(attempt.url) \(attempt.outcome.rawValue)\n\(command)"
                    if attempt.outcome.reachedServer {
                        #expect(result.status == 0, "\(label)\n\(result.errors)")
                    } else {
                        #expect(result.status != 0, "\(label)\n\(result.output)")
                    }
                    // One response per hop that reached its server, with the same status.
                    let statuses = attempt.hops.filter(\.outcome.reachedServer).map(\.status)
                    #expect(result.statuses == statuses, "\(label)\n\(result.output)")
                    checked += 1
                }
            }
            #expect(checked >= 20)
        }
    }

    @Test("system-dns at a chosen DNS server: dig asks that server, then curl pins what it answered")
    func digAtTheDNSServer() async throws {
        try await withLab { lab in
            let names = ["single.lab.test", "hijacked.lab.test", "nxdomain.lab.test", "unreachable.lab.test"]
            let reports = try await LocalDNSProbeTests.engine(lab).probeAll(names.map { lab.url($0) })
            let server = try DNSServer.parse(lab.endpoints.dns)
            for report in reports {
                let attempt = try #require(report.attempts(.systemDNS).first)
                let command = try #require(attempt.reproduce)
                let label = "\(report.url) \(attempt.outcome.rawValue)\n\(command)"
                #expect(command.hasPrefix("dig @\(server.address) -p \(server.port) +short"), "\(label)")
                let result = try await ChildProcess.shell(command)
                if attempt.outcome == .dnsFailed {
                    // Nothing answered: the lookup alone is the attempt, and it fails as it did.
                    #expect(!command.contains("curl"), "\(label)")
                    #expect(result.status != 0, "\(label)\n\(result.output)")
                } else {
                    // dig prints the address the attempt connected to; curl ends as the attempt did.
                    let printed = result.output.split(whereSeparator: \.isNewline).map(String.init)
                    #expect(printed.contains(attempt.ip?.text ?? "-"), "\(label)\n\(result.output)")
                    #expect((result.status == 0) == attempt.outcome.reachedServer, "\(label)\n\(result.errors)")
                }
            }
            #expect(
                reports.map { $0.attempts(.systemDNS).first?.outcome } == [
                    .ok, .certNameMismatch, .dnsFailed, .connectFailed,
                ])
        }
    }

    @Test("the agent's /probe turns the commands off: the attempts are made alike, with no command")
    func commandsOff() async throws {
        try await withLab { lab in
            var options = ProbeOptions()
            options.reproduceCommands = false
            let quiet = await lab.engine(options).probeAll([lab.url("single.lab.test")])
            let usual = await lab.engine().probeAll([lab.url("single.lab.test")])
            let attempts = try #require(quiet.first?.attempts)
            #expect(attempts.allSatisfy { $0.reproduce == nil })
            #expect(attempts.map(\.outcome) == usual.first?.attempts.map(\.outcome))
            #expect(usual.first?.attempts.contains { $0.reproduce != nil } == true)
        }
    }

    @Test("JSON carries attempts[].reproduce and HAR entries _reproduce")
    func exports() async throws {
        try await withLab { lab in
            let reports = await lab.engine().probeAll([lab.url("single.lab.test")])
            let json = try JSONSerialization.jsonObject(with: exported(reports, .jsonArray)) as? [[String: Any]]
            let attempts = try #require(json?.first?["attempts"] as? [[String: Any]])
            let sni = try #require(attempts.first { $0["scenario"] as? String == "direct-sni" })
            #expect((sni["reproduce"] as? String)?.hasPrefix("curl ") == true)
            let skipped = try #require(attempts.first { $0["scenario"] as? String == "direct-http" })
            #expect(skipped["reproduce"] is NSNull)
            let har = try JSONSerialization.jsonObject(with: exported(reports, .har)) as? [String: Any]
            let entries = try #require((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
            let https = try #require(entries.first { $0["_scenario"] as? String == "direct-https" })
            #expect((https["_reproduce"] as? String)?.hasPrefix("openssl s_client") == true)
        }
    }
}

extension ChildProcess.Result {
    /// The status of each HTTP response printed (curl -i and s_client print one per hop).
    var statuses: [Int?] {
        output.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("HTTP/") }
            .map { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
    }
}

// Redaction by pattern: a header, query parameter or cookie whose name holds token, secret, key,
// session, password, auth or sig is hidden in HAR and JSON Lines, and so are the names the file adds.
import CurlTransport
import Foundation
import Lab
import Probe
import TestSupport
import Testing

@Suite("Redaction by pattern")
struct RedactionPatternTests {
    /// Values that must not reach an export, by the name they travel under.
    static let secrets = [
        "X-Session": "sess-4f1e9a", "X-Client-Token": "tok-61d0aa", "X-Upstream-Sig": "sig-0c4b7e",
    ]
    static let query = "access_key=ak-9b3e55&sessionid=sid-2c8d71&q=keep-me"

    @Test("X-Session, access_key, sessionid and the other pattern names are hidden in HAR and JSON Lines")
    func patternNames() async throws {
        try await withLab { lab in
            var options = ProbeOptions(scenarios: [.directSNI])
            options.headers = Self.secrets.sorted { $0.key < $1.key }.map { HeaderField(name: $0.key, value: $0.value) }
            options.headers.append(HeaderField(name: "X-Trace", value: "trace-visible"))
            let reports = await lab.engine(options).probeAll([lab.url("single.lab.test", "/echo?" + Self.query)])
            #expect(reports.first?.attempts(.directSNI).first?.outcome == .ok)
            let exports = [
                ("JSON Lines", try exportedText(reports, .jsonLines)),
                ("HAR", try exportedText(reports, .har)),
            ]
            for (format, text) in exports {
                for value in Self.secrets.values + ["ak-9b3e55", "sid-2c8d71"] {
                    #expect(!text.contains(value), "\(format) holds \(value)")
                }
                #expect(text.contains("X-Session"), "\(format) keeps the header's name")
                #expect(text.contains("trace-visible") && text.contains("keep-me"), "\(format) hid too much")
            }
        }
    }

    /// The trace hides a secret query value in `Location`; the redirect followed is the one received.
    @Test("a redirect keeping a secret query value is followed with the value, not with the marker")
    func redirectFollowsTheRealLocation() async throws {
        try await withLab { lab in
            let reports = await lab.engine(ProbeOptions(scenarios: [.directSNI])).probeAll([
                lab.url("redirect.lab.test", "/echo?session=sid-41aa07")
            ])
            let attempt = try #require(reports.first?.attempts(.directSNI).first)
            #expect(attempt.hops.count == 2, "\(attempt.hops.map(\.url))")
            let queries = lab.originRequests().compactMap(\.query)
            #expect(queries.filter { $0 == "session=sid-41aa07" }.count == 2, "\(queries)")
            #expect(try !exportedText(reports, .jsonLines).contains("sid-41aa07"))
        }
    }

    @Test("redact = [\"x-my-header\"] in the configuration file hides that header in probe's JSON Lines and HAR")
    func configuredNames() async throws {
        let binary = try #require(BuiltBinary.ipdirect, "the ipdirect binary was not built")
        let scratch = try ScratchDirectory("redact")
        defer { scratch.remove() }
        try FileManager.default.createDirectory(
            atPath: scratch.file("ipdirect"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try #require(
            FileManager.default.createFile(
                atPath: scratch.file("ipdirect/config.toml"), contents: Data("redact = [\"X-My-Header\"]\n".utf8),
                attributes: [.posixPermissions: 0o600]))
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        environment["XDG_CONFIG_HOME"] = scratch.path
        environment["XDG_CACHE_HOME"] = scratch.path
        let result = try await ChildProcess.run(
            binary,
            [
                "probe", "--lab", "--scenario", "direct-sni", "--header", "x-my-header: mine-5d0c3b", "--format",
                "jsonl", "--har", scratch.file("out.har"), "https://single.lab.test/echo",
            ],
            environment: environment, directory: scratch.path)
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(!result.errors.contains("unknown setting"), "\(result.errors)")
        let har = String(
            decoding: FileManager.default.contents(atPath: scratch.file("out.har")) ?? Data(), as: UTF8.self)
        #expect(har.contains("x-my-header"), "the HAR was not written: \(har.prefix(200))")
        for (format, text) in [("JSON Lines", result.output), ("HAR", har)] {
            #expect(!text.contains("mine-5d0c3b"), "\(format) holds the configured header's value")
        }
    }
}

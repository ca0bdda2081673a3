// Names served beyond the zone (the audit's traps): answered by HTTPDNS and `/ip`, served by an
// origin of their own whose handshakes the ledger records, and failing HTTPDNS until reached.
import CurlTransport
import Foundation
import Lab
import Testing

@Suite("Lab extra names")
struct LabExtraNameTests {
    static let good = "good.t0.audit.lab.test"
    static let flaky = "flaky.t0.audit.lab.test"
    static let wrong = "wrong.t0.audit.lab.test"

    static var options: LabOptions {
        var options = LabOptions()
        options.extraNames = [
            LabExtraName(record: LabZoneRecord(name: good, ipv4: ["127.0.0.1"], ipv6: [], ttl: 7)),
            LabExtraName(
                record: LabZoneRecord(name: flaky, ipv4: ["127.0.0.1"], ipv6: [], ttl: 2), failsHTTPDNS: true),
            LabExtraName(
                record: LabZoneRecord(name: wrong, ipv4: ["127.0.0.1"], ipv6: [], ttl: 60),
                certificate: .otherName("someone-else.t0.audit.lab.test")),
        ]
        return options
    }

    @Test("GET /ip answers an extra name's addresses, one a line, with its TTL as max-age; 404 for none")
    func plainIP() async throws {
        try await withLab(Self.options) { lab in
            let answer = try await fetch(HTTPRequest(url: lab.endpoints.httpdns + "/ip?host=\(Self.good)"))
            #expect(answer.status == 200)
            #expect(String(decoding: answer.body, as: UTF8.self) == "127.0.0.1\n")
            #expect(
                answer.responseHeaders.contains { $0.name.lowercased() == "cache-control" && $0.value == "max-age=7" })
            let none = try await fetch(HTTPRequest(url: lab.endpoints.httpdns + "/ip?host=nothing.lab.test"))
            #expect(none.status == 404)
            #expect(lab.endpoints.caDER.map { FileManager.default.fileExists(atPath: $0) } == true)
        }
    }

    @Test("HTTPDNS fails for a failing name in every format until its origin is reached, then answers")
    func failsUntilReached() async throws {
        try await withLab(Self.options) { lab in
            let e = lab.endpoints
            let paths = ["/ip?host=\(Self.flaky)", "/\(e.account)/d?host=\(Self.flaky)", "/resolve?name=\(Self.flaky)"]
            for path in paths {
                let status = try await fetch(HTTPRequest(url: e.httpdns + path)).status
                #expect(status == 500, "\(path)")
            }
            let reached = try await fetch(lab.pinned(Self.flaky)).status
            #expect(reached == 200)
            for path in paths {
                let status = try await fetch(HTTPRequest(url: e.httpdns + path)).status
                #expect(status == 200, "\(path)")
            }
        }
    }

    @Test("an origin with another name's certificate is refused by a checking client: a handshake, no request")
    func handshakeRecorded() async throws {
        try await withLab(Self.options) { lab in
            #expect(await failure(of: lab.pinned(Self.wrong)) != nil)
            #expect(lab.requests(to: Self.wrong).isEmpty)
            // The handshake is recorded when its connection closes.
            var handshakes: [LabTLSHandshake] = []
            for _ in 0..<50 where handshakes.isEmpty {
                handshakes = lab.tlsHandshakes().filter { $0.origin == Self.wrong }
                if handshakes.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            }
            let handshake = try #require(handshakes.first)
            // Under TLS 1.3 the server's side may complete before the client refuses: what tells
            // a refusal is the connection closing with no request on it.
            #expect(handshake.sni == Self.wrong)
            #expect(handshake.localAddress == "127.0.0.1")

            let accepted = try await fetch(lab.pinned(Self.good))
            #expect(accepted.status == 200)
            #expect(lab.requests(to: Self.good).first?.sni == Self.good)
        }
    }
}

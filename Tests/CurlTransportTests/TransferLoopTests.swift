// The transfer loop against the lab's real TLS servers: a handle outlives a transfer libcurl
// refused, each transfer is verified against its own CA file, never another's, and a large
// request goes out and is traced whole, a large answer comes in whole.
import Foundation
import Lab
import Testing

@testable import CurlTransport

/// A host name with one 300-character label, longer than DNS allows (63).
private let longLabelHost = String(repeating: "a", count: 300) + ".example"

/// A transfer to a lab name pinned to 127.0.0.1 below TLS (SNI and Host keep the name), trusting `caFile`.
private func pinned(_ lab: Lab, _ name: String, caFile: String) -> TransferSpec {
    let port = lab.endpoints.port(of: name) ?? 0
    return TransferSpec(
        url: "https://\(name):\(port)/", timeout: .seconds(10), caFile: caFile, resolve: ["\(name):\(port):127.0.0.1"],
        bodyLimit: .failBeyond(1 << 20))
}

@Suite("Transfer loop")
struct TransferLoopTests {
    @Test("a handle whose pinned name libcurl refused serves the next transfer without reading freed memory")
    func handleReusedAfterRefusedPin() async throws {
        try await withLab { lab in
            // One handle for both transfers: the second reuses the first's.
            let loop = TransferLoop(maxActive: 1)
            defer { loop.stop() }
            let refused = await loop.perform(
                TransferSpec(url: "https://\(longLabelHost)/", resolve: ["\(longLabelHost):443:127.0.0.1"]))
            #expect(refused.failure != nil)
            // No pin on this one: libcurl 7.88 walked the first transfer's freed pin list here.
            let next = await loop.perform(TransferSpec(url: lab.endpoints.httpdns + "/"))
            #expect(next.failure == nil, "\(String(describing: next.failure))")
            #expect(next.status == 404)
        }
    }

    /// Trust stores are parsed once per CA file and shared between connections: one transfer's
    /// CAs must never verify another's server (two labs, two CAs, one transfer loop).
    @Test("each transfer is verified against its own CA file, however often the loop saw others")
    func trustStaysWithItsTransfer() async throws {
        try await withLab { first in
            try await withLab { second in
                for _ in 0..<3 {
                    let one = try await TransferLoop.shared.fetch(
                        pinned(first, "sni-a.lab.test", caFile: first.endpoints.ca))
                    #expect(one.status == 200)
                    let other = try await TransferLoop.shared.fetch(
                        pinned(second, "sni-a.lab.test", caFile: second.endpoints.ca))
                    #expect(other.status == 200)
                }
                let crossed = pinned(second, "sni-a.lab.test", caFile: first.endpoints.ca)
                var refusal: (any Error)?
                do {
                    _ = try await TransferLoop.shared.fetch(crossed)
                } catch {
                    refusal = error
                }
                let error = try #require(refusal as? CurlError)
                #expect(error.kind == .certificate)
                #expect(error.refusedCertificate?.verifyError == 20)  // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
            }
        }
    }

    /// Small HTTPS requests get libcurl's smallest upload buffer (16 KB, not 64): a request head
    /// larger than that would leave in two pieces, and the second would be read as a request of
    /// its own in the trace.
    @Test("an HTTPS request whose head is larger than 16 KB is sent and traced whole")
    func largeRequestHeadTracedWhole() async throws {
        try await withLab { lab in
            var spec = pinned(lab, "sni-a.lab.test", caFile: lab.endpoints.ca)
            let value = String(repeating: "v", count: 20 * 1024)
            spec.headers = [HeaderField(name: "X-Large", value: value)]
            spec.trace = true
            let record = try await TransferLoop.shared.fetch(spec)
            #expect(record.status == 200)
            #expect(record.requestLine == "GET / HTTP/1.1")
            #expect(record.requestHeaders.first { $0.name == "X-Large" }?.value == value)
            #expect(record.requestHeaders.contains { $0.name == "Host" })
        }
    }

    /// `/probe` runs its transfers untraced; its TLS version and a refused handshake's connect
    /// time come from OpenSSL through the shim, not from libcurl's log.
    @Test("untraced: no curl log, yet the TLS version agreed, and when a refused handshake began")
    func handshakeFactsWithoutTrace() async throws {
        try await withLab { lab in
            let done = await TransferLoop.shared.perform(pinned(lab, "sni-a.lab.test", caFile: lab.endpoints.ca))
            #expect(done.status == 200)
            #expect(done.log.count == 0)
            #expect(done.tlsVersion == "TLSv1.3")
            // Refused: the connection was made, libcurl stamped no connect time, no version was agreed.
            var mismatched = pinned(lab, "sni-a.lab.test", caFile: lab.endpoints.ca)
            mismatched.checkName = "sni-b.lab.test"
            let refused = await TransferLoop.shared.perform(mismatched)
            #expect(refused.failure?.kind == .certificate)
            #expect(refused.connectUs == 0)
            #expect(refused.tlsStartUs > 0)
            #expect(refused.tlsStartUs <= refused.totalUs + 1000)
            #expect(refused.tlsVersion == nil)
        }
    }

    /// The hook's stamp is counted from libcurl's own start, which under load comes well after
    /// the transfer was added: a refused handshake's connect time lies within its transfer.
    @Test("a handshake's start counts from libcurl's start of the transfer, and stays within it")
    func handshakeStartOnLibcurlsClock() {
        let now: UInt64 = 10_000_000_000
        // libcurl took 0.2 s and finished now, so it started at 9.8 s; the handshake began at 9.85 s.
        #expect(TransferRecord.sinceCurlStart(9_850_000_000, totalUs: 200_000, now: now) == 50_000)
        #expect(TransferRecord.sinceCurlStart(0, totalUs: 200_000, now: now) == 0)
        // A stamp the reading lag puts before libcurl's start, or after its end, stays inside.
        #expect(TransferRecord.sinceCurlStart(9_700_000_000, totalUs: 200_000, now: now) == 1)
        #expect(TransferRecord.sinceCurlStart(10_100_000_000, totalUs: 200_000, now: now) == 200_000)
    }

    /// libcurl reads each transfer's answer through a 4 KB buffer (16 KB is its default).
    @Test("an answer many times larger than the receive buffer arrives whole")
    func largeAnswerArrivesWhole() async throws {
        let name = "body.t0.audit.lab.test"
        var options = LabOptions()
        options.extraNames = [
            LabExtraName(
                record: LabZoneRecord(name: name, ipv4: ["127.0.0.1"], ipv6: [], ttl: 60),
                behaviour: .servesBody(size: 100_000))
        ]
        try await withLab(options) { lab in
            var spec = pinned(lab, name, caFile: lab.endpoints.ca)
            spec.url += "body"
            let record = try await TransferLoop.shared.fetch(spec)
            #expect(record.status == 200)
            #expect(record.responseBytes == 100_000)
            #expect(record.body == LabExtraName.body(size: 100_000))
        }
    }

    /// What lets a resolver that gave up say "never sent" rather than "timed out".
    @Test("a transfer marks its work as sent once the loop starts it, and work that waits on it counts it too")
    func departures() async throws {
        try await withLab { lab in
            let asking = TransferDepartures()
            let waitingOnIt = TransferDepartures()
            #expect(!Self.left(asking))
            let record = await TransferDepartures.$current.withValue(asking) {
                await TransferLoop.shared.perform(TransferSpec(url: lab.endpoints.httpdns + "/"))
            }
            #expect(record.status == 404)
            #expect(Self.left(asking))
            #expect(!Self.left(waitingOnIt))
            waitingOnIt.follow(asking)
            #expect(Self.left(waitingOnIt))
        }
    }

    private static func left(_ departures: TransferDepartures) -> Bool {
        if case .left = departures.reading { return true }
        return false
    }
}

// The transfer loop against the lab's real TLS servers: a handle outlives a transfer libcurl
// refused, and each transfer is verified against its own CA file, never another's.
import CurlTransport
import Foundation
import Lab
import Testing

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
}

// The lab CA vouches for lab names and loopback only: its NameConstraints make a verifier
// refuse any other name it might sign, so trusting ca.pem is safe on a developer's machine.
import CurlTransport
import Foundation
import NIOCore
import NIOPosix
import TestSupport
import Testing

@testable import Lab

@Suite("Lab CA")
struct LabCATests {
    /// Serves `identity` on a free port with a throwaway origin; returns the port and a stop action.
    private func serve(_ identity: LabIdentity) async throws -> (port: Int, stop: @Sendable () async -> Void) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let ledger = LabLedger(fault: .none)
        let server = LabServer(
            role: .single, addresses: ["127.0.0.1"], tls: LabTLS(byName: [:], fallback: try identity.serverContext()),
            respond: originResponder(name: "test", behaviour: .answer, ledger: ledger))
        let listener = try LabListener(server: server, port: 0, group: group, connections: LabConnections())
        try await listener.open()
        return (
            listener.port,
            {
                await listener.release()
                try? await group.shutdownGracefully()
            }
        )
    }

    @Test("a certificate the lab CA signs for a name outside lab.test is refused")
    func nameConstraintsHold() async throws {
        let ca = try LabCertificateAuthority.make(commonName: "test lab CA", constrainedToLab: true)
        let scratch = try ScratchDirectory("ca")
        defer { scratch.remove() }
        let caFile = scratch.file("ca.pem")
        try ca.pem().write(toFile: caFile, atomically: true, encoding: .utf8)

        let inside = try await serve(ca.issue(dnsNames: ["inside.lab.test"]))
        let allowed = try await fetch(
            HTTPRequest(
                url: "https://inside.lab.test:\(inside.port)/", caFile: caFile,
                resolve: ["inside.lab.test:\(inside.port):127.0.0.1"], checkCertificateName: "inside.lab.test"))
        #expect(allowed.status == 200)
        await inside.stop()

        let outside = try await serve(ca.issue(dnsNames: ["www.example.com"]))
        let error = await failure(
            of: HTTPRequest(
                url: "https://www.example.com:\(outside.port)/", caFile: caFile,
                resolve: ["www.example.com:\(outside.port):127.0.0.1"], checkCertificateName: "www.example.com"))
        await outside.stop()
        let check = try #require(error?.refusedCertificate)
        #expect(check.verifyError == 47)  // X509_V_ERR_PERMITTED_VIOLATION
    }
}

// The probe with a chosen DNS server as its system column, against the lab's LocalDNS stand-in:
// a hijacked or dead-end answer fails the system-dns attempt while the HTTPDNS address works.
import ConfigurationSources
import Foundation
import Lab
import NameResolution
import Probe
import Testing

@Suite("Probe with the lab's DNS server as system DNS")
struct LocalDNSProbeTests {
    /// An engine resolving through the lab's RFC 8484 endpoint, with the lab's DNS server beside it.
    static func engine(_ lab: Lab) throws -> ProbeEngine {
        var configuration = ResolverConfiguration(
            provider: .doh, endpoint: lab.endpoints.httpdnsTLS + "/dns-query", caFile: lab.endpoints.ca, timeout: 10,
            family: .v4, cachePath: nil)
        configuration.dnsServer = try DNSServer.parse(lab.endpoints.dns)
        let cache = ResolverCache(configuration: configuration, provider: try ProviderFactory.make(configuration))
        var options = ProbeOptions()
        options.caFile = lab.endpoints.ca
        return ProbeEngine(resolve: { await cache.resolve($0) }, options: options, environment: [:])
    }

    @Test("a hijacked answer: system-dns reaches another site, direct-sni to HTTPDNS's address works")
    func hijack() async throws {
        try await withLab { lab in
            let report = try #require(await Self.engine(lab).probeAll([lab.url("hijacked.lab.test")]).first)
            #expect(report.resolution.agreement == .disjoint)
            let baseline = try #require(report.attempts(.systemDNS).first)
            #expect(baseline.ip?.text == LabLocalDNS.hijackAddress)
            #expect(baseline.outcome == .certNameMismatch)
            #expect(baseline.error?.sentence.contains(LabLocalDNS.hijackSiteName) == true)
            let direct = report.attempts(.directSNI).filter { $0.ip == "127.0.0.1" }
            #expect(direct.map(\.outcome) == [.ok])
            #expect(report.verdict.recommended == .directSNI)
            // The verdict says it in words, naming both addresses and the server that answered.
            let note = try #require(report.verdict.notes.first { $0.contains("hijacked") })
            #expect(note.contains("DNS server \(lab.endpoints.dns)"))
            #expect(note.contains(LabLocalDNS.hijackAddress))
            #expect(note.contains("HTTPDNS's 127.0.0.1 works"))
            // The certificate check stopped the request in the handshake: the hijacker saw none.
            #expect(lab.requests(to: "hijacker").isEmpty)
            #expect(lab.requests(to: "hijacked").count >= 1)
        }
    }

    @Test("an answer where nothing listens: system-dns cannot connect, direct-http works")
    func unreachable() async throws {
        try await withLab { lab in
            let report = try #require(await Self.engine(lab).probeAll([lab.url("unreachable.lab.test")]).first)
            let baseline = try #require(report.attempts(.systemDNS).first)
            #expect(baseline.ip?.text == LabLocalDNS.unreachableAddress)
            #expect(baseline.outcome == .connectFailed)
            #expect(report.attempts(.directHTTP).contains { $0.ip == "127.0.0.1" && $0.outcome == .ok })
            #expect(
                report.verdict.notes.contains {
                    $0.contains(LabLocalDNS.unreachableAddress) && $0.contains("127.0.0.1")
                })
        }
    }
}

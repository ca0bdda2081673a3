// The IP stack check against the lab: this machine's own stack passes on the clean lab, and the
// lab's DNS64 (the nat64 fault) is found the RFC 7050 way, with its prefix and an address to use.

import ConfigurationSources
import Doctor
import Foundation
import LabFaults
import NameResolution
import Testing

@Suite struct IPStackCheckTests {
    /// The check as a run makes it.
    private let check = DoctorChecks.all.first { $0.id == .ipStack }!

    @Test("the clean lab: no NAT64, the SDKs' detection and query type said, pass")
    func cleanLabPasses() async throws {
        let finding = try await DoctorLab.run { context, _ in await check.run(context) }
        #expect(finding.status == .pass, "\(finding.seen)")
        #expect(finding.seen.contains("no NAT64"))
        #expect(finding.seen.contains("the SDKs would detect"))
        #expect(finding.advice == nil)
        // The lab's DNS server stood in for the system resolver, and the trace says so.
        #expect(finding.trace.contains { $0.direction == .sent && $0.text.contains("the lab's DNS server") })
        #expect(finding.reproduce.contains { $0.hasPrefix("dig @127.0.0.1 -p ") && $0.hasSuffix("AAAA ipv4only.arpa") })
    }

    @Test("nat64: the prefix from ipv4only.arpa's AAAA, and the canary's IPv4 answer synthesized into it")
    func nat64Warns() async throws {
        let finding = try await DoctorLab.run(faults: [.nat64]) { context, _ in
            var context = context
            context.canaryName = "plain.lab.test"
            return await check.run(context)
        }
        #expect(finding.status == .warn, "\(finding.seen)")
        #expect(finding.seen.contains("64:ff9b::/96"))
        #expect(finding.seen.contains("64:ff9b::c000:aa"))
        // plain.lab.test is 127.0.0.1 at the lab's HTTPDNS service: 7f00:1 in the prefix's last 32 bits.
        #expect(finding.seen.contains("plain.lab.test's 127.0.0.1 is 64:ff9b::7f00:1"))
        let advice = try #require(finding.advice)
        #expect(advice.contains("64:ff9b::/96") && advice.contains("64:ff9b::7f00:1"))
    }

    @Test("a resolver that gives no answer at all: NAT64 is said to be not known, not absent")
    func unansweredDiscoveryIsNotKnown() async {
        // Nothing listens on port 1: the query is refused, which says nothing about AAAA records.
        let context = DoctorContext(
            resolver: ResolverConfiguration(provider: .alicloud, endpoint: "https://127.0.0.1:8443", timeout: 1),
            environment: [:], budget: .seconds(6), lab: DoctorLabFacts(dnsServer: "127.0.0.1:1"))
        let finding = await check.run(context)
        #expect(finding.seen.contains("NAT64 not known (ipv4only.arpa got no answer: "), "\(finding.seen)")
        #expect(!finding.seen.contains("no NAT64"))
    }
}

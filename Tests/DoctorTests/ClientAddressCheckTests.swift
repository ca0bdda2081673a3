// The client address check: on the lab the service sees this machine's own loopback address (no
// NAT) and `ip=` changes nothing; a public address not this machine's passes naming both; a
// private one seen by a public service warns; providers that report none are skipped with why.

import ConfigurationSources
import Foundation
import Lab
import NameResolution
import Testing

@testable import Doctor

@Suite struct ClientAddressCheckTests {
    @Test func onTheLabTheServiceSeesThisMachinesOwnAddressAndIPChangesNothing() async throws {
        try await DoctorLab.run(hosts: ["sni-a.lab.test"]) { context, lab in
            let finding = await ClientAddressCheck().run(context)
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("own address 127.0.0.1: no NAT"), "\(finding.seen)")
            let local = try #require(
                ClientAddressCheck.localAddress(MachineAddresses.current(), like: "127.0.0.1"),
                "this machine has an address besides loopback")
            #expect(
                finding.seen.contains(
                    "ip= would not change the answer for sni-a.lab.test (asked for 127.0.0.1 and for \(local))"),
                "\(finding.seen)")
            // Both questions reached the service, each with its client address.
            let asked = lab.httpdnsQueries().map(\.path).filter { $0.contains("sni-a.lab.test") }
            #expect(
                asked.contains { $0.contains("cip=127.0.0.1") } && asked.contains { $0.contains("cip=\(local)") },
                "\(asked)")
            #expect(finding.reproduce.contains { $0.contains("--client-ip \(local)") })
            #expect(!finding.reproduce.joined().contains(lab.endpoints.secret), "no secret in the commands")
        }
    }

    @Test func anAnswerChosenByTheClientsAddressWarnsThatIPChangesItNamingBothAnswers() async throws {
        // geo.lab.test: the lab's service answers loopback clients 127.0.0.1 and others 127.0.0.4.
        try await DoctorLab.run(hosts: ["geo.lab.test"]) { context, _ in
            let local = try #require(
                ClientAddressCheck.localAddress(MachineAddresses.current(), like: "127.0.0.1"),
                "this machine has an address besides loopback")
            let finding = await ClientAddressCheck().run(context)
            #expect(finding.status == .warn, "\(finding)")
            #expect(
                finding.seen.contains(
                    "ip= changes the answer: geo.lab.test for 127.0.0.1 127.0.0.1, for \(local) 127.0.0.4"),
                "\(finding.seen)")
            #expect(
                finding.advice?.contains("sends its own address \(local) with ip=") == true, "\(finding.advice ?? "")")
        }
    }

    @Test func aPublicAddressThatIsNotThisMachinesPassesNamingBoth() {
        let finding = ClientAddressCheck.reading(
            reported: "203.0.113.9", own: ["127.0.0.1", "192.168.1.20"], local: "192.168.1.20",
            service: "203.107.1.1")
        #expect(finding.status == .pass)
        #expect(finding.seen.contains("203.0.113.9") && finding.seen.contains("192.168.1.20"), "\(finding.seen)")
        #expect(finding.seen.contains("NAT"))
    }

    @Test func aPrivateAddressSeenByAServiceOnTheInternetWarns() {
        let finding = ClientAddressCheck.reading(
            reported: "10.8.0.1", own: ["127.0.0.1", "192.168.1.20"], local: "192.168.1.20", service: "203.107.1.1")
        #expect(finding.status == .warn)
        #expect(finding.seen.contains("10.8.0.1, a private address"), "\(finding.seen)")
        #expect(finding.advice != nil)
    }

    @Test(arguments: [ProviderKind.tencent, .doh, .dohJSON, .system])
    func providersThatReportNoClientAddressAreSkippedWithWhy(provider: ProviderKind) async {
        let context = DoctorContext(resolver: ResolverConfiguration(provider: provider), environment: [:])
        let finding = await ClientAddressCheck().run(context)
        #expect(finding.status == .skipped)
        #expect(finding.seen.contains("client address"), "\(finding.seen)")
    }
}

// The DNS paths check against the lab: every path answering alike passes; UDP 53 filtered warns
// naming UDP; a DNS server where nothing listens fails naming it; a DoH answer that differs warns.

import Foundation
import Lab
import NameResolution
import Testing

@testable import Doctor

@Suite struct DNSPathsCheckTests {
    @Test func theLabsDNSServerAnsweringOverUDPAndTCPPasses() async throws {
        try await DoctorLab.run { context, lab in
            let finding = await DNSPathsCheck().run(context)
            #expect(finding.status == .pass, "\(finding)")
            #expect(
                finding.seen.contains("the lab's DNS server \(lab.endpoints.dns) said 127.0.0.1"), "\(finding.seen)")
            #expect(finding.trace.contains { $0.text.contains("stands for the system resolver") })
            #expect(
                finding.reproduce.contains { $0.contains("+tcp") }
                    && finding.reproduce.contains { $0.contains("+notcp") })
            let transports = Set(lab.dnsQueries().map(\.transport))
            #expect(transports == ["udp", "tcp"], "the check asked over both transports")
        }
    }

    @Test func udp53FilteredWarnsThatUDPIsFilteredWhileTCPAnswers() async throws {
        try await DoctorLab.run(faults: [.udp53Filtered]) { context, lab in
            let finding = await DNSPathsCheck().run(context)
            #expect(finding.status == .warn, "\(finding)")
            #expect(
                finding.seen.hasPrefix("UDP 53 is filtered: the lab's DNS server \(lab.endpoints.dns)"),
                "\(finding.seen)")
            #expect(finding.seen.contains("answered over TCP"))
            #expect(finding.advice?.contains("UDP 53") == true)
        }
    }

    @Test func aDNSServerWhereNothingListensFailsNamingIt() async throws {
        try await DoctorLab.run { context, _ in
            var context = context
            let closed = DNSServer(address: "127.0.0.1", port: try closedPort())
            context.resolver.dnsServer = closed
            let finding = await DNSPathsCheck().run(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(finding.seen.contains("--dns-server \(closed) answered neither UDP nor TCP 53"), "\(finding.seen)")
            // The path that still answers is named too: it is the way out.
            #expect(finding.seen.contains("said 127.0.0.1"), "\(finding.seen)")
            #expect(finding.advice != nil)
        }
    }

    @Test func aDoHAnswerThatDiffersFromTheDNSServersFailsAsAHijackWithBothAnswers() async throws {
        try await DoctorLab.run { context, lab in
            var context = context
            // hijacked.lab.test: the lab's DNS server (a carrier's LocalDNS) answers the hijacker,
            // its HTTPDNS service (DoH here) the real site.
            context.resolver.provider = .dohJSON
            context.resolver.endpoint = lab.endpoints.httpdnsTLS + "/resolve"
            context.canaryName = "hijacked.lab.test"
            let finding = await DNSPathsCheck().run(context)
            // The local address presents another site's certificate where DoH's works: a hijack.
            #expect(finding.status == .fail, "\(finding)")
            #expect(
                finding.seen.contains("the lab's DNS server \(lab.endpoints.dns) said \(LabLocalDNS.hijackAddress)"),
                "\(finding.seen)")
            #expect(finding.seen.contains("HTTPDNS said 127.0.0.1"), "\(finding.seen)")
            #expect(finding.reproduce.contains { $0.hasPrefix("curl") && $0.contains("name=hijacked.lab.test") })
        }
    }

    @Test("a reply that cannot be read is its own outcome: a warning naming it, never 'answered alike'")
    func unreadableReplyIsNotAlike() {
        var reading = DNSPathsReading(voice: .commandLine)
        reading.add(
            "the lab's DNS server", udp: .addresses(["127.0.0.1"]), tcp: .addresses(["127.0.0.1"]), timeout: .seconds(2)
        )
        reading.add(
            "DoH", doh: .failed("the answer is not a DNS message ipdirect can read"))
        let finding = reading.finding(name: "plain.lab.test")
        #expect(finding.status == .warn, "\(finding.seen)")
        #expect(!finding.seen.contains("alike"), "\(finding.seen)")
        #expect(finding.seen.contains("DoH said the answer is not a DNS message ipdirect can read"), "\(finding.seen)")
    }
}

@Suite struct LocalAnswerTests {
    /// `ipdirect doctor --lab --host hijacked.lab.test`: the lab's DNS server (a carrier's LocalDNS)
    /// answers the hijacker's address, HTTPDNS the real site's.
    @Test func aHijackedHostFailsDNSPathsWithTheProbesEvidence() async throws {
        try await DoctorLab.run(hosts: ["hijacked.lab.test"]) { context, lab in
            let finding = await DNSPathsCheck().run(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(
                finding.seen.hasPrefix(
                    "The local answer for hijacked.lab.test is not HTTPDNS's: the lab's DNS server \(lab.endpoints.dns) said \(LabLocalDNS.hijackAddress), HTTPDNS said 127.0.0.1"
                ), "\(finding.seen)")
            #expect(
                finding.seen.contains(
                    "\(LabLocalDNS.hijackAddress) presented a certificate for isp-portal.lab.test, not hijacked.lab.test"
                ),
                "\(finding.seen)")
            #expect(finding.seen.contains("127.0.0.1 answered HTTP 200"), "\(finding.seen)")
            #expect(finding.seen.contains("the local DNS answer is wrong or hijacked"), "\(finding.seen)")
            #expect(finding.advice?.contains("ipdirect probe hijacked.lab.test") == true)
        }
    }

    @Test func aHostBothAnswerAlikePasses() async throws {
        try await DoctorLab.run(hosts: ["plain.lab.test"]) { context, _ in
            let finding = await DNSPathsCheck().run(context)
            #expect(finding.status == .pass, "\(finding)")
        }
    }
}

/// A loopback port nothing listens on (UDP nor TCP): bound for a moment to learn a free one.
func closedPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))

}

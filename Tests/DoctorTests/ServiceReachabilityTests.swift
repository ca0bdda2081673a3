// The service reachability check against the lab: every service address answers on a clean lab,
// one refuses under service-blocked, TLS is intercepted under tls-intercept, and a silent one is bounded.

import CurlTransport
import Doctor
import Foundation
import Lab
import NameResolution
import TestSupport
import Testing

@Suite struct ServiceReachabilityTests {
    private func check(_ context: DoctorContext) async -> DoctorFinding {
        await DoctorRunner(checks: DoctorChecks.all.filter { $0.id == .serviceReachability })
            .run(context, provider: "lab").findings[0]
    }

    @Test func onACleanLabBothServiceAddressesAnswerOverHTTPAndHTTPS() async throws {
        try await DoctorLab.run { context, _ in
            let finding = await check(context)
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("127.0.0.1") && finding.seen.contains("127.0.0.2"), "\(finding.seen)")
            #expect(finding.seen.contains("TLS"), "no TLS time in: \(finding.seen)")
            #expect(finding.advice == nil)
            // Both schemes of both addresses were asked, and every request can be repeated.
            #expect(
                finding.trace.filter { $0.direction == .sent && $0.text.hasPrefix("GET https://127.0.0.2") }.count == 1)
            #expect(
                finding.trace.filter { $0.direction == .sent && $0.text.hasPrefix("GET http://127.0.0.2") }.count == 1)
            #expect(finding.reproduce.count == 4, "\(finding.reproduce)")
        }
    }

    @Test func aDoHEndpointIsReachedAtItsOwnAddressAndScheme() async throws {
        try await DoctorLab.run { context, lab in
            var context = context
            context.resolver.provider = .doh
            context.resolver.endpoint = lab.endpoints.httpdnsTLS + "/dns-query"
            let finding = await check(context)
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("one address answers over HTTPS: 127.0.0.1"), "\(finding.seen)")
        }
    }

    @Test func anEndpointWhoseNameDoesNotResolveFailsNamingIt() async throws {
        try await DoctorLab.run { context, lab in
            var context = context
            context.resolver.provider = .doh
            // A name outside the lab's zone: its DNS server (the system resolver here) has no address.
            let port = try #require(URLComponents(string: lab.endpoints.httpdnsTLS)?.port)
            context.resolver.endpoint = "https://nowhere.lab.test:\(port)/dns-query"
            let finding = await check(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(finding.seen.contains("nowhere.lab.test did not resolve"), "\(finding.seen)")
            #expect(finding.advice?.contains("--endpoint") == true, "\(finding.advice ?? "")")
        }
    }

    @Test func aServiceAddressThatRefusesIsNamedAndTheOtherIsTheWayOut() async throws {
        try await DoctorLab.run(faults: [.serviceBlocked]) { context, _ in
            let finding = await check(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(finding.seen.contains("127.0.0.2 refused the connection over HTTP and HTTPS"), "\(finding.seen)")
            #expect(finding.seen.contains("127.0.0.1"), "\(finding.seen)")
            #expect(finding.advice?.contains("other service addresses (127.0.0.1)") == true, "\(finding.advice ?? "")")
        }
    }

    @Test func whenNoServiceAddressAnswersTheCheckFails() async throws {
        try await DoctorLab.run { context, _ in
            var context = context
            // A start address where nothing listens on the service's ports, and so no /ss list.
            context.resolver.endpoint = nil
            context.resolver.startIPs = ["https://127.0.0.5:\(context.lab?.servicePorts?.https ?? 0)"]
            let finding = await check(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(
                finding.seen == "No service address answers: 127.0.0.5 refused the connection over HTTP and HTTPS.",
                "\(finding.seen)")
            #expect(finding.advice?.contains("another network") == true)
        }
    }

    @Test func anAddressThatResetsItsConnectionsIsNamedWithReset() async throws {
        try await DoctorLab.run { context, lab in
            var context = context
            let ports = try #require(context.lab?.servicePorts)
            let resetting = try [ports.http, ports.https].map {
                try LoopbackListener(ip: "127.0.0.6", port: UInt16($0), silent: false)
            }
            for listener in resetting { listener.resetEach(upTo: 4) }
            context.resolver.endpoint = nil
            context.resolver.startIPs = ["https://127.0.0.6:\(ports.https)", lab.endpoints.httpdnsTLS]
            let finding = await check(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(finding.seen.contains("127.0.0.6 reset the connection over HTTP and HTTPS"), "\(finding.seen)")
            withExtendedLifetime(resetting) {}
        }
    }

    @Test func interceptedTLSFailsNamingTheIssuer() async throws {
        try await DoctorLab.run(faults: [.tlsIntercept]) { context, _ in
            let finding = await check(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(finding.seen.contains("intercepted"), "\(finding.seen)")
            #expect(finding.seen.contains("ipdirect lab interceptor CA"), "no issuer in: \(finding.seen)")
            #expect(finding.advice != nil)
        }
    }

    @Test func anAddressThatNeverAnswersIsReportedAsATimeoutWithinTheBound() async throws {
        try await DoctorLab.run(budget: .seconds(15)) { context, lab in
            var context = context
            let ports = try #require(context.lab?.servicePorts)
            // 127.0.0.3 on the service's ports: connections are never taken, so nothing answers.
            let silent = try [ports.http, ports.https].map {
                try LoopbackListener(ip: "127.0.0.3", port: UInt16($0), silent: true)
            }
            context.resolver.endpoint = nil
            context.resolver.startIPs = ["https://127.0.0.3:\(ports.https)", lab.endpoints.httpdnsTLS]
            let finding = await check(context)
            #expect(!finding.seen.contains("Did not finish"), "the check outlived its bound: \(finding.seen)")
            #expect(finding.status == .fail, "\(finding)")
            #expect(
                finding.seen.contains(
                    "127.0.0.3 timed out (\(ResolutionError.format(context.stepTimeout.inSeconds)) s) over HTTP and HTTPS"
                ),
                "\(finding.seen) \(finding.trace)")
            withExtendedLifetime(silent) {}
        }
    }
}

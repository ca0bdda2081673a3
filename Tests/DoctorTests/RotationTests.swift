// Service checks rotate through the service addresses as the SDKs do: a first address that does
// not answer is passed over, named, and the clock and account are read at the next one.

import Doctor
import Foundation
import Lab
import NameResolution
import Testing

@Suite struct RotationTests {
    private func check(_ id: DoctorCheckID, _ context: DoctorContext) async -> DoctorFinding {
        await DoctorRunner(checks: DoctorChecks.all.filter { $0.id == id }).run(context, provider: "lab").findings[0]
    }

    /// Discovery from the lab's start address, with `service-blocked`: `/ss` names 127.0.0.2 (which
    /// refuses) before the start address 127.0.0.1, so the provider's order asks 127.0.0.2 first.
    private func discovering(_ context: DoctorContext, _ lab: Lab) -> DoctorContext {
        var context = context
        context.resolver.startIPs = [lab.endpoints.httpdnsTLS]
        context.resolver.endpoint = nil
        return context
    }

    @Test func theClockIsReadAtTheFirstAddressThatAnswersNamingTheOneThatDidNot() async throws {
        try await DoctorLab.run(faults: [.serviceBlocked]) { context, lab in
            let finding = await check(.clock, discovering(context, lab))
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("Asked at 127.0.0.1"), "\(finding.seen)")
            #expect(finding.seen.contains("127.0.0.2 refused the connection"), "\(finding.seen)")
        }
    }

    @Test func theAccountIsAskedAtTheFirstAddressThatAnswersNamingTheOneThatDidNot() async throws {
        try await DoctorLab.run(faults: [.serviceBlocked]) { context, lab in
            let finding = await check(.account, discovering(context, lab))
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("127.0.0.2 refused the connection"), "\(finding.seen)")
        }
    }

    @Test(
        arguments: ProviderRegistry.all.filter {
            if case .none = $0.doctor.account { return true } else { return false }
        }.map(\.kind))
    func aProviderWithoutAnAccountHasNoAccountCheckToFail(_ kind: ProviderKind) async throws {
        try await DoctorLab.run { context, lab in
            var context = context
            context.resolver.provider = kind
            context.resolver.endpoint = lab.endpoints.httpdnsTLS + "/resolve"
            let finding = await check(.account, context)
            #expect(finding.status == .skipped, "\(finding)")
            #expect(finding.seen.contains("no account"), "\(finding.seen)")
            #expect(finding.advice == nil)
        }
    }
}

@Suite struct InterceptionAdviceTests {
    /// Discovery from the start address, checked against service_name as the SDKs check an IP.
    @Test func underTLSInterceptionTheClientAddressCheckDoesNotAdviseServiceName() async throws {
        try await DoctorLab.run(faults: [.tlsIntercept]) { context, lab in
            var context = context
            context.resolver.startIPs = [lab.endpoints.httpdnsTLS]
            context.resolver.endpoint = nil
            let finding = await DoctorRunner(checks: DoctorChecks.all.filter { $0.id == .clientAddress }).run(
                context, provider: "lab"
            ).findings[0]
            #expect(!finding.seen.contains("service_name"), "\(finding.seen)")
            #expect(finding.advice?.contains("service_name") != true, "\(finding)")
            #expect(finding.seen.contains("intercept"), "\(finding.seen)")
        }
    }
}

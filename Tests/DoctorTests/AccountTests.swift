// The account check against the lab: signed and unsigned requests, the canary end to end, an
// account that refuses unsigned requests (with and without a secret) and a wrong secret.

import Doctor
import Foundation
import Lab
import NameResolution
import Testing

@Suite struct AccountTests {
    private func check(_ context: DoctorContext) async -> DoctorFinding {
        await DoctorRunner(checks: DoctorChecks.all.filter { $0.id == .account }).run(context, provider: "lab")
            .findings[0]
    }

    @Test func onACleanLabTheAccountAnswersAndTheCanaryResolves() async throws {
        try await DoctorLab.run { context, _ in
            let finding = await check(context)
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("the canary \(context.canaryName) resolved to 127.0.0.1"), "\(finding.seen)")
            #expect(!finding.trace.contains { $0.text.contains(context.resolver.secret ?? "-") })
        }
    }

    @Test func theConfiguredCipherIsWhatTheServiceAnswers() async throws {
        try await DoctorLab.run { context, lab in
            var context = context
            context.resolver.cipher = .aesCBC
            context.resolver.key = lab.endpoints.keys.aesKey
            let finding = await check(context)
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("sealed with AES-CBC as configured"), "\(finding.seen)")
        }
    }

    @Test func anAccountRefusingUnsignedRequestsWithNoSecretFailsSayingSigningIsRequired() async throws {
        try await DoctorLab.run(faults: [.unsignedRefused]) { context, _ in
            var context = context
            context.resolver.secret = nil
            let finding = await check(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(finding.seen.contains("requires signed requests"), "\(finding.seen)")
            #expect(finding.seen.contains("UnsignedInterfaceDisabled"), "\(finding.seen)")
            #expect(finding.advice?.contains("IPDIRECT_HTTPDNS_SECRET") == true, "\(finding.advice ?? "")")
        }
    }

    @Test func anAccountRefusingUnsignedRequestsWithASecretPassesWithANote() async throws {
        try await DoctorLab.run(faults: [.unsignedRefused]) { context, _ in
            let finding = await check(context)
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("signing is required"), "\(finding.seen)")
        }
    }

    @Test func aWrongSecretFailsNamingInvalidSignature() async throws {
        try await DoctorLab.run { context, _ in
            var context = context
            context.resolver.secret = "00112233445566778899aabbccddeeff"
            let finding = await check(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(finding.seen.contains("InvalidSignature"), "\(finding.seen)")
            #expect(finding.seen.contains("s=[redacted]"), "\(finding.seen)")
        }
    }

    @Test func underClockSkewAndServiceBlockedOnlyTheirChecksFail() async throws {
        try await DoctorLab.run(faults: [.clockSkew, .serviceBlocked]) { context, _ in
            let report = await DoctorRunner(
                checks: DoctorChecks.all.filter { [.serviceReachability, .clock, .account].contains($0.id) }
            ).run(context, provider: "lab")
            let statuses = Dictionary(uniqueKeysWithValues: report.findings.map { ($0.check, $0.status) })
            #expect(statuses == [.serviceReachability: .fail, .clock: .fail, .account: .pass], "\(report.findings)")
        }
    }
}

@Suite struct LegacyAccountTests {
    @Test func theLegacyAPIIsSignedAndAnsweredOnACleanLab() async throws {
        try await DoctorLab.run { context, _ in
            var context = context
            context.resolver.provider = .alicloudLegacy
            let report = await DoctorRunner(
                checks: DoctorChecks.all.filter { [.serviceReachability, .clock, .account].contains($0.id) }
            ).run(context, provider: "lab")
            #expect(report.findings.map(\.status) == [.pass, .pass, .pass], "\(report.findings)")
            let account = try #require(report.findings.last)
            #expect(account.trace.contains { $0.text.contains("/139450/sign_d?") }, "\(account.trace)")
        }
    }
}

// The clock check against the lab: a clean lab's service agrees with this machine, and under
// clock-skew its clock runs ahead far enough that signed requests are refused, the offset named.

import Doctor
import Foundation
import Lab
import NameResolution
import Testing

@Suite struct ClockTests {
    private func check(_ context: DoctorContext) async -> DoctorFinding {
        await DoctorRunner(checks: DoctorChecks.all.filter { $0.id == .clock }).run(context, provider: "lab").findings[
            0]
    }

    @Test func onACleanLabTheClocksAgree() async throws {
        try await DoctorLab.run { context, _ in
            let finding = await check(context)
            #expect(finding.status == .pass, "\(finding)")
            #expect(finding.seen.contains("a signed request lives 600 s"), "\(finding.seen)")
            #expect(finding.trace.contains { $0.text.hasPrefix("Date: ") })
        }
    }

    @Test func aServiceClockAheadFailsNamingTheOffsetAndTheRefusedRequest() async throws {
        try await DoctorLab.run(faults: [.clockSkew]) { context, _ in
            let finding = await check(context)
            #expect(finding.status == .fail, "\(finding)")
            let offset = try #require(
                finding.seen.firstMatch(of: /clock is (\d+) s ahead of this machine's/).flatMap { Int($0.1) },
                "\(finding.seen)")
            #expect(abs(offset - LabOptions.clockSkewSeconds) <= 3, "\(finding.seen)")
            // The refused request is shown, its signature masked.
            #expect(finding.seen.contains("SignatureExpired"), "\(finding.seen)")
            #expect(finding.seen.contains("s=[redacted]"), "\(finding.seen)")
            #expect(!finding.seen.contains(context.resolver.secret ?? "-"))
            #expect(finding.advice?.contains("NTP") == true)
        }
    }

    /// The clock check against a lab whose service clock is `skew` seconds off this machine's.
    private func check(skew: Int) async throws -> DoctorFinding {
        var options = LabOptions()
        options.clock = { Int(Date().timeIntervalSince1970) + skew }
        return try await withLab(options) { lab in await check(DoctorLab.context(lab)) }
    }

    @Test func aServiceClockAMinuteAheadWarnsAndSignedRequestsStillWork() async throws {
        let finding = try await check(skew: 60)
        #expect(finding.status == .warn, "\(finding)")
        #expect(finding.seen.contains("s ahead of this machine's"), "\(finding.seen)")
        #expect(!finding.seen.contains("refused"), "\(finding.seen)")
    }

    @Test func aServiceClockBehindByMoreThanTheWindowWarnsSinceTheExpiryStaysAhead() async throws {
        // Behind, the service sees the expiry further ahead, not past: v2 refuses only a day ahead.
        let finding = try await check(skew: -900)
        #expect(finding.status == .warn, "\(finding)")
        #expect(finding.seen.contains("s behind this machine's"), "\(finding.seen)")
    }
}

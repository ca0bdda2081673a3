// The interception check against the lab: its connectivity check answers 204 and nothing, and
// under `captive-portal` a redirect to the portal's sign-in page, which the check names.

import CurlTransport
import Foundation
import Lab
import Testing

@testable import Doctor

@Suite struct InterceptionCheckTests {
    @Test func theLabsConnectivityCheckAnswering204Passes() async throws {
        try await DoctorLab.run { context, lab in
            let finding = await InterceptionCheck().run(context)
            #expect(finding.status == .pass, "\(finding)")
            let url = try #require(lab.endpoints.connectivityCheckURL)
            #expect(finding.seen.hasPrefix("\(url) answered 204 with an empty body"), "\(finding.seen)")
            // curl waits as long as the check's step did: a fifth of the run's bound.
            let step = Int(context.stepTimeout.inSeconds.rounded(.up))
            #expect(finding.reproduce == ["curl -sS -i --max-time \(step) \(url)"])
        }
    }

    @Test func aCaptivePortalFailsNamingTheRedirect() async throws {
        try await DoctorLab.run(faults: [.captivePortal]) { context, lab in
            let finding = await InterceptionCheck().run(context)
            #expect(finding.status == .fail, "\(finding)")
            #expect(finding.seen.contains("answered 302 instead of 204"), "\(finding.seen)")
            #expect(finding.seen.contains("redirecting to 'http://127.0.0.1:"), "\(finding.seen)")
            #expect(finding.seen.contains("/portal/login'"), "\(finding.seen)")
            #expect(finding.advice?.contains("sign in to the network") == true)
            #expect(lab.originRequests().contains { $0.path == "/generate_204" && $0.status == 302 })
        }
    }
}

// The service list (/ss) as the C SDK 2.2.5 asks it when it has a secret (signed, s = md5(n-secret-t)),
// and service discovery for the legacy API, against the lab that checks the signature.
import ConfigurationSources
import Foundation
import Lab
import Testing

@testable import NameResolution

@Suite("Signed /ss and legacy discovery")
struct SignedServiceListTests {
    /// alicloud-legacy with no endpoint and a secret: discovery starts at the lab's HTTPDNS address.
    static func discovering(_ lab: Lab, secret: String) -> ResolverConfiguration {
        var config = ResolverConfiguration(
            provider: .alicloudLegacy, account: lab.endpoints.account, secret: secret, timeout: 10)
        config.startIPs = [lab.endpoints.httpdns]
        return config
    }

    @Test("a signed legacy account asks /ss signed, the lab accepts it, and queries go to the service IP it names")
    func signedDiscovery() async throws {
        try await withLab { lab in
            let provider = try ProviderFactory.make(Self.discovering(lab, secret: lab.endpoints.secret))
            let answer = try await provider.resolve("sni-a.lab.test", families: [.v4])
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(answer.server == "127.0.0.2")
            let asked = lab.httpdnsQueries()
            #expect(asked.map(\.format) == ["alicloud-ss", "alicloud-signed"], "\(asked.map(\.path))")
            let list = try #require(asked.first)
            #expect(list.status == 200)
            #expect(list.path.contains("&s=") && list.path.contains("&t=") && list.path.contains("&n="), "\(list.path)")
        }
    }

    @Test("a wrong secret: the signed /ss is refused with the service's code, and the start IP is asked instead")
    func wrongSecret() async throws {
        try await withLab { lab in
            let provider = try ProviderFactory.make(Self.discovering(lab, secret: "not-the-secret"))
            await #expect(throws: ResolutionError.self) {
                try await provider.resolve("sni-a.lab.test", families: [.v4])
            }
            let asked = lab.httpdnsQueries()
            #expect(asked.map(\.format) == ["alicloud-ss", "alicloud-signed"], "\(asked.map(\.path))")
            #expect(asked.allSatisfy { $0.status >= 400 })
        }
    }

    @Test("the signed /ss carries the C SDK's s, t and n for its vector's secret, clock and nonce")
    func vectorSignature() {
        // alibaba.json, c_sdk_2_2_5_legacy "signed service list".
        let discovery = AliCloudServiceIPs.Discovery(
            starts: [], account: "100000", sessionID: "4T9WTkZc1ObW",
            transport: HTTPDNSTransport(timeout: 2, caFile: nil), serviceName: "203.107.1.1",
            legacySecret: "mysecret", now: { Date(timeIntervalSince1970: 1_795_606_800) }, nonce: { "72b428889a8d" })
        let target = AliCloudServiceIPs.serviceListTarget(discovery)
        #expect(target.hasPrefix("/100000/ss?region=global&platform="), "\(target)")
        #expect(
            target.hasSuffix("&sid=4T9WTkZc1ObW&s=8c649d3d2d6b8ccdc06384ce3d4068ec&t=1795606800&n=72b428889a8d"),
            "\(target)")
    }

    @Test("without a secret, /ss goes unsigned, as the iOS SDK asks it")
    func unsigned() {
        let discovery = AliCloudServiceIPs.Discovery(
            starts: [], account: "100000", sessionID: "4T9WTkZc1ObW",
            transport: HTTPDNSTransport(timeout: 2, caFile: nil), serviceName: "203.107.1.1")
        let target = AliCloudServiceIPs.serviceListTarget(discovery)
        #expect(target.hasSuffix("&sid=4T9WTkZc1ObW"), "\(target)")
    }
}

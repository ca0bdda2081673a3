// The legacy API's batch as the C SDK 2.2.5 sends it: a signed account asks several names in one
// /sign_resolve request (pre-resolve, `resolve a b c`), the lab checks it, and the answer is read.
import Foundation
import Lab
import NameResolutionTesting
import Testing

@testable import NameResolution

@Suite("Signed batch (/sign_resolve)")
struct SignedBatchTests {
    static let names = ["sni-a.lab.test", "dual.lab.test", "split-ttl.lab.test"]

    @Test("a signed legacy account pre-resolves several names in one /sign_resolve request the lab accepts")
    func preResolveSigned() async throws {
        try await withLab { lab in
            var configuration = LabFormat.alicloudLegacySigned.configuration(lab)
            configuration.family = .both
            let cache = ResolverCache(
                configuration: configuration, provider: try ProviderFactory.make(configuration), clock: ManualClock())
            await cache.prefetch(Self.names)
            let asked = lab.httpdnsQueries()
            #expect(asked.map(\.format) == ["alicloud-batch-signed"], "\(asked.map(\.path))")
            #expect(asked.first?.status == 200)
            #expect(cache.lookup("dual.lab.test", family: .v6)?.ips == ["::1"])
            #expect(cache.lookup("split-ttl.lab.test", family: .v4)?.ttl == 120)
        }
    }

    @Test("resolve of several names asks them in one signed batch, and each shows what the cache held")
    func resolveSeveral() async throws {
        try await withLab { lab in
            var configuration = LabFormat.alicloudLegacySigned.configuration(lab)
            configuration.family = .v4
            let cache = ResolverCache(configuration: configuration, provider: try ProviderFactory.make(configuration))
            let results = await cache.resolve(Self.names, afresh: true)
            #expect(results.map(\.host) == Self.names)
            #expect(results.allSatisfy { $0.httpdns.error == nil && $0.httpdns.ipv4 == ["127.0.0.1"] })
            #expect(results.allSatisfy { $0.cached?.held == false })
            #expect(lab.httpdnsQueries().map(\.format) == ["alicloud-batch-signed"])
        }
    }

    @Test("a wrong secret: /sign_resolve is refused with InvalidSignature, told for each name")
    func wrongSecret() async throws {
        try await withLab { lab in
            var configuration = LabFormat.alicloudLegacySigned.configuration(lab)
            configuration.secret = "not-the-secret"
            let provider = try ProviderFactory.make(configuration)
            let results = await provider.resolveBatch(["sni-a.lab.test", "dual.lab.test"], families: [.v4])
            for name in ["sni-a.lab.test", "dual.lab.test"] {
                let result = try #require(results[name])
                guard case .failure(let error) = result else {
                    Issue.record("\(name) answered with a wrong secret")
                    continue
                }
                #expect(error.description.hasPrefix("signature rejected: check the secret"), "\(error)")
            }
            let asked = lab.httpdnsQueries()
            #expect(asked.map(\.format) == ["alicloud-batch-signed"])
            #expect(asked.allSatisfy { $0.status >= 400 })
        }
    }

    @Test("the signed batch carries the C SDK's signature for its vector's names, secret and t")
    func vectorSignature() throws {
        let provider = AliCloudProvider(
            endpoint: "http://127.0.0.1", account: "100000", secret: "mysecret",
            transport: HTTPDNSTransport(timeout: 2, caFile: nil))
        // alibaba.json, c_sdk_2_2_5_legacy "signed batch": t=1795610804, s=220fa5bd...; the names
        // comma-joined in host= (URL-encoded) and in the signed string (as they are).
        let t = 1_795_610_804
        let url =
            "http://127.0.0.1"
            + provider.batchTarget(
                for: ["www.aliyun.com", "www.taobao.com"], families: [.v4, .v6],
                now: Date(timeIntervalSince1970: TimeInterval(t - SDKProfile.ipdirect.signatureLifetime)))
        #expect(
            url
                == "http://127.0.0.1/100000/sign_resolve?host=www.aliyun.com%2Cwww.taobao.com&query=4,6"
                + "&t=\(t)&s=220fa5bd73a7f5090c31c7076bf43cba")
    }

    @Test("the legacy batch answer the C SDK parses: one record per type, each with its TTL and origin_ttl")
    func vectorAnswer() throws {
        let body = #"""
            {"dns":[{"host":"www.aliyun.com","type":1,"ips":["1.1.1.1"],"ttl":60,"origin_ttl":60},
            {"host":"www.aliyun.com","type":28,"ips":["2001:db8::1"],"ttl":60,"origin_ttl":60}]}
            """#
        let results = try AliCloudProvider.parseBatch(
            Array(body.utf8), hosts: ["www.aliyun.com"], families: [.v4, .v6], ms: 0)
        let answer = try #require(try results["www.aliyun.com"]?.get())
        #expect(answer.ipv4 == ["1.1.1.1"])
        #expect(answer.ipv6 == ["2001:db8::1"])
        #expect(answer.ttl == FamilyTTL(v4: 60, v6: 60))
        #expect(answer.originTTL == FamilyTTL(v4: 60, v6: 60))
    }
}

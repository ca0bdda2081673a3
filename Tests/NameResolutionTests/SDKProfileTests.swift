// The SDK wire profiles against the requests Alibaba's SDKs sent (Tests/SDKVectors/alibaba.json):
// each request rebuilt from its inputs under the matching profile (fixed clock, sid and nonce) is
// the captured one byte for byte, and the lab, set up as that SDK's user, answers it.
import ConfigurationSources
import Foundation
import FoundationGaps
import Lab
import Testing

@testable import NameResolution

@Suite("SDK wire profiles")
struct SDKProfileTests {
    /// The vector file's sections, as captured.
    static func vectors() throws -> [String: Any] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("SDKVectors/alibaba.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
    }

    /// The captured targets of one section, by their `what`.
    static func targets(_ section: String) throws -> [String: String] {
        let requests = try #require((try vectors()[section] as? [String: Any])?["requests"] as? [[String: String]])
        return Dictionary(uniqueKeysWithValues: requests.compactMap { r in r["what"].map { ($0, r["target"] ?? "") } })
    }

    static let transport = HTTPDNSTransport(timeout: 10, caFile: nil)
    static let names = ["www.aliyun.com", "www.taobao.com"]

    /// A C SDK 2.2.5 request as the c-2.2 profile builds it.
    struct CRequest: Sendable {
        var what: String
        var sid: String
        var signed: Bool
        var batch: Bool
        var families: Set<IPFamily>
        /// When the SDK sent it (a signed request's t less 1800; any time for an unsigned one).
        var sentAt: Int
    }

    static let cRequests = [
        CRequest(
            what: "signed single, A+AAAA", sid: "4T9WTkZc1ObW", signed: true, batch: false, families: [.v4, .v6],
            sentAt: 1_795_608_600 - 1800),
        CRequest(
            what: "signed batch", sid: "UPsRvTlphBic", signed: true, batch: true, families: [.v4, .v6],
            sentAt: 1_795_610_804 - 1800),
        CRequest(
            what: "unsigned single, A only", sid: "owQEEjRj8QR8", signed: false, batch: false, families: [.v4],
            sentAt: 1_795_606_800),
        CRequest(
            what: "unsigned batch, A only", sid: "Z0cPdiS4BQjH", signed: false, batch: true, families: [.v4],
            sentAt: 1_795_606_800),
    ]

    static func cProvider(_ request: CRequest, base: String) -> AliCloudProvider {
        AliCloudProvider(
            servers: AliCloudServiceIPs(endpoint: base), account: "100000", secret: request.signed ? "mysecret" : nil,
            transport: transport, profile: .c22, sessionID: request.sid,
            now: { Date(timeIntervalSince1970: TimeInterval(request.sentAt)) })
    }

    @Test("c-2.2: each captured C SDK request, rebuilt byte for byte, is answered by the lab", arguments: cRequests)
    func cSDK(request: CRequest) async throws {
        let captured = try #require(try Self.targets("c_sdk_2_2_5_legacy")[request.what])
        let provider = Self.cProvider(request, base: "http://unused")
        let target =
            request.batch
            ? provider.batchTarget(for: Self.names, families: request.families)
            : provider.target(for: Self.names[0], families: request.families)
        #expect(target == captured)

        let options = LabOptions(account: "100000", secret: "mysecret", clock: { request.sentAt })
        try await withLab(options) { lab in
            let sent = Self.cProvider(request, base: lab.endpoints.httpdns)
            if request.batch {
                _ = await sent.resolveBatch(Self.names, families: request.families)
            } else {
                _ = try? await sent.resolve(Self.names[0], families: request.families)
            }
            let asked = try #require(lab.httpdnsQueries().first)
            #expect(asked.path == captured)
            #expect(asked.status == 200, "\(asked.format)")
            #expect(asked.userAgent == "alibabacloud-httpdns-c-sdk-2.2.5")
        }
    }

    @Test("c-2.2: the signed service list, rebuilt byte for byte, is answered by the lab")
    func cSDKServiceList() async throws {
        let captured = try #require(try Self.targets("c_sdk_2_2_5_legacy")["signed service list"])
        func discovery(_ starts: [AliCloudServiceIPs.Base]) -> AliCloudServiceIPs.Discovery {
            AliCloudServiceIPs.Discovery(
                starts: starts, account: "100000", sessionID: "4T9WTkZc1ObW", transport: Self.transport,
                serviceName: "203.107.1.1", legacySecret: "mysecret", profile: .c22,
                now: { Date(timeIntervalSince1970: 1_795_606_800) }, nonce: { "72b428889a8d" })
        }
        #expect(AliCloudServiceIPs.serviceListTarget(discovery([])) == captured)
        try await withLab(LabOptions(account: "100000", secret: "mysecret", clock: { 1_795_606_800 })) { lab in
            let start = AliCloudServiceIPs.Base(url: lab.endpoints.httpdns, label: "lab")
            let found = await AliCloudServiceIPs.discover(
                discovery([start]), problem: Locked(nil), fallingBackTo: "nothing")
            #expect(found?.isEmpty == false)
            let asked = try #require(lab.httpdnsQueries().first)
            #expect(asked.path == captured)
            #expect(asked.status == 200)
        }
    }

    /// A Node.js SDK 1.0.0 request as the node-1.0 profile builds it.
    struct NodeRequest: Sendable {
        var what: String
        var signed: Bool
        var families: Set<IPFamily>
        var sentAt: Int
    }

    static let nodeRequests = [
        NodeRequest(what: "signed, A+AAAA", signed: true, families: [.v4, .v6], sentAt: 1_795_608_600 - 300),
        NodeRequest(what: "unsigned, A only", signed: false, families: [.v4], sentAt: 1_795_606_800),
    ]

    static func v2Provider(
        _ profile: SDKProfile, base: String, signed: Bool, sentAt: Int, sessionID: String = "4T9WTkZc1ObW"
    ) throws -> AliCloudV2Provider {
        try AliCloudV2Provider(
            servers: AliCloudServiceIPs(endpoint: base), account: "100000",
            secret: signed ? "00112233445566778899aabbccddeeff" : nil, cipher: .none, key: nil, sdns: [:],
            transport: transport, now: { Date(timeIntervalSince1970: TimeInterval(sentAt)) }, profile: profile,
            sessionID: sessionID)
    }

    @Test(
        "node-1.0: each captured Node.js SDK request, rebuilt byte for byte, is answered by the lab",
        arguments: nodeRequests)
    func nodeSDK(request: NodeRequest) async throws {
        let captured = try #require(try Self.targets("nodejs_sdk_1_0_0_v2")[request.what])
        let provider = try Self.v2Provider(
            .node10, base: "http://unused", signed: request.signed, sentAt: request.sentAt)
        #expect(try provider.target(for: [Self.names[0]], families: request.families) == captured)

        let options = LabOptions(
            account: "100000", secret: "00112233445566778899aabbccddeeff", clock: { request.sentAt })
        try await withLab(options) { lab in
            let sent = try Self.v2Provider(
                .node10, base: lab.endpoints.httpdns, signed: request.signed, sentAt: request.sentAt)
            _ = try? await sent.resolve(Self.names[0], families: request.families)
            let asked = try #require(lab.httpdnsQueries().first)
            #expect(asked.path == captured)
            #expect(asked.status == 200, "\(asked.format)")
            #expect(asked.userAgent == "httpdns-nodejs-sdk/1.0.0")
        }
    }

    @Test("ios-3.4: the request signs the string the iOS SDK signs, and the lab answers it")
    func iOSSDK() async throws {
        // alibaba.json ios_sdk_3_4_2_v2.signature_check: exp 1795608600 = now + 600.
        let sentAt = 1_795_608_600 - 600
        let provider = try Self.v2Provider(.ios34, base: "http://unused", signed: true, sentAt: sentAt)
        let target = try provider.target(for: [Self.names[0]], families: [.v4, .v6])
        #expect(
            target
                == "/v2/d?id=100000&m=0&exp=1795608600&v=1.0&dn=www.aliyun.com&q=4%2C6"
                + "&s=d1df9808369892b4888bb0a26c7e4c1b998570f73c65585d5f87429a1f4c094c"
                + "&sid=4T9WTkZc1ObW&net=wifi&sdk=ios_3.4.2")
        let options = LabOptions(account: "100000", secret: "00112233445566778899aabbccddeeff", clock: { sentAt })
        try await withLab(options) { lab in
            let sent = try Self.v2Provider(.ios34, base: lab.endpoints.httpdns, signed: true, sentAt: sentAt)
            _ = try? await sent.resolve(Self.names[0], families: [.v4, .v6])
            let asked = try #require(lab.httpdnsQueries().first)
            #expect(asked.path == target)
            #expect(asked.status == 200, "\(asked.format)")
            #expect(asked.userAgent?.hasPrefix("HttpdnsSDK/3.4.2 ") == true)
        }
    }

    @Test("android-2.6: id m dn q, then v exp s, then sdk and sid, as ResolveHostHelper builds it; the lab answers")
    func androidSDK() async throws {
        let sentAt = 1_795_608_000
        let provider = try Self.v2Provider(.android26, base: "http://unused", signed: true, sentAt: sentAt)
        let target = try provider.target(for: [Self.names[0]], families: [.v4, .v6])
        // The same signed set as iOS (id m dn q v exp), so the same signature.
        #expect(
            target
                == "/v2/d?id=100000&m=0&dn=www.aliyun.com&q=4,6&v=1.0&exp=1795608600"
                + "&s=d1df9808369892b4888bb0a26c7e4c1b998570f73c65585d5f87429a1f4c094c"
                + "&sdk=android_2.6.0&sid=4T9WTkZc1ObW")
        let unsignedV4 = try Self.v2Provider(.android26, base: "http://unused", signed: false, sentAt: sentAt)
        #expect(
            try unsignedV4.target(for: [Self.names[0]], families: [.v4])
                == "/v2/d?id=100000&m=0&dn=www.aliyun.com&v=1.0&exp=1795608600&sdk=android_2.6.0&sid=4T9WTkZc1ObW")
        let options = LabOptions(account: "100000", secret: "00112233445566778899aabbccddeeff", clock: { sentAt })
        try await withLab(options) { lab in
            let sent = try Self.v2Provider(.android26, base: lab.endpoints.httpdns, signed: true, sentAt: sentAt)
            _ = try? await sent.resolve(Self.names[0], families: [.v4, .v6])
            let asked = try #require(lab.httpdnsQueries().first)
            #expect(asked.path == target)
            #expect(asked.status == 200, "\(asked.format)")
        }
    }

    @Test("the default profile says it is ipdirect: User-Agent ipdirect/VERSION on every HTTPDNS request")
    func ipdirectUserAgent() async throws {
        try await withLab { lab in
            for format in [LabFormat.alicloud, .alicloudLegacy, .tencent, .dohResolve, .dohWire] {
                _ = try? await format.provider(lab).resolve("sni-a.lab.test", families: [.v4])
            }
            let agents = Set(lab.httpdnsQueries().map(\.userAgent))
            #expect(agents == ["ipdirect/\(IPDirectVersion.string)"], "\(agents)")
        }
    }

    @Test("a profile whose SDK speaks the other API is refused with the provider to use")
    func wrongAPI() {
        var configuration = ResolverConfiguration(provider: .alicloud, endpoint: "http://127.0.0.1", account: "1")
        configuration.sdk = .c22
        let legacySDK = ResolutionError.setup(.sdkSpeaksAnotherAPI(.c22, provider: .alicloud))
        #expect(throws: legacySDK) { try ProviderFactory.make(configuration) }
        #expect(legacySDK.description == "sdk = \"c-2.2\" speaks the legacy API: use provider = \"alicloud-legacy\"")
        #expect(
            ConfigurationField.phrased(legacySDK) == "--sdk c-2.2 speaks the legacy API: use --provider alicloud-legacy"
        )
        configuration.provider = .alicloudLegacy
        configuration.sdk = .node10
        let v2SDK = ResolutionError.setup(.sdkSpeaksAnotherAPI(.node10, provider: .alicloudLegacy))
        #expect(throws: v2SDK) { try ProviderFactory.make(configuration) }
        #expect(ConfigurationField.phrased(v2SDK) == "--sdk node-1.0 speaks the v2 API: use --provider alicloud")
    }
}

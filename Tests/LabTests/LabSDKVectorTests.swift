// The lab against the requests Alibaba's official SDKs sent (Tests/SDKVectors/alibaba.json, captured
// on the wire): each is answered as the real service answers it, and a wrong signature is refused.
import CurlTransport
import Foundation
import Lab
import Testing

/// One SDK's section of `alibaba.json`: the account and secret it was set up with, what it sent.
struct SDKVectorSection: Sendable {
    /// The section's key, e.g. `nodejs_sdk_1_0_0_v2`.
    var name: String
    var account: String
    /// `secret` (legacy API, used as text) or `secret_hex` (v2, hex-decoded for the HMAC).
    var secret: String
    /// How many seconds after sending a signed request its `t`/`exp` lies, from the section's
    /// rules (`now + 1800` for the C SDK's sign_d/sign_resolve, `now + 300` for Node.js's exp).
    var lifetime: Int
    /// Each request's target, path and query, as it went on the wire.
    var targets: [String]

    /// Every section of the file that holds captured requests.
    static func all() throws -> [SDKVectorSection] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("SDKVectors/alibaba.json")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        return try object.keys.sorted().compactMap { name -> SDKVectorSection? in
            guard let section = object[name] as? [String: Any], let requests = section["requests"] as? [[String: Any]]
            else { return nil }
            let rules = section["rules"] as? [String: String] ?? [:]
            let stated = [rules["t"], rules["exp"]].compactMap { $0 }.compactMap(Self.lifetime(in:))
            return SDKVectorSection(
                name: name, account: try #require(section["account"] as? String),
                secret: try #require((section["secret"] ?? section["secret_hex"]) as? String),
                lifetime: try #require(stated.first), targets: requests.compactMap { $0["target"] as? String })
        }
    }

    /// The N of a rule that reads "now + N ...".
    private static func lifetime(in rule: String) -> Int? {
        guard let range = rule.range(of: "now + ") else { return nil }
        return Int(rule[range.upperBound...].prefix { $0.isNumber })
    }

    /// When the SDK sent `target`: its signed expiry less the lifetime, or `t` itself for `/ss`
    /// (signed with `t` = now); nil for an unsigned request, which no clock affects.
    func sentAt(_ target: String) -> Int? {
        let query = URLComponents(string: target)?.queryItems ?? []
        func value(_ name: String) -> Int? { query.first { $0.name == name }?.value.flatMap { Int($0) } }
        guard query.contains(where: { $0.name == "s" }) else { return nil }
        if target.hasPrefix("/\(account)/ss?") { return value("t") }
        return (value("t") ?? value("exp")).map { $0 - lifetime }
    }
}

/// A clock a test sets, for the lab to check signatures against.
final class SettableClock: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds = Int(Date().timeIntervalSince1970)

    var now: Int {
        get { lock.withLock { seconds } }
        set { lock.withLock { seconds = newValue } }
    }
}

@Suite("Lab against the official SDKs' requests")
struct LabSDKVectorTests {
    private func get(_ lab: Lab, _ target: String) async throws -> TransferRecord {
        try await fetch(HTTPRequest(url: lab.endpoints.httpdns + target))
    }

    /// The lab as the SDK's user would have it: the vector's account and secret, a settable clock.
    private func withVectorLab(
        _ section: SDKVectorSection, _ body: (Lab, SettableClock) async throws -> Void
    )
        async throws
    {
        let clock = SettableClock()
        try await withLab(LabOptions(account: section.account, secret: section.secret, clock: { clock.now })) {
            try await body($0, clock)
        }
    }

    @Test("every request the C and Node.js SDKs sent is answered, signed ones at the time they were signed")
    func everyRequestAnswered() async throws {
        let sections = try SDKVectorSection.all()
        #expect(sections.map(\.name) == ["c_sdk_2_2_5_legacy", "nodejs_sdk_1_0_0_v2"])
        for section in sections {
            try await withVectorLab(section) { lab, clock in
                for target in section.targets {
                    if let sent = section.sentAt(target) { clock.now = sent }
                    let response = try await get(lab, target)
                    let body = response.jsonObject ?? [:]
                    #expect(
                        response.status == 200,
                        "\(section.name) \(target): \(String(decoding: response.body, as: UTF8.self))")
                    // An answer, in whichever shape the endpoint has: v2 `data`, legacy `host`,
                    // batch `dns`, service list `service_ip`.
                    #expect(
                        ["data", "host", "dns", "service_ip"].contains { body[$0] != nil },
                        "\(section.name) \(target): \(String(decoding: response.body, as: UTF8.self))")
                }
            }
        }
    }

    @Test("a vector's signed request altered or sent too late is refused as the service refuses it")
    func vectorsTampered() async throws {
        let sections = try SDKVectorSection.all()
        let node = try #require(sections.first { $0.name == "nodejs_sdk_1_0_0_v2" })
        let signed = try #require(node.targets.first { $0.contains("&s=") })
        try await withVectorLab(node) { lab, clock in
            clock.now = try #require(node.sentAt(signed))
            // A signable parameter the SDK did not sign (`v`) changes what the signature covers.
            let withV = try await get(lab, signed + "&v=1.0")
            #expect(withV.status == 403)
            #expect(withV.jsonObject?["code"] as? String == "InvalidSignature")
            let otherName = try await get(
                lab, signed.replacingOccurrences(of: "dn=www.aliyun.com", with: "dn=a.lab.test"))
            #expect(otherName.jsonObject?["code"] as? String == "InvalidSignature")
            let noExpiry = try await get(lab, signed.replacingOccurrences(of: "&exp=", with: "&xexp="))
            #expect(noExpiry.status == 400)
            #expect(noExpiry.jsonObject?["code"] as? String == "MissingArgument")
            clock.now += 3600
            let late = try await get(lab, signed)
            #expect(late.jsonObject?["code"] as? String == "SignatureExpired")
        }
        let c = try #require(sections.first { $0.name == "c_sdk_2_2_5_legacy" })
        let serviceList = try #require(c.targets.first { $0.hasPrefix("/\(c.account)/ss?") })
        try await withVectorLab(c) { lab, clock in
            clock.now = try #require(c.sentAt(serviceList))
            let wrongNonce = try await get(lab, serviceList.replacingOccurrences(of: "&n=", with: "&n=0"))
            #expect(wrongNonce.status == 403)
            #expect(wrongNonce.jsonObject?["code"] as? String == "InvalidSignature")
        }
    }

    @Test("signed batch /sign_resolve: md5(\"a,b-secret-t\") answered in the batch shape, a wrong secret refused")
    func signedBatch() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let hosts = "dual.lab.test,single.lab.test"
            let expiry = Int(Date().timeIntervalSince1970) + 1800
            let good = md5Hex("\(hosts)-\(e.secret)-\(expiry)")
            let signed = try await get(lab, "/\(e.account)/sign_resolve?host=\(hosts)&query=4,6&t=\(expiry)&s=\(good)")
            #expect(signed.status == 200)
            let entries = try #require(signed.jsonObject?["dns"] as? [[String: Any]])
            #expect(
                entries.map {
                    "\($0["host"] as? String ?? "?")/\($0["type"] as? Int ?? 0)=\($0["ips"] as? [String] ?? [])"
                }
                    == [
                        "dual.lab.test/1=[\"127.0.0.1\"]", "dual.lab.test/28=[\"::1\"]",
                        "single.lab.test/1=[\"127.0.0.1\"]", "single.lab.test/28=[]",
                    ])
            #expect(entries.allSatisfy { $0["ttl"] is Int })

            let wrongSecret = md5Hex("\(hosts)-not-\(e.secret)-\(expiry)")
            let refused = try await get(
                lab, "/\(e.account)/sign_resolve?host=\(hosts)&query=4,6&t=\(expiry)&s=\(wrongSecret)")
            #expect(refused.status == 403)
            #expect(refused.jsonObject?["code"] as? String == "InvalidSignature")

            let past = expiry - 3600
            let old = try await get(
                lab, "/\(e.account)/sign_resolve?host=\(hosts)&t=\(past)&s=\(md5Hex("\(hosts)-\(e.secret)-\(past)"))")
            #expect(old.jsonObject?["code"] as? String == "SignatureExpired")

            let unsigned = try await get(lab, "/\(e.account)/sign_resolve?host=\(hosts)")
            #expect(unsigned.status == 400)
            #expect(unsigned.jsonObject?["code"] as? String == "MissingArgument")
        }
    }

    @Test(
        "signed /ss: md5(n-secret-t) accepted, a wrong signature refused with InvalidSignature, unsigned still served")
    func signedServiceList() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let now = Int(Date().timeIntervalSince1970)
            let nonce = "72b428889a8d"
            let base = "/\(e.account)/ss?region=global&platform=linux&sdk_version=x&sid=4T9WTkZc1ObW"
            let good = md5Hex("\(nonce)-\(e.secret)-\(now)")
            let signed = try await get(lab, base + "&s=\(good)&t=\(now)&n=\(nonce)")
            #expect(signed.status == 200)
            #expect((signed.jsonObject?["service_ip"] as? [String])?.isEmpty == false)

            let wrong = md5Hex("\(nonce)-not-\(e.secret)-\(now)")
            let refused = try await get(lab, base + "&s=\(wrong)&t=\(now)&n=\(nonce)")
            #expect(refused.status == 403)
            #expect(refused.jsonObject?["code"] as? String == "InvalidSignature")

            let unsigned = try await get(lab, base)
            #expect(unsigned.status == 200)
            #expect((unsigned.jsonObject?["service_ip"] as? [String])?.isEmpty == false)
        }
    }
}

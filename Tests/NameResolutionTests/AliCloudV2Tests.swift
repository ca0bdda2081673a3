// Alibaba Cloud HTTPDNS v2 against the lab (unsigned, signed, sealed with AES-CBC and AES-GCM,
// batches, every refusal explained) and the ciphers against vectors computed outside our code.
import ConfigurationSources
import Foundation
import Lab
import Testing
import WireCiphers

@testable import NameResolution

@Suite("Wire ciphers: known answers")
struct WireCipherVectorTests {
    @Test("the v2 signature is HMAC-SHA256 over the sorted signed parameters, keyed by the hex-decoded secret")
    func signature() {
        let parameters = [
            "id": "139450", "m": "0", "dn": "www.aliyun.com", "q": "4", "exp": "1700000600", "v": "1.0",
            "sdns-region": "east", "tags": "", "sid": "AAAAAAAAAAAA", "sdk": "ipdirect_0.1.0",
        ]
        // Empty values and the unsigned sid/sdk are left out; sdns-* is in.
        #expect(
            AliCloudV2Signing.content(parameters)
                == "dn=www.aliyun.com&exp=1700000600&id=139450&m=0&q=4&sdns-region=east&v=1.0")
        // printf '%s' 'dn=www.aliyun.com&exp=1700000600&id=139450&m=0&q=4&sdns-region=east&v=1.0' \
        //   | openssl dgst -sha256 -mac HMAC -macopt hexkey:00112233445566778899aabbccddeeff
        #expect(
            AliCloudV2Signing.signature(parameters, secret: "00112233445566778899aabbccddeeff")
                == "ce5840151fb4c388c52dff084fbef55f55b0d126a5f82abe1a79ccf693daeca3")
        #expect(AliCloudV2Signing.signature(parameters, secret: "not hex") == nil)
    }

    @Test("AES-128-CBC with PKCS#7 matches openssl enc")
    func aesCBC() throws {
        let key = Hex.decode("00112233445566778899aabbccddeeff")!
        let iv = Hex.decode("0f0e0d0c0b0a09080706050403020100")!
        let plain = Array(#"{"dn":"www.aliyun.com","q":"4"}"#.utf8)
        // printf '%s' '{"dn":"www.aliyun.com","q":"4"}' | openssl enc -aes-128-cbc \
        //   -K 00112233445566778899aabbccddeeff -iv 0f0e0d0c0b0a09080706050403020100 | xxd -p
        let expected = "eb2458c45a57842330a5ab6d8561c77a4364afbf891dcca856cff04b377fe5af"
        #expect(Hex.encode(try WireCipher.aesCBC(encrypt: true, key: key, iv: iv, plain)) == expected)
        #expect(try WireCipher.aesCBC(encrypt: false, key: key, iv: iv, Hex.decode(expected)!) == plain)
        // The v2 framing: IV in front.
        #expect(try AliCloudV2Mode.aesCBC.open(iv + Hex.decode(expected)!, key: key) == plain)
    }

    @Test("AES-128-GCM matches the GCM specification's test case 2 and an independent implementation")
    func aesGCM() throws {
        // McGrew & Viega, "The Galois/Counter Mode of Operation", test case 2: zero key, zero IV,
        // one zero block -> 0388dace60b6a392f328c2b971b2fe78, tag ab6e47d42cec13bdf53a67b21257bddf.
        // (`openssl enc` refuses AEAD ciphers; this vector is also what Python's
        // cryptography AESGCM(bytes(16)).encrypt(bytes(12), bytes(16), None) gives.)
        let sealed = try WireCipher.aesGCM(
            encrypt: true, key: [UInt8](repeating: 0, count: 16), iv: [UInt8](repeating: 0, count: 12),
            [UInt8](repeating: 0, count: 16))
        #expect(Hex.encode(sealed) == "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf")
        // python3 -c "from cryptography.hazmat.primitives.ciphers.aead import AESGCM; print(AESGCM(bytes.fromhex(
        //   '00112233445566778899aabbccddeeff')).encrypt(bytes.fromhex('000102030405060708090a0b'),
        //   b'{\"cip\":\"1.2.3.4\"}', None).hex())"
        let key = Hex.decode("00112233445566778899aabbccddeeff")!
        let iv = Hex.decode("000102030405060708090a0b")!
        let expected = Hex.decode("50f754addeb5b542ae161bb123a375cf70b71a7ce8e6a9b4fe70116da14169930d")!
        #expect(try AliCloudV2Mode.aesGCM.open(iv + expected, key: key) == Array(#"{"cip":"1.2.3.4"}"#.utf8))
        // A wrong key fails the tag instead of giving garbage.
        #expect(throws: WireCipherError.self) {
            try AliCloudV2Mode.aesGCM.open(iv + expected, key: [UInt8](repeating: 7, count: 16))
        }
    }

    @Test("single DES-ECB with PKCS#5 matches openssl's legacy provider")
    func des() throws {
        // printf '%s' 'www.qq.com' | openssl enc -des-ecb -provider legacy -provider default \
        //   -K $(printf '%s' 'k3yDES42' | xxd -p) | xxd -p
        let key = Array("k3yDES42".utf8)
        let expected = "dccd83f44eada9b1eebf1489939a7b5f"
        #expect(Hex.encode(try WireCipher.desECB(encrypt: true, key: key, Array("www.qq.com".utf8))) == expected)
        #expect(try WireCipher.desECB(encrypt: false, key: key, Hex.decode(expected)!) == Array("www.qq.com".utf8))
    }

    @Test("hex decoding refuses odd lengths and non-hex characters")
    func hex() {
        #expect(Hex.decode("0aFf") == [0x0a, 0xff])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}

@Suite("alicloud v2 against the lab")
struct AliCloudV2LabTests {
    static func make(_ configuration: ResolverConfiguration) throws -> any HTTPDNSProvider {
        try ProviderFactory.make(configuration)
    }

    @Test("unsigned: /v2/d with the SDK's parameters, the name in the clear, cip and the service IP shown")
    func unsigned() async throws {
        try await withLab { lab in
            let provider = try LabFormat.alicloud.provider(lab)
            #expect(provider.name == "alicloud")
            let answer = try await provider.resolve("dual.lab.test", families: [.v4, .v6])
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(answer.ipv6 == ["::1"])
            #expect(answer.clientIP == "127.0.0.1")
            #expect(answer.server == "127.0.0.1")
            let path = try #require(lab.httpdnsQueries().last?.path)
            #expect(path.hasPrefix("/v2/d?id=\(lab.endpoints.account)&m=0&exp="))
            for part in ["&v=1.0", "&dn=dual.lab.test", "&q=4%2C6", "&sid=", "&sdk=ipdirect_"] {
                #expect(path.contains(part), "\(part) in \(path)")
            }
            #expect(!path.contains("&s="))
        }
    }

    @Test("a family with no record is named: 'no AAAA record'")
    func noRecord() async throws {
        try await withLab { lab in
            let answer = try await LabFormat.alicloud.provider(lab).resolve("sni-a.lab.test", families: [.v4, .v6])
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(answer.notes.contains { $0.hasPrefix("no AAAA record") })
        }
    }

    @Test("signed: the signature is accepted; a wrong secret is explained")
    func signed() async throws {
        try await withLab { lab in
            let provider = try LabFormat.alicloudSigned.provider(lab)
            #expect(provider.name == "alicloud (signed)")
            #expect(try await provider.resolve("sni-b.lab.test", families: [.v4]).ipv4 == ["127.0.0.1"])
            #expect(lab.httpdnsQueries().last?.path.contains("&s=") == true)

            var wrong = LabFormat.alicloudSigned.configuration(lab)
            wrong.secret = "00112233445566778899aabbccddeeff"
            let error = await #expect(throws: ResolutionError.self) {
                try await Self.make(wrong).resolve("sni-b.lab.test", families: [.v4])
            }
            #expect(error?.description.contains("InvalidSignature") == true)
            #expect(error?.description.contains("IPDIRECT_HTTPDNS_SECRET") == true)
            // Never the secret itself.
            #expect(error?.description.contains(lab.endpoints.secret) == false)
        }
    }

    @Test("an account that refuses unsigned requests says to set the secret")
    func unsignedRefused() async throws {
        try await withLab { lab in
            var config = LabFormat.alicloud.configuration(lab)
            config.account = lab.endpoints.keys.signedOnlyAccount
            let error = await #expect(throws: ResolutionError.self) {
                try await Self.make(config).resolve("sni-a.lab.test", families: [.v4])
            }
            #expect(error?.description.contains("accepts signed requests only (UnsignedInterfaceDisabled)") == true)
            #expect(error?.description.contains("IPDIRECT_HTTPDNS_SECRET") == true)
            config.secret = lab.endpoints.secret
            let signed = try await Self.make(config).resolve("sni-a.lab.test", families: [.v4])
            #expect(signed.ipv4 == ["127.0.0.1"])
        }
    }

    @Test(
        "encrypted both ways: the name never in the request line, the answer decrypted",
        arguments: [
            LabFormat.alicloudAESCBC, .alicloudAESGCM,
        ])
    func encrypted(format: LabFormat) async throws {
        try await withLab { lab in
            let provider = try format.provider(lab)
            let answer = try await provider.resolve("dual.lab.test", families: [.v4, .v6])
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(answer.ipv6 == ["::1"])
            #expect(answer.clientIP == "127.0.0.1")
            let query = try #require(lab.httpdnsQueries().last)
            #expect(query.format == (format == .alicloudAESCBC ? "alicloud-v2-cbc" : "alicloud-v2-gcm"))
            #expect(query.host == "dual.lab.test")
            #expect(!query.path.contains("lab.test"))
            #expect(!query.path.contains("&dn=") && !query.path.contains("&q="))
            #expect(query.path.contains("&m=\(format == .alicloudAESCBC ? 1 : 2)&"))
            #expect(query.path.contains("&enc=") && query.path.contains("&s="))
        }
    }

    @Test("a wrong AES key is a sentence, not garbage", arguments: [LabFormat.alicloudAESCBC, .alicloudAESGCM])
    func wrongKey(format: LabFormat) async throws {
        try await withLab { lab in
            var config = format.configuration(lab)
            config.key = "ffeeddccbbaa99887766554433221100"
            let error = await #expect(throws: ResolutionError.self) {
                try await Self.make(config).resolve("dual.lab.test", families: [.v4])
            }
            #expect(error?.description.hasPrefix("the answer could not be decrypted: check the AES key") == true)
            #expect(error?.description.contains("ffeeddcc") == false)
        }
    }

    @Test("more than 5 names become more requests, every name answered")
    func batch() async throws {
        try await withLab { lab in
            let provider = try LabFormat.alicloudAESGCM.provider(lab)
            let names = lab.endpoints.zone.filter { $0.ipv4 == ["127.0.0.1"] }.map(\.name)
            #expect(names.count > 5)
            let results = await provider.resolveBatch(names, families: [.v4])
            for name in names {
                #expect(try results[name]?.get().ipv4 == ["127.0.0.1"], "\(name)")
            }
            let requests = lab.httpdnsQueries().filter { $0.format == "alicloud-v2-gcm" }
            #expect(requests.count == (names.count + 4) / 5)
            #expect(requests.allSatisfy { $0.host.split(separator: ",").count <= 5 })
        }
    }

    @Test("sdns parameters are sent and signed; the service's extra is shown")
    func sdns() async throws {
        try await withLab { lab in
            var config = LabFormat.alicloudSigned.configuration(lab)
            config.sdns = ["region": "east"]
            let answer = try await Self.make(config).resolve("sni-a.lab.test", families: [.v4])
            #expect(lab.httpdnsQueries().last?.path.contains("&sdns-region=east") == true)
            #expect(answer.notes.contains("extra: 'region=east'"))
        }
    }

    @Test("SignatureExpired says by how much this machine's clock is off")
    func clockSkew() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let provider = try AliCloudV2Provider(
                servers: AliCloudServiceIPs(endpoint: e.httpdns), account: e.account, secret: e.secret, cipher: .none,
                key: nil, sdns: [:], transport: HTTPDNSTransport(timeout: 2, caFile: nil),
                now: { Date().addingTimeInterval(-3600) })
            let error = await #expect(throws: ResolutionError.self) {
                try await provider.resolve("sni-a.lab.test", families: [.v4])
            }
            let text = error?.description ?? ""
            #expect(text.contains("(SignatureExpired)"))
            // 3600 s, less the time between the service's Date and our reading it (seconds under a
            // loaded parallel run), never more.
            let seconds = text.firstRange(of: /clock is (\d+) s behind/).flatMap {
                Int(text[$0].split(separator: " ")[2])
            }
            #expect(seconds.map { (3540...3601).contains($0) } == true, "\(text)")
        }
    }

    @Test("a configuration with a legacy path under 'alicloud' is told what to change")
    func legacyPath() throws {
        let config = ResolverConfiguration(
            provider: .alicloud, endpoint: "http://203.107.1.1/139450/d", account: "139450")
        #expect(throws: ResolutionError.self) { try ProviderFactory.make(config) }
        do {
            _ = try ProviderFactory.make(config)
        } catch {
            #expect(error.description.contains("alicloud-legacy"))
        }
        var legacy = config
        legacy.provider = .alicloudLegacy
        #expect(try ProviderFactory.make(legacy).name == "alicloud")
    }

    @Test("the key and the secret never show in the configuration's description")
    func redaction() {
        var config = ResolverConfiguration(provider: .alicloud, account: "1", secret: "5ec2e7")
        config.key = "0badc0de0badc0de0badc0de0badc0de"
        config.token = "T0KEN-42"
        config.cipher = .aesGCM
        for text in [config.description, String(reflecting: config)] {
            #expect(!text.contains("5ec2e7") && !text.contains("0badc0de") && !text.contains("T0KEN-42"))
        }
    }
}

// Tencent DNSPod D+ against the lab in every form (plain, DES, AES, HTTPS token), and its
// ciphers against vectors computed with openssl on the command line.
import ConfigurationSources
import Foundation
import Lab
import Testing
import WireCiphers

@testable import NameResolution

@Suite("Tencent DNSPod D+ wire")
struct TencentWireTests {
    @Test("DES and AES seal as the DNSPod SDK does (vectors from openssl)")
    func vectors() throws {
        // printf '%s' 'www.qq.com' | openssl enc -des-ecb -provider legacy -provider default \
        //   -K $(printf '%s' 'k3yDES42' | xxd -p) | xxd -p
        #expect(try TencentAlgorithm.des.seal("www.qq.com", key: "k3yDES42") == "dccd83f44eada9b1eebf1489939a7b5f")
        // The AES key "abc123" is padded with '0' to 16 characters:
        // printf '%s' 'www.qq.com' | openssl enc -aes-128-cbc -K $(printf '%s' 'abc1230000000000' | xxd -p) \
        //   -iv 000102030405060708090a0b0c0d0e0f | xxd -p
        let sealed = "000102030405060708090a0b0c0d0e0f" + "210e4954c120ed077dd6a3aab5ca46a2"
        #expect(try TencentAlgorithm.aes.open(sealed, key: "abc123") == "www.qq.com")
        // Our own AES output is hex(IV) + hex(ciphertext) and opens again.
        let ours = try TencentAlgorithm.aes.seal("www.qq.com", key: "abc123")
        #expect(ours.count == 64)
        #expect(try TencentAlgorithm.aes.open(ours, key: "abc123") == "www.qq.com")
    }

    @Test(
        "encrypted forms: the name is absent from the request line, the answer decrypted",
        arguments: [LabFormat.tencentDES, .tencentAES])
    func encrypted(format: LabFormat) async throws {
        try await withLab { lab in
            let provider = try format.provider(lab)
            #expect(provider.name == (format == .tencentDES ? "tencent (des)" : "tencent (aes-cbc)"))
            let answer = try await provider.resolve("dual.lab.test", families: [.v4, .v6])
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(answer.ipv6 == ["::1"])
            #expect(answer.clientIP == "127.0.0.1")
            let query = try #require(lab.httpdnsQueries().last)
            #expect(query.format == (format == .tencentDES ? "tencent-des" : "tencent-aes"))
            #expect(query.host == "dual.lab.test")
            #expect(!query.path.contains("lab.test"))
            #expect(query.path.contains("&id=\(lab.endpoints.keys.tencentID)"))
            #expect(query.path.hasSuffix("&type=addrs&alg=\(format == .tencentDES ? "des" : "aes")"))
        }
    }

    @Test("a wrong key is a sentence that names the key", arguments: [LabFormat.tencentDES, .tencentAES])
    func wrongKey(format: LabFormat) async throws {
        try await withLab { lab in
            var config = format.configuration(lab)
            config.key = "WRONGKEY"
            let error = await #expect(throws: ResolutionError.self) {
                try await ProviderFactory.make(config).resolve("dual.lab.test", families: [.v4])
            }
            let text = error?.description ?? ""
            #expect(text.contains("IPDIRECT_HTTPDNS_KEY"), "\(text)")
            #expect(!text.contains("WRONGKEY"))
        }
    }

    @Test("the HTTPS token form sends the name in the clear with the token, never shown")
    func token() async throws {
        try await withLab { lab in
            let provider = try LabFormat.tencentToken.provider(lab)
            #expect(provider.name == "tencent (token)")
            #expect(try await provider.resolve("sni-a.lab.test", families: [.v4]).ipv4 == ["127.0.0.1"])
            #expect(lab.httpdnsQueries().last?.format == "tencent-token")

            var wrong = LabFormat.tencentToken.configuration(lab)
            wrong.token = "not-the-token"
            let error = await #expect(throws: ResolutionError.self) {
                try await ProviderFactory.make(wrong).resolve("sni-a.lab.test", families: [.v4])
            }
            #expect(error?.description.contains("not-the-token") == false)
        }
    }

    @Test("several names go in one request and come back one line each", arguments: [LabFormat.tencent, .tencentDES])
    func batch(format: LabFormat) async throws {
        try await withLab { lab in
            let names = ["plain.lab.test", "single.lab.test", "sni-a.lab.test", "dual.lab.test", "nowhere.lab.test"]
            let results = await (try format.provider(lab)).resolveBatch(names, families: [.v4])
            for name in names.dropLast() { #expect(try results[name]?.get().ipv4 == ["127.0.0.1"], "\(name)") }
            #expect(throws: ResolutionError.self) { try results["nowhere.lab.test"]?.get() }
            #expect(lab.httpdnsQueries().count == 1)
        }
    }

    @Test("an encrypted form without its key or account says what to set")
    func misconfigured() throws {
        var config = ResolverConfiguration(provider: .tencent, endpoint: "http://119.29.29.98", account: "1")
        config.cipher = .des
        #expect(throws: ResolutionError.self) { try ProviderFactory.make(config) }
        do { _ = try ProviderFactory.make(config) } catch {
            #expect(ConfigurationField.phrased(error).contains("IPDIRECT_HTTPDNS_KEY"))
        }
        config.key = "k3yDES42"
        config.account = nil
        do { _ = try ProviderFactory.make(config) } catch {
            #expect(ConfigurationField.phrased(error).contains("--account"))
        }
        config.cipher = .aesGCM
        config.account = "1"
        do { _ = try ProviderFactory.make(config) } catch { #expect(error.description.contains("no AES-GCM")) }
    }
}

// The fuzz seed corpus of the answer parsers holds real answers: each seed below parses to what
// it was built to say, so the fuzzer starts from inputs that reach the parsers' deepest paths.
import Foundation
import Testing
import WireCiphers

@testable import NameResolution

@Suite("Fuzz seeds are real answers")
struct FuzzSeedTests {
    /// Tests/Fuzz/Corpus, beside this file's folder.
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus")

    static func seed(_ target: String, _ name: String) throws -> [UInt8] {
        let path = corpus.appendingPathComponent(target).appendingPathComponent(name).path
        return Array(try #require(FileManager.default.contents(atPath: path), "missing seed \(target)/\(name)"))
    }

    @Test("the DNS wire seeds read as the replies they were built as")
    func dnsWire() throws {
        let two = try DNSMessage.addresses(
            in: try Self.seed("doh-wire", "a-two"), host: "fuzz.lab.test", family: .v4, id: 0)
        #expect(two.raw == ["203.0.113.5", "203.0.113.6"])
        #expect(two.ttl == 60)
        let six = try DNSMessage.addresses(
            in: try Self.seed("doh-wire", "aaaa"), host: "fuzz.lab.test", family: .v6, id: 0)
        #expect(six.raw == ["2001:db8::5"])
        let chain = try DNSMessage.addresses(
            in: try Self.seed("doh-wire", "cname-chain"), host: "fuzz.lab.test", family: .v4, id: 0)
        #expect(chain.raw == ["198.51.100.7"])
        #expect(chain.ttl == 30)
        #expect(throws: DNSReplyProblem.rcode(.nameError)) {
            try DNSMessage.addresses(
                in: try Self.seed("doh-wire", "nxdomain"), host: "fuzz.lab.test", family: .v4, id: 0)
        }
        #expect(throws: DNSReplyProblem.noData) {
            try DNSMessage.addresses(in: try Self.seed("doh-wire", "nodata"), host: "fuzz.lab.test", family: .v6, id: 0)
        }
    }

    @Test("the alicloud v2 seeds sealed with AES-CBC and AES-GCM open to the answer in the clear")
    func aliCloudSealed() throws {
        let provider = try AliCloudV2Provider(
            servers: AliCloudServiceIPs(endpoint: "https://fuzz.lab.test"), account: "139450", secret: nil,
            cipher: .aesCBC, key: "00112233445566778899aabbccddeeff", sdns: [:],
            transport: HTTPDNSTransport(timeout: 1, caFile: nil))
        for name in ["v2-clear", "v2-sealed-cbc", "v2-sealed-gcm"] {
            let results = try provider.parse(
                status: 200, body: try Self.seed("alicloud", name), date: nil, hosts: ["fuzz.lab.test", "b.lab.test"],
                families: [.v4, .v6], ms: 0, server: "fuzz")
            let answer = try #require(try? results["fuzz.lab.test"]?.get(), "\(name): \(results)")
            #expect(answer.ipv4 == ["203.0.113.5", "203.0.113.6"], "\(name)")
            // b.lab.test's only address hides a NUL: refused, never cached as an IP.
            #expect((try? results["b.lab.test"]?.get()) == nil, "\(name)")
        }
    }

    @Test("the tencent sealed seed opens with the fuzz key to a one-name answer")
    func tencentSealed() throws {
        let text = try TencentAlgorithm.aes.open(
            String(decoding: try Self.seed("tencent", "sealed-aes"), as: UTF8.self), key: "fuzzkey1")
        #expect(text == "1.2.3.4;5.6.7.8,60|9.9.9.9")
    }
}

// The lab's HTTPDNS service in every format it speaks, its signature checks and its query log,
// through our libcurl shim.
import CurlTransport
import Foundation
import Lab
import Testing

@Suite("Lab HTTPDNS service")
struct LabHTTPDNSTests {
    private func get(_ lab: Lab, _ path: String, headers: [String] = []) async throws -> TransferRecord {
        try await fetch(HTTPRequest(url: lab.endpoints.httpdns + path, headers: headers))
    }

    @Test("alicloud /d answers A, AAAA and both")
    func alicloudPlain() async throws {
        try await withLab { lab in
            let account = lab.endpoints.account
            let v4 = try await get(lab, "/\(account)/d?host=dual.lab.test")
            #expect(v4.status == 200)
            let answer = try #require(v4.jsonObject)
            #expect(answer["host"] as? String == "dual.lab.test")
            #expect(answer["ips"] as? [String] == ["127.0.0.1"])
            #expect(answer["ttl"] as? Int == 60)
            #expect(answer["origin_ttl"] as? Int == 60)
            #expect(answer["client_ip"] as? String == "127.0.0.1")

            let both = try #require(try await get(lab, "/\(account)/d?host=dual.lab.test&query=4,6").jsonObject)
            #expect(both["ips"] as? [String] == ["127.0.0.1"])
            #expect(both["ipsv6"] as? [String] == ["::1"])

            let v6 = try #require(try await get(lab, "/\(account)/d?host=dual.lab.test&query=6").jsonObject)
            #expect(v6["ipsv6"] as? [String] == ["::1"])
            #expect(v6["ips"] as? [String] == [])

            let short = try #require(try await get(lab, "/\(account)/d?host=short-ttl.lab.test").jsonObject)
            #expect(short["ttl"] as? Int == 2)

            let unknown = try #require(try await get(lab, "/\(account)/d?host=nothing.lab.test").jsonObject)
            #expect(unknown["ips"] as? [String] == [])

            let poisoned = try #require(try await get(lab, "/\(account)/d?host=poisoned.lab.test").jsonObject)
            #expect(poisoned["ips"] as? [String] == ["127.0.0.1", "not-an-ip", "999.1.2.3"])
        }
    }

    @Test("alicloud sign_d accepts md5(host-secret-t) and refuses a wrong or old signature")
    func alicloudSigned() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let expiry = Int(Date().timeIntervalSince1970) + 600
            let good = md5Hex("sni-a.lab.test-\(e.secret)-\(expiry)")
            let signed = try await get(lab, "/\(e.account)/sign_d?host=sni-a.lab.test&t=\(expiry)&s=\(good)")
            #expect(signed.status == 200)
            #expect(signed.jsonObject?["ips"] as? [String] == ["127.0.0.1"])

            let wrong = try await get(lab, "/\(e.account)/sign_d?host=sni-a.lab.test&t=\(expiry)&s=\(md5Hex("x"))")
            #expect(wrong.status == 403)
            #expect(wrong.jsonObject?["code"] as? String == "InvalidSignature")

            let past = expiry - 3600
            let old = try await get(
                lab,
                "/\(e.account)/sign_d?host=sni-a.lab.test&t=\(past)&s=\(md5Hex("sni-a.lab.test-\(e.secret)-\(past)"))")
            #expect(old.status == 403)
            #expect(old.jsonObject?["code"] as? String == "SignatureExpired")

            let otherAccount = try await get(lab, "/999/d?host=sni-a.lab.test")
            #expect(otherAccount.status == 403)
            #expect(otherAccount.jsonObject?["code"] as? String == "InvalidAccount")

            let missing = try await get(lab, "/\(e.account)/d")
            #expect(missing.status == 400)
            #expect(missing.jsonObject?["code"] as? String == "MissingArgument")
        }
    }

    @Test("alicloud batch resolve answers one entry per host and family")
    func alicloudBatch() async throws {
        try await withLab { lab in
            let response = try await get(
                lab, "/\(lab.endpoints.account)/resolve?host=dual.lab.test,single.lab.test&query=4,6")
            let entries = try #require(response.jsonObject?["dns"] as? [[String: Any]])
            let summary = entries.map {
                "\($0["host"] as? String ?? "?")/\($0["type"] as? Int ?? 0)=\($0["ips"] as? [String] ?? [])"
            }
            #expect(
                summary == [
                    "dual.lab.test/1=[\"127.0.0.1\"]", "dual.lab.test/28=[\"::1\"]",
                    "single.lab.test/1=[\"127.0.0.1\"]",
                    "single.lab.test/28=[]",
                ])
        }
    }

    @Test("tencent /d answers ip;ip[,ttl], addrs with '-', and an empty body for no such name")
    func tencent() async throws {
        try await withLab { lab in
            #expect(try await get(lab, "/d?dn=sni-a.lab.test").text == "127.0.0.1")
            #expect(try await get(lab, "/d?dn=sni-a.lab.test&ttl=1").text == "127.0.0.1,60")
            #expect(try await get(lab, "/d?dn=dual.lab.test&type=addrs&ttl=1").text == "127.0.0.1,60-::1,60")
            #expect(try await get(lab, "/d?dn=single.lab.test&type=addrs").text == "127.0.0.1-0")
            #expect(try await get(lab, "/d?dn=dual.lab.test&type=aaaa").text == "::1")
            #expect(try await get(lab, "/d?dn=poisoned.lab.test").text == "127.0.0.1;not-an-ip;999.1.2.3")
            let unknown = try await get(lab, "/d?dn=nothing.lab.test")
            #expect(unknown.status == 200)
            #expect(unknown.body.isEmpty)
            #expect(
                try await get(lab, "/d?dn=single.lab.test,nothing.lab.test&ttl=1").text
                    == "single.lab.test.:127.0.0.1,60\nnothing.lab.test.:0")
        }
    }

    @Test("DoH JSON answers /resolve and /dns-query, Status 3 for no such name")
    func dohJSON() async throws {
        try await withLab { lab in
            let a = try #require(try await get(lab, "/resolve?name=dual.lab.test&type=1").jsonObject)
            #expect(a["Status"] as? Int == 0)
            let answers = try #require(a["Answer"] as? [[String: Any]])
            #expect(answers.count == 1)
            #expect(answers.first?["name"] as? String == "dual.lab.test.")
            #expect(answers.first?["type"] as? Int == 1)
            #expect(answers.first?["TTL"] as? Int == 60)
            #expect(answers.first?["data"] as? String == "127.0.0.1")

            let aaaa = try #require(
                try await get(lab, "/dns-query?name=dual.lab.test&type=AAAA", headers: ["Accept: application/dns-json"])
                    .jsonObject)
            #expect((aaaa["Answer"] as? [[String: Any]])?.first?["data"] as? String == "::1")

            let none = try #require(try await get(lab, "/resolve?name=nothing.lab.test&type=A").jsonObject)
            #expect(none["Status"] as? Int == 3)
            #expect(none["Answer"] == nil)
        }
    }

    @Test("the HTTPS endpoint answers with a certificate for 127.0.0.1 and httpdns.lab.test")
    func overTLS() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let url = e.httpdnsTLS + "/\(e.account)/d?host=single.lab.test"
            let byIP = try await fetch(HTTPRequest(url: url, caFile: e.ca))
            #expect(byIP.jsonObject?["ips"] as? [String] == ["127.0.0.1"])
            let byName = try await fetch(HTTPRequest(url: url, caFile: e.ca, checkCertificateName: "httpdns.lab.test"))
            #expect(byName.status == 200)
        }
    }

    @Test("every answered query is logged with its format, host and status")
    func queryLog() async throws {
        try await withLab { lab in
            _ = try await get(lab, "/\(lab.endpoints.account)/d?host=sni-a.lab.test")
            _ = try await get(lab, "/d?dn=sni-b.lab.test")
            _ = try await get(lab, "/resolve?name=single.lab.test")
            _ = try await get(lab, "/999/d?host=x.lab.test")
            let log = lab.httpdnsQueries().map { "\($0.format) \($0.host) \($0.status)" }
            #expect(
                log == [
                    "alicloud sni-a.lab.test 200", "tencent sni-b.lab.test 200", "doh-json single.lab.test 200",
                    "alicloud x.lab.test 403",
                ])
            #expect(lab.httpdnsQueries().first?.path == "/\(lab.endpoints.account)/d?host=sni-a.lab.test")
        }
    }
}

/// Lowercase hex MD5, computed here independently of the lab's own signing code.
func md5Hex(_ text: String) -> String { MD5.hex(Array(text.utf8)) }

/// RFC 1321 MD5, small and slow: only for building test signatures.
enum MD5 {
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14,
        20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6,
        10, 15, 21,
    ]
    private static let constants: [UInt32] = (0..<64).map {
        UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296))
    }

    static func hex(_ message: [UInt8]) -> String {
        var bytes = message
        let bitLength = UInt64(message.count) * 8
        bytes.append(0x80)
        while bytes.count % 64 != 56 { bytes.append(0) }
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))) }
        var a0: UInt32 = 0x6745_2301
        var b0: UInt32 = 0xefcd_ab89
        var c0: UInt32 = 0x98ba_dcfe
        var d0: UInt32 = 0x1032_5476
        for chunk in stride(from: 0, to: bytes.count, by: 64) {
            let m = (0..<16).map { i in
                (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[chunk + i * 4 + $1]) << (8 * UInt32($1)) }
            }
            var (a, b, c, d) = (a0, b0, c0, d0)
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16: (f, g) = ((b & c) | (~b & d), i)
                case 16..<32: (f, g) = ((d & b) | (~d & c), (5 * i + 1) % 16)
                case 32..<48: (f, g) = (b ^ c ^ d, (3 * i + 5) % 16)
                default: (f, g) = (c ^ (b | ~d), (7 * i) % 16)
                }
                f = f &+ a &+ constants[i] &+ m[g]
                a = d
                d = c
                c = b
                b = b &+ (f << shifts[i] | f >> (32 - shifts[i]))
            }
            a0 = a0 &+ a
            b0 = b0 &+ b
            c0 = c0 &+ c
            d0 = d0 &+ d
        }
        return [a0, b0, c0, d0].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
            .map { String(format: "%02x", $0) }.joined()
    }
}

@Suite("Test MD5")
struct MD5Tests {
    @Test("matches the RFC 1321 test vectors")
    func vectors() {
        #expect(md5Hex("") == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(md5Hex("abc") == "900150983cd24fb0d6963f7d28e17f72")
    }
}

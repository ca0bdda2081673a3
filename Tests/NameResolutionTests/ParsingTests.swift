// Wire formats read from captured bodies: what each service sends, including the junk,
// cut-off and error bodies a user will meet, and how each becomes an answer or a reason.
import Foundation
import Testing

@testable import NameResolution

@Suite("Wire formats")
struct ParsingTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("alicloud single answer, both families")
    func alicloudSingle() throws {
        let body =
            #"{"host":"dual.lab.test","ips":["127.0.0.1"],"ipsv6":["::1"],"ttl":60,"origin_ttl":60,"client_ip":"127.0.0.1"}"#
        let answer = try AliCloudProvider.parseSingle(bytes(body), host: "dual.lab.test", families: [.v4, .v6], ms: 1)
        #expect(answer.ipv4 == ["127.0.0.1"])
        #expect(answer.ipv6 == ["::1"])
        #expect(answer.ttl == FamilyTTL(v4: 60, v6: 60))
        // The egress the service judged the query by, shown as "saw you as".
        #expect(answer.clientIP == "127.0.0.1")
    }

    @Test("alicloud legacy: client_ip is kept per name in a batch, and only as an IP literal")
    func alicloudClientIP() throws {
        let body =
            #"{"dns":[{"host":"a.test","client_ip":"198.51.100.7","ips":["192.0.2.1"],"type":1,"ttl":30},{"host":"b.test","client_ip":"\u001b[31mred","ips":["192.0.2.2"],"type":1,"ttl":30}]}"#
        let results = try AliCloudProvider.parseBatch(bytes(body), hosts: ["a.test", "b.test"], families: [.v4], ms: 0)
        #expect(try results["a.test"]!.get().clientIP == "198.51.100.7")
        #expect(try results["b.test"]!.get().clientIP == nil)
    }

    @Test("an answer with more than 32 addresses of a family keeps the first 32 and says it cut")
    func addressesPerAnswerCapped() throws {
        let ips = (1...40).map { "\"10.0.0.\($0)\"" }.joined(separator: ",")
        let body = #"{"host":"many.example","ips":[\#(ips)],"ipsv6":["::1"],"ttl":60}"#
        let answer = try AliCloudProvider.parseSingle(bytes(body), host: "many.example", families: [.v4, .v6], ms: 0)
        #expect(answer.ipv4.map(\.text) == (1...32).map { "10.0.0.\($0)" })
        #expect(answer.ipv6 == ["::1"])
        #expect(
            answer.notes == [
                "the service sent 40 IPv4 addresses; only the first 32 are kept (ipdirect's limit per answer)"
            ])
        #expect(answer.notes.allSatisfy(ProviderAnswer.isCutNote))
    }

    @Test("alicloud: any junk refuses the whole answer, naming it; cut-off JSON is malformed")
    func alicloudJunk() throws {
        let mixed = #"{"host":"p","ips":["127.0.0.1","not-an-ip","999.1.2.3"],"ttl":60}"#
        #expect(throws: ResolutionError.notAnIP(junk: ["not-an-ip", "999.1.2.3"])) {
            try AliCloudProvider.parseSingle(bytes(mixed), host: "p", families: [.v4], ms: 0)
        }
        #expect(throws: ResolutionError.notAnIP(junk: ["not-an-ip"])) {
            try AliCloudProvider.parseSingle(
                bytes(#"{"host":"p","ips":["not-an-ip"],"ttl":60}"#), host: "p", families: [.v4], ms: 0)
        }
        #expect(
            ResolutionError.notAnIP(junk: ["not-an-ip"]).description
                == "HTTPDNS answered 'not-an-ip', which is not an IP address: answer refused")
        do {
            _ = try AliCloudProvider.parseSingle(bytes(#"{"host":"p","ips":["127."#), host: "p", families: [.v4], ms: 0)
            Issue.record("cut-off JSON was accepted")
        } catch {
            #expect(error.description.hasPrefix("malformed HTTPDNS answer"))
        }
    }

    @Test("alicloud TTLs are clamped to 1...86400")
    func ttlBounds() throws {
        let zero = try AliCloudProvider.parseSingle(
            bytes(#"{"ips":["192.0.2.1"],"ttl":0}"#), host: "h", families: [.v4], ms: 0)
        #expect(zero.ttl == FamilyTTL(v4: 1))
        let huge = try AliCloudProvider.parseSingle(
            bytes(#"{"ips":["192.0.2.1"],"ttl":99999999}"#), host: "h", families: [.v4], ms: 0)
        #expect(huge.ttl == FamilyTTL(v4: 86_400))
    }

    @Test("alicloud batch answer")
    func alicloudBatch() throws {
        let body =
            #"{"dns":[{"host":"a.test","ips":["192.0.2.1"],"type":1,"ttl":30},{"host":"a.test","ips":["2001:db8::1"],"type":28,"ttl":40},{"host":"b.test","ips":[],"type":1,"ttl":60}]}"#
        let results = try AliCloudProvider.parseBatch(
            bytes(body), hosts: ["a.test", "b.test"], families: [.v4, .v6], ms: 0)
        let a = try results["a.test"]!.get()
        #expect(a.ipv4 == ["192.0.2.1"] && a.ipv6 == ["2001:db8::1"] && a.ttl == FamilyTTL(v4: 30, v6: 40))
        #expect(throws: ResolutionError.noSuchName(host: "b.test", families: [.v4, .v6])) {
            try results["b.test"]!.get()
        }
    }

    @Test("alicloud signature is md5 of host-secret-expiry, lowercase hex")
    func signature() {
        // Vectors computed independently: printf '%s' a.test-s3cret-1700000000 | md5sum
        #expect(
            AliCloudProvider.signature(host: "a.test", secret: "s3cret", expiry: 1_700_000_000)
                == "24f731e8a9c8daa7b5dd6b44f1b52f1a")
        let provider = AliCloudProvider(
            endpoint: "http://127.0.0.1:8000/139450/d", account: "139450", secret: "s3cret",
            transport: HTTPDNSTransport(timeout: 2, caFile: nil))
        let url =
            AliCloudProvider.base("http://127.0.0.1:8000/139450/d", account: "139450")
            + provider.target(for: "a.test", families: [.v4], now: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(
            url
                == "http://127.0.0.1:8000/139450/sign_d?host=a.test&query=4&t=1700000600&s=65fd6398556bb53e8baf9874d6a0ff0a"
        )
    }

    @Test("tencent text formats")
    func tencent() throws {
        let one = try TencentProvider.parse(bytes("192.0.2.1;192.0.2.2,120"), host: "h", families: [.v4], ms: 0)
        #expect(one.ipv4 == ["192.0.2.1", "192.0.2.2"] && one.ttl == FamilyTTL(v4: 120))
        let both = try TencentProvider.parse(bytes("127.0.0.1,60-::1,60"), host: "h", families: [.v4, .v6], ms: 0)
        #expect(both.ipv4 == ["127.0.0.1"] && both.ipv6 == ["::1"])
        let v4only = try TencentProvider.parse(bytes("127.0.0.1,60-0"), host: "h", families: [.v4, .v6], ms: 0)
        #expect(v4only.ipv4 == ["127.0.0.1"] && v4only.ipv6.isEmpty)
        let v6only = try TencentProvider.parse(bytes("127.0.0.1,60-::1,60"), host: "h", families: [.v6], ms: 0)
        #expect(v6only.ipv4.isEmpty && v6only.ipv6 == ["::1"])
        // Junk holding the separator itself does not confuse the split.
        #expect(throws: ResolutionError.notAnIP(junk: ["not-an-ip", "999.1.2.3", "fe80::zz"])) {
            try TencentProvider.parse(
                bytes("127.0.0.1;not-an-ip;999.1.2.3,60-::1;fe80::zz,60"), host: "h", families: [.v4, .v6], ms: 0)
        }
        #expect(throws: ResolutionError.noSuchName(host: "h", families: [.v4])) {
            try TencentProvider.parse(bytes(""), host: "h", families: [.v4], ms: 0)
        }
        do {
            _ = try TencentProvider.parse(bytes("<html>\u{1}lab;;,garbage-"), host: "h", families: [.v4], ms: 0)
            Issue.record("garbage accepted")
        } catch {
            #expect(error.description.hasPrefix("malformed HTTPDNS answer"))
        }
    }

    @Test("DoH JSON: records of the asked type, CNAMEs skipped, NXDOMAIN is no such name")
    func doh() throws {
        let body =
            #"{"Status":0,"Answer":[{"name":"www.a.test.","type":5,"TTL":300,"data":"a.test."},{"name":"a.test.","type":1,"TTL":120,"data":"192.0.2.1"}]}"#
        let parsed = try DoHJSONProvider.parse(bytes(body), host: "www.a.test", family: .v4)
        #expect(parsed.raw == ["192.0.2.1"] && parsed.ttl == 120)
        #expect(throws: ResolutionError.dnsRcode(server: "the DoH server", host: "x", rcode: .nameError)) {
            try DoHJSONProvider.parse(bytes(#"{"Status":3}"#), host: "x", family: .v4)
        }
    }

    @Test("IP literals: address characters only, and they round-trip through inet_pton/inet_ntop")
    func literals() {
        #expect(IPLiteral.family(of: "127.0.0.1") == .v4)
        #expect(IPLiteral.family(of: "::1") == .v6)
        #expect(IPLiteral.family(of: "2001:DB8::1") == .v6, "case does not matter")
        #expect(IPLiteral.family(of: "::ffff:192.0.2.1") == .v6)
        for junk in [
            "999.1.2.3", "fe80::zz", "not-an-ip", "127.0.0.1 ", "[::1]", "1.2.3.4:80", "", "127.1", "fe80::1%eth0",
            "0:0:0:0:0:0:0:1", "1.2.3.4\u{0}", "1.2.3.4\u{0}evil.example", "::1\u{0}:80",
        ] {
            #expect(IPLiteral.family(of: junk) == nil, "\(junk.debugDescription)")
        }
    }

    @Test("host:port is written with IPv6 in brackets and read back the same, port or not")
    func hostPort() {
        #expect(IPLiteral.hostPort("127.0.0.1", port: 53) == "127.0.0.1:53")
        #expect(IPLiteral.hostPort("::1", port: 53) == "[::1]:53")
        #expect(IPLiteral.hostPort("[::1]", port: 53) == "[::1]:53", "already bracketed")
        #expect(IPLiteral.hostPort("sni-a.lab.test", port: 443) == "sni-a.lab.test:443")
        for (host, port) in [("127.0.0.1", 53), ("::1", 5353), ("2001:db8::7", 443), ("dns.example", 853)] {
            let split = IPLiteral.splitHostPort(IPLiteral.hostPort(host, port: port))
            #expect(split?.host == host && split?.port == "\(port)", "\(host) \(port)")
        }
        #expect(IPLiteral.splitHostPort("::1").map { [$0.host, $0.port ?? "none"] } == ["::1", "none"])
        #expect(IPLiteral.splitHostPort("[::1]").map { [$0.host, $0.port ?? "none"] } == ["::1", "none"])
        #expect(IPLiteral.splitHostPort(":9464").map { [$0.host, $0.port ?? "none"] } == ["", "9464"])
        for junk in ["[::1", "[::1]5", "[::1]x:53"] {
            #expect(IPLiteral.splitHostPort(junk) == nil, "\(junk)")
        }
    }

    @Test("an answer with a NUL-smuggled IP is refused, not cached as the IP before the NUL")
    func nulSmuggling() {
        let screened = IPLiteral.screen(["192.0.2.7", "1.2.3.4\u{0}<script>", "5.6.7.8\u{0}"], family: .v4)
        #expect(screened.valid == ["192.0.2.7"])
        #expect(screened.rejected == ["1.2.3.4\u{0}<script>", "5.6.7.8\u{0}"])
    }

    @Test("an address a service spells twice (2001:DB8::1, 2001:db8::1) is one address, written as dig writes it")
    func oneAddressOneSpelling() throws {
        let answer = try ProviderAnswer.screened(
            host: "a.test", rawV4: ["192.0.2.1", " 192.0.2.1"], rawV6: ["2001:DB8::1", "2001:db8::1"],
            ttl: FamilyTTL(60, for: [.v4, .v6]),
            answered: [.v4, .v6], ms: 0)
        #expect(answer.ipv4 == ["192.0.2.1"])
        #expect(answer.ipv6 == ["2001:db8::1"])
    }
}

@Suite("Service error codes")
struct ServiceErrorCodeTests {
    @Test("every spelling of an unknown account is told as one, with the account to check")
    func unknownAccount() {
        for code in ["InvalidAccount", "AccountNotExist", "AccountNotExists", "InvalidAccountId"] {
            #expect(
                ResolutionError.fromStatus(403, code: code, account: "139450") == .invalidAccount("139450"), "\(code)")
        }
        #expect(
            ResolutionError.fromStatus(403, code: "Throttled", account: "139450")
                == .http(status: 403, code: "Throttled"))
    }
}

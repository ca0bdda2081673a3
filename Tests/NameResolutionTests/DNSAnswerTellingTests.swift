// DNS answers told as they are, through the lab's DNS server and its RFC 8484 endpoint (GET and POST):
// every address kept or the cut said truly, each RCODE by its name, NODATA apart from NXDOMAIN.
import ConfigurationSources
import Foundation
import Lab
import NameResolution
import NameResolutionTesting
import Testing

@Suite("DNS answers told as they are")
struct DNSAnswerTellingTests {
    static func server(_ lab: Lab) throws -> DNSServerResolver {
        DNSServerResolver(server: try DNSServer.parse(lab.endpoints.dns))
    }

    /// A cache for `configuration` whose system column is the lab's DNS server.
    static func cache(_ configuration: ResolverConfiguration, askingDNSOf lab: Lab) throws -> ResolverCache {
        var configuration = configuration
        configuration.dnsServer = try DNSServer.parse(lab.endpoints.dns)
        return ResolverCache(
            configuration: configuration, provider: try ProviderFactory.make(configuration), clock: ManualClock(Date()))
    }

    /// What the user reads when `host` fails through `format`.
    static func dohError(_ format: LabFormat, _ lab: Lab, _ host: String) async throws -> String {
        let provider = try format.provider(lab)
        do {
            _ = try await provider.resolve(host, families: [.v4])
        } catch {
            return error.description
        }
        Issue.record("\(host) resolved through \(format)")
        return ""
    }

    @Test("100 A records through the DNS server: all 100 kept, after the truncated UDP reply is asked over TCP")
    func hundredThroughDNSServer() async throws {
        try await withLab { lab in
            let answer = try await Self.server(lab).resolve("hundred.lab.test", families: [.v4], timeout: .seconds(10))
            #expect(answer.error == nil)
            #expect(answer.ipv4.count == 100)
            #expect(answer.ipv4.last == "127.0.1.100")
            let seen = lab.dnsQueries().filter { $0.name == "hundred.lab.test" }.map(\.transport)
            #expect(seen.last == "tcp")
        }
    }

    @Test(
        "100 A records through DoH: the note says 100 came and how many are kept",
        arguments: [LabFormat.dohWire, .dohWirePost])
    func hundredThroughDoH(format: LabFormat) async throws {
        try await withLab { lab in
            let answer = try await format.provider(lab).resolve("hundred.lab.test", families: [.v4])
            #expect(answer.ipv4.count == ProviderAnswer.maxAddressesPerFamily)
            #expect(
                answer.notes.contains {
                    $0.hasPrefix(
                        "the service sent 100 IPv4 addresses; only the first \(ProviderAnswer.maxAddressesPerFamily)")
                }, "\(answer.notes)")
        }
    }

    static let rcodes: [(name: String, code: String, meaning: String)] = [
        ("servfail.lab.test", "SERVFAIL", "failed to get an answer upstream"),
        ("refused.lab.test", "REFUSED", "will not resolve this name for this client"),
        ("notimp.lab.test", "NOTIMP", "does not implement this kind of query"),
        ("formerr.lab.test", "FORMERR", "could not read the query"),
    ]

    @Test(
        "SERVFAIL, REFUSED, NOTIMP and FORMERR through the DNS server: named, never 'nothing listens'",
        arguments: rcodes)
    func rcodesThroughDNSServer(name: String, code: String, meaning: String) async throws {
        try await withLab { lab in
            let answer = try await Self.server(lab).resolve(name, families: [.v4], timeout: .seconds(10))
            let error = try #require(answer.error?.sentence)
            #expect(error.contains("answered \(code) for \(name)"), "\(error)")
            #expect(error.contains(meaning), "\(error)")
            #expect(!error.contains("nothing listens"), "\(error)")
        }
    }

    @Test(
        "SERVFAIL, REFUSED, NOTIMP and FORMERR through DoH GET and POST and DoH JSON: named, never 'malformed'",
        arguments: rcodes)
    func rcodesThroughDoH(name: String, code: String, meaning: String) async throws {
        try await withLab { lab in
            for format in LabFormat.answeringRCodes {
                let error = try await Self.dohError(format, lab, name)
                #expect(error.contains("answered \(code) for \(name)"), "\(format): \(error)")
                #expect(error.contains(meaning), "\(format): \(error)")
                #expect(!error.contains("malformed") && !error.contains("RFC 8484"), "\(format): \(error)")
            }
        }
    }

    @Test("a name without addresses is NODATA and a missing name NXDOMAIN, through the DNS server and DoH")
    func noDataApartFromNXDomain() async throws {
        try await withLab { lab in
            let server = try Self.server(lab)
            let noData = try #require(
                await server.resolve("nodata.lab.test", families: [.v4, .v6], timeout: .seconds(10)).error?.sentence)
            #expect(noData.contains("nodata.lab.test exists but has no address (NODATA)"), "\(noData)")
            let missing = try #require(
                await server.resolve("nowhere.lab.test", families: [.v4], timeout: .seconds(10)).error?.sentence)
            #expect(missing.contains("NXDOMAIN"), "\(missing)")
            for format in LabFormat.answeringRCodes {
                let noData = try await Self.dohError(format, lab, "nodata.lab.test")
                #expect(noData.contains("nodata.lab.test exists but has no IPv4 address (NODATA)"), "\(noData)")
                #expect(!noData.contains("no such name"), "\(noData)")
                let missing = try await Self.dohError(format, lab, "nowhere.lab.test")
                #expect(missing.contains("answered NXDOMAIN for nowhere.lab.test"), "\(missing)")
            }
        }
    }

    @Test(
        "a 5 s TTL through DoH GET and POST is 5 s, for A and for AAAA",
        arguments: [LabFormat.dohWire, .dohWirePost])
    func fiveSecondTTL(format: LabFormat) async throws {
        try await withLab { lab in
            let answer = try await format.provider(lab).resolve("ttl5.lab.test", families: [.v4, .v6])
            #expect(answer.ttl == FamilyTTL(v4: 5, v6: 5))
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(answer.ipv6 == ["::1"])
        }
    }

    @Test("--provider system beside --dns-server: getaddrinfo's own answer, nothing copied, no TTL invented")
    func systemProviderBesideDNSServer() async throws {
        try await withLab { lab in
            let cache = try Self.cache(ResolverConfiguration(provider: .system, timeout: 10), askingDNSOf: lab)
            // The DNS server knows the lab name; getaddrinfo does not, and says so.
            let resolution = await cache.resolve("ttl5.lab.test", family: .v4)
            #expect(resolution.system.ipv4 == ["127.0.0.1"])
            #expect(resolution.httpdns.source == .system)
            #expect(resolution.httpdns.ipv4.isEmpty)
            #expect(resolution.httpdns.ttl.isEmpty)
            let error = try #require(resolution.httpdns.error?.sentence)
            #expect(error.contains("getaddrinfo"), "\(error)")
            #expect(cache.entries().isEmpty)
            // Where getaddrinfo answers, the answer says it carries no TTL.
            let local = await cache.resolve("localhost", family: .v4)
            #expect(local.httpdns.source == .system)
            #expect(local.httpdns.notes?.contains { $0.contains("gives no TTL") } == true, "\(local.httpdns)")
        }
    }

    @Test("the DNS server column carries its TTL and CNAME chain, in the answer and the JSON")
    func dnsServerTTLAndChain() async throws {
        try await withLab { lab in
            let cache = try Self.cache(LabFormat.dohWire.configuration(lab), askingDNSOf: lab)
            let alias = await cache.resolve("alias.lab.test", family: .v4)
            #expect(alias.system.ipv4 == ["127.0.0.1"])
            #expect(alias.system.cname == ["alias-hop.lab.test", "plain.lab.test"])
            #expect(alias.system.ttl == 60)
            let short = await cache.resolve("ttl5.lab.test", family: .both)
            #expect(short.system.ttl == 5)
            #expect(short.system.cname == nil)
            let json = String(decoding: try JSONEncoder().encode(alias), as: UTF8.self)
            #expect(json.contains(#""cname":["alias-hop.lab.test","plain.lab.test"]"#), "\(json)")
            let decoded = try JSONDecoder().decode(HostResolution.self, from: Data(json.utf8))
            #expect(decoded.system == alias.system)
            // getaddrinfo gives neither: the JSON leaves both out.
            let plain = String(
                decoding: try JSONEncoder().encode(SystemAnswer(ipv4: ["127.0.0.1"])), as: UTF8.self)
            #expect(!plain.contains("ttl") && !plain.contains("cname"))
        }
    }

    @Test("EDNS(0) at the DNS server: 30 addresses come over UDP alone, the query offering 1232 bytes")
    func ednsAtTheDNSServer() async throws {
        try await withLab { lab in
            let answer = try await Self.server(lab).resolve("thirty.lab.test", families: [.v4], timeout: .seconds(10))
            #expect(answer.ipv4.count == 30)
            let seen = lab.dnsQueries().filter { $0.name == "thirty.lab.test" }
            #expect(seen.map(\.transport) == ["udp"])
            #expect(seen.first?.edns == 1232)
            // A server that answers FORMERR to EDNS is asked again without it, then named.
            let formerr = try await Self.server(lab).resolve("formerr.lab.test", families: [.v4], timeout: .seconds(10))
            #expect(formerr.error?.sentence.contains("answered FORMERR") == true, "\(formerr.error?.sentence ?? "")")
            #expect(lab.dnsQueries().filter { $0.name == "formerr.lab.test" }.map(\.edns) == [1232, nil])
        }
    }

    @Test(
        "DoH GET and POST queries carry EDNS(0), padded to 128 bytes, and a User-Agent naming ipdirect",
        arguments: [LabFormat.dohWire, .dohWirePost])
    func ednsPaddingAndUserAgentOnDoH(format: LabFormat) async throws {
        try await withLab { lab in
            let answer = try await format.provider(lab).resolve("thirty.lab.test", families: [.v4, .v6])
            #expect(answer.ipv4.count == 30)
            let queries = lab.httpdnsQueries().filter { $0.host == "thirty.lab.test" }
            #expect(queries.count == 2)
            for query in queries {
                #expect(query.userAgent == "ipdirect/\(IPDirectVersion.string)")
                #expect(query.edns == 1232)
                #expect(query.dnsQueryLength.map { $0 % 128 == 0 } == true, "\(query)")
            }
        }
    }
}

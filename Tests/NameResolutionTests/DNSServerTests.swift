// A chosen DNS server as the system column, against the lab's LocalDNS stand-in through c-ares:
// agreement and hijack, UDP then TCP on truncation, every failure as a sentence naming the server, and
// channels kept between lookups only when every query was answered.
import ConfigurationSources
import Foundation
import Lab
import NameResolutionTesting
import Testing

@testable import NameResolution

@Suite("A chosen DNS server against the lab")
struct DNSServerTests {
    /// A cache whose HTTPDNS is the lab's RFC 8484 endpoint and whose system column is the lab's DNS server.
    static func cache(_ lab: Lab, timeout: Double = 10) throws -> ResolverCache {
        var configuration = LabFormat.dohWire.configuration(lab, timeout: timeout)
        configuration.dnsServer = try DNSServer.parse(lab.endpoints.dns)
        return ResolverCache(
            configuration: configuration, provider: try ProviderFactory.make(configuration), clock: ManualClock(Date()))
    }

    @Test("HOST[:PORT] is read as dig @server would take it, and refused in words otherwise")
    func parsing() throws {
        #expect(try DNSServer.parse("223.5.5.5") == DNSServer(address: "223.5.5.5", port: 53))
        #expect(try DNSServer.parse("127.0.0.1:5353") == DNSServer(address: "127.0.0.1", port: 5353))
        #expect(try DNSServer.parse("[::1]:53") == DNSServer(address: "::1", port: 53))
        #expect(try DNSServer.parse("::1") == DNSServer(address: "::1", port: 53))
        #expect("\(try DNSServer.parse("[::1]:5353"))" == "[::1]:5353")
        for junk in ["dns.example", "1.2.3.4:0", "1.2.3.4:x", "[::1]5"] {
            #expect(throws: ConfigurationError.self, "\(junk)") { try DNSServer.parse(junk) }
        }
        let (layer, _) = try ConfigurationLayer.toml(
            "dns_server = \"127.0.0.1:5353\"\ndoh_method = \"post\"", path: "c")
        #expect(layer.dnsServer == DNSServer(address: "127.0.0.1", port: 5353))
        #expect(layer.dohMethod == .post)
    }

    @Test("where the LocalDNS agrees, the columns agree, and JSON names the resolver")
    func agreement() async throws {
        try await withLab { lab in
            let cache = try Self.cache(lab)
            let resolution = await cache.resolve("sni-a.lab.test", family: .v4)
            #expect(resolution.system.ipv4 == ["127.0.0.1"])
            #expect(resolution.agreement == .same)
            let json = String(decoding: try JSONEncoder().encode(resolution), as: UTF8.self)
            #expect(json.contains(#""resolver":"dns \#(lab.endpoints.dns)""#))
            let decoded = try JSONDecoder().decode(HostResolution.self, from: Data(json.utf8))
            #expect(decoded.system.resolver == .dns(try DNSServer.parse(lab.endpoints.dns)))
        }
    }

    @Test("the hijacked name shows as disjoint: the LocalDNS's address beside HTTPDNS's")
    func hijack() async throws {
        try await withLab { lab in
            let cache = try Self.cache(lab)
            let resolution = await cache.resolve("hijacked.lab.test", family: .v4)
            #expect(resolution.system.ipv4.map(\.text) == [LabLocalDNS.hijackAddress])
            #expect(resolution.httpdns.ipv4 == ["127.0.0.1"])
            #expect(resolution.agreement == .disjoint)
        }
    }

    @Test("a truncated UDP reply is asked again over TCP")
    func tcpOnTruncation() async throws {
        try await withLab { lab in
            let answer = await DNSServerResolver(server: try DNSServer.parse(lab.endpoints.dns))
                .resolve("tcp-only.lab.test", families: [.v4], timeout: .seconds(10))
            #expect(answer.error == nil)
            #expect(answer.ipv4 == ["127.0.0.1"])
            let seen = lab.dnsQueries().filter { $0.name == "tcp-only.lab.test" }.map(\.transport)
            #expect(seen == ["udp", "tcp"])
        }
    }

    @Test(
        "each failure is a sentence naming the server; HTTPDNS still answers beside it",
        arguments: [
            ("nxdomain.lab.test", "no such name nxdomain.lab.test (NXDOMAIN)"),
            ("slow-dns.lab.test", "no answer for slow-dns.lab.test within 10 s (none came"),
            ("wrong-id.lab.test", "only replies with a wrong id or for another question"),
            ("truncated.lab.test", "its reply for truncated.lab.test cannot be read"),
        ])
    func failures(name: String, words: String) async throws {
        // HTTPDNS shares the deadline, so it stays wide; the slow name answers well after it.
        try await withLab(LabOptions(slowDNSDelay: 15)) { lab in
            let cache = try Self.cache(lab)
            let resolution = await cache.resolve(name, family: .v4)
            let error = try #require(resolution.system.error?.sentence, "\(name)")
            #expect(error.hasPrefix("DNS server \(lab.endpoints.dns)"), "\(error)")
            #expect(error.contains(words), "\(error)")
            #expect(resolution.system.ipv4.isEmpty)
            #expect(resolution.httpdns.ipv4 == ["127.0.0.1"])
            #expect(resolution.agreement == .systemFailed)
        }
    }

    @Test("a server where nothing listens is refused in words, not a hang")
    func nothingListens() async throws {
        try await withLab { lab in
            // The HTTPDNS TCP port: nothing answers UDP there, so the kernel refuses.
            let port = try #require(URLComponents(string: lab.endpoints.httpdns)?.port)
            let answer = await DNSServerResolver(server: DNSServer(address: "127.0.0.1", port: port))
                .resolve("sni-a.lab.test", families: [.v4], timeout: .seconds(1))
            let error = try #require(answer.error?.sentence)
            #expect(error.hasPrefix("DNS server 127.0.0.1:\(port)"))
            #expect(error.contains("refused") || error.contains("no answer"), "\(error)")
        }
    }

    @Test("lookups in turn and at once each get their own answer; a channel is kept only after replies")
    func keptChannels() async throws {
        try await withLab { lab in
            let server = try DNSServer.parse(lab.endpoints.dns)
            let settings = DNSServerResolver.ChannelSettings(server: server, transport: .udp, timeoutMs: 2000)
            let resolver = DNSServerResolver(server: server)
            func lookup(_ name: String) async -> SystemAnswer {
                await resolver.resolve(name, families: [.v4], timeout: .seconds(2))
            }
            #expect(await lookup("sni-a.lab.test").ipv4 == ["127.0.0.1"])
            #expect(DNSServerResolver.channels.count(settings) == 1)
            // The wrong-id replies leave the query unanswered: that channel is not kept.
            let unanswered = await lookup("wrong-id.lab.test")
            #expect(unanswered.error?.sentence.contains("only replies with a wrong id") == true)
            #expect(DNSServerResolver.channels.count(settings) == 0)
            let missing = await lookup("nxdomain.lab.test")
            #expect(missing.error?.sentence.contains("NXDOMAIN") == true)
            #expect(await lookup("hijacked.lab.test").ipv4.map(\.text) == [LabLocalDNS.hijackAddress])
            #expect(await lookup("tcp-only.lab.test").ipv4 == ["127.0.0.1"])
            #expect(await lookup("sni-a.lab.test").ipv4 == ["127.0.0.1"])
            let names = (0..<24).map { $0 % 2 == 0 ? "sni-a.lab.test" : "hijacked.lab.test" }
            let answers = await withTaskGroup(of: (String, [String]).self) { group in
                for name in names { group.addTask { (name, await lookup(name).ipv4.map(\.text)) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == names.count)
            for (name, ipv4) in answers {
                #expect(ipv4 == [name == "sni-a.lab.test" ? "127.0.0.1" : LabLocalDNS.hijackAddress], "\(name)")
            }
            #expect((1...ResolutionGate.systemLookupLimit).contains(DNSServerResolver.channels.count(settings)))
        }
    }
}

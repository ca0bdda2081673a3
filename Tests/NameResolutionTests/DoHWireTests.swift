// RFC 8484 against the lab over real libcurl: GET and POST queries built by c-ares, A and AAAA with
// their TTLs, a CNAME chain followed within the answer, NXDOMAIN and junk bodies as sentences.
import ConfigurationSources
import Foundation
import Lab
import NameResolution
import NameResolutionTesting
import Testing

@Suite("RFC 8484 DoH against the lab")
struct DoHWireTests {
    @Test("GET and POST both give A and AAAA with the zone's TTL", arguments: [LabFormat.dohWire, .dohWirePost])
    func dualStack(format: LabFormat) async throws {
        try await withLab { lab in
            let provider = try format.provider(lab)
            #expect(provider.name == "doh")
            let answer = try await provider.resolve("dual.lab.test", families: [.v4, .v6])
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(answer.ipv6 == ["::1"])
            #expect(answer.ttl == FamilyTTL(v4: 60, v6: 60))
            #expect(answer.answered == [.v4, .v6])
            let queries = lab.httpdnsQueries().filter { $0.host == "dual.lab.test" }
            let wanted = format == .dohWire ? "doh-wire" : "doh-wire-post"
            #expect(queries.count == 2)
            #expect(queries.allSatisfy { $0.format == wanted })
            if format == .dohWire {
                // The query travels base64url-encoded without padding, nothing else in the URL.
                let prefix = "/dns-query?dns="
                #expect(
                    queries.allSatisfy {
                        $0.path.hasPrefix(prefix) && !$0.path.dropFirst(prefix.count).contains { "=&+/".contains($0) }
                    })
            }
        }
    }

    @Test("a CNAME chain in the answer is followed to the addresses")
    func cnameChain() async throws {
        try await withLab { lab in
            let record = try #require(lab.endpoints.zone.first { $0.name == "alias.lab.test" })
            #expect(record.cname == ["alias-hop.lab.test", "plain.lab.test"])
            let answer = try await LabFormat.dohWire.provider(lab).resolve("alias.lab.test", families: [.v4])
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(answer.host == "alias.lab.test")
        }
    }

    @Test("a name the server does not know is NXDOMAIN, said as such")
    func nxdomain() async throws {
        try await withLab { lab in
            let provider = try LabFormat.dohWire.provider(lab)
            let error = await #expect(throws: ResolutionError.self) {
                try await provider.resolve("nowhere.lab.test", families: [.v4])
            }
            #expect(
                error?.description.contains("answered NXDOMAIN for nowhere.lab.test: the name does not exist") == true)
        }
    }

    @Test("a junk body is a sentence naming the server; nothing cached; the system column still shown")
    func junkBody() async throws {
        try await withLab(LabOptions()) { lab in
            var configuration = LabFormat.dohWire.configuration(lab)
            configuration.dnsServer = try DNSServer.parse(lab.endpoints.dns)
            let cache = ResolverCache(
                configuration: configuration, provider: try ProviderFactory.make(configuration),
                clock: ManualClock(Date()))
            try await lab.setFault(.malformed)
            let resolution = await cache.resolve("sni-a.lab.test", family: .v4)
            let error = try #require(resolution.httpdns.error?.sentence)
            #expect(error.contains("malformed HTTPDNS answer"))
            #expect(error.contains(configuration.endpoint!))
            #expect(error.contains("RFC 8484"))
            #expect(cache.entries().allSatisfy { $0.source == .systemFallback })
            #expect(resolution.system.ipv4 == ["127.0.0.1"])
            #expect(resolution.system.resolver == .dns(try DNSServer.parse(lab.endpoints.dns)))
        }
    }

    @Test("the DoH endpoint answering JSON instead of a DNS message is told apart")
    func wrongMediaType() async throws {
        try await withLab { lab in
            // A JSON answer (the lab's fault switch says {"fault":"none"}) is not RFC 8484.
            let configuration = ResolverConfiguration(
                provider: .doh, endpoint: lab.endpoints.control + "/fault", timeout: 2)
            do {
                _ = try await ProviderFactory.make(configuration).resolve("sni-a.lab.test", families: [.v4])
                Issue.record("a JSON endpoint was taken for RFC 8484")
            } catch {
                #expect("\(error)".contains("use the doh-json provider"), "\(error)")
            }
        }
    }
}

// The provider registry: one row per kind that the factory, `--provider`'s help, the endpoint
// defaults and the fuzz corpora read, and the provider's name on answers encoded as before.
import ConfigurationSources
import Foundation
import LabFaults
import NameResolution
import Testing

@Suite("Provider registry")
struct ProviderRegistryTests {
    @Test("every provider kind has exactly one row, and the factory builds each through it")
    func everyKindHasARow() throws {
        #expect(
            ProviderRegistry.all.map(\.kind).sorted { $0.rawValue < $1.rawValue }
                == ProviderKind.allCases.sorted { $0.rawValue < $1.rawValue })
        for kind in ProviderKind.allCases {
            let configuration = ResolverConfiguration(
                provider: kind, endpoint: "https://198.51.100.7/", account: "1")
            let provider = try ProviderFactory.make(configuration)
            // The legacy API calls itself alicloud on answers, as it always has.
            let named = kind == .alicloudLegacy ? "alicloud" : kind.rawValue
            #expect(provider.name.hasPrefix(named), "\(kind) built \(provider.name)")
        }
    }

    @Test(
        "the lab's handlers follow the registry: each wire format the lab speaks is one kind's, and a route's path is its format's"
    )
    func labFormatsFromTheRegistry() {
        let formats = ProviderRegistry.all.compactMap(\.lab?.format)
        #expect(
            formats.sorted { $0.rawValue < $1.rawValue } == LabWireFormat.allCases.sorted { $0.rawValue < $1.rawValue })
        for route in ProviderRegistry.all.compactMap(\.lab) where !route.path.isEmpty {
            #expect(LabWireFormat.serving(route.path.split(separator: "/").map(String.init)) == route.format)
        }
    }

    @Test("--provider's help lists every kind with its note, as it always read")
    func helpSentence() {
        #expect(
            ProviderRegistry.helpSentence
                == "HTTPDNS flavour: alicloud (v2), alicloud-legacy, tencent, doh (RFC 8484), doh-json, or system (no HTTPDNS)."
        )
    }

    @Test("each kind's endpoint when none is given comes from its row")
    func defaultEndpoints() {
        func endpoint(_ kind: ProviderKind, secret: String? = nil) -> String? {
            var configuration = ResolverConfiguration(provider: kind)
            configuration.secret = secret
            return configuration.effectiveEndpoint
        }
        #expect(endpoint(.system) == nil)
        #expect(endpoint(.alicloud) == "service discovery (region cn)")
        // Legacy discovers too (/ss from the region's start IPs), signed or not.
        #expect(endpoint(.alicloudLegacy) == "service discovery (region cn)")
        #expect(endpoint(.alicloudLegacy, secret: "00") == "service discovery (region cn)")
        #expect(endpoint(.tencent) == "http://119.29.29.29")
        #expect(endpoint(.dohJSON) == "https://dns.alidns.com/resolve")
        #expect(endpoint(.doh) == nil)
    }

    @Test("the provider on an answer is written as the plain string it always was")
    func providerIDEncoding() throws {
        let answer = HTTPDNSAnswer(provider: ProviderID("alicloud (signed)"), ipv4: ["192.0.2.1"])
        let json = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
        #expect(json.contains(#""provider":"alicloud (signed)""#))
        let back = try JSONDecoder().decode(HTTPDNSAnswer.self, from: Data(json.utf8))
        #expect(back.provider == "alicloud (signed)")
        #expect(back == answer)
    }
}

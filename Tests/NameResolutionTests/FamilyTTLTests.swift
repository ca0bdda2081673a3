// Per-family TTLs, as every Alibaba SDK keeps them: an A that lives 120 s beside an AAAA that
// lives 60 s stays cached and served after the AAAA expires, and only the AAAA is asked again.
import Foundation
import FoundationGaps
import Lab
import NameResolutionTesting
import Testing

@testable import NameResolution

@Suite("Per-family TTL")
struct FamilyTTLTests {
    /// The lab's split-ttl.lab.test: A 127.0.0.1 for 120 s, AAAA ::1 for 60 s.
    static let name = "split-ttl.lab.test"

    @Test(
        "an A that outlives its AAAA stays cached and served while the AAAA alone is asked again",
        arguments: [LabFormat.alicloud, .dohResolve])
    func aOutlivesAAAA(format: LabFormat) async throws {
        try await withLab { lab in
            let clock = ManualClock()
            var configuration = format.configuration(lab)
            configuration.family = .both
            let cache = ResolverCache(configuration: configuration, provider: try format.provider(lab), clock: clock)
            let first = await cache.resolve(Self.name)
            #expect(first.httpdns.ipv4 == ["127.0.0.1"])
            #expect(first.httpdns.ipv6 == ["::1"])
            let askedBefore = lab.httpdnsQueries().count

            clock.advance(61)
            #expect(cache.lookup(Self.name, family: .v4)?.ips == ["127.0.0.1"], "the A is within its 120 s")
            let again = await cache.resolve(Self.name)
            #expect(again.httpdns.ipv4 == ["127.0.0.1"])
            #expect(again.httpdns.ipv6 == ["::1"])
            let asked = lab.httpdnsQueries().dropFirst(askedBefore)
            // The v2 service is asked q=6 alone; DoH JSON type=AAAA alone.
            #expect(asked.count == 1, "\(asked.map(\.path))")
            #expect(
                asked.allSatisfy {
                    $0.path.contains("q=6&") || $0.path.hasSuffix("q=6") || $0.path.contains("type=AAAA")
                },
                "\(asked.map(\.path))")
            let entries = cache.entries().filter { $0.host == Self.name }
            #expect(entries.first { $0.family == .v4 }?.ttl == 120)
            #expect(entries.first { $0.family == .v6 }?.ttl == 60)
        }
    }

    @Test("a family with no address gets no TTL in the answer; the other keeps its own (A 120 s, empty AAAA 60 s)")
    func emptyFamilyHasNoTTL() throws {
        let body = Array(
            #"{"cip":"10.0.0.9","answers":[{"dn":"a.test","v4":{"ips":["192.0.2.1"],"ttl":120},"v6":{"ips":[],"ttl":60}}]}"#
                .utf8)
        let object = try #require(JSONValue(parsing: body)?.object)
        let answer = try #require(
            try AliCloudV2Provider.answers(object, hosts: ["a.test"], families: [.v4, .v6], ms: 1, server: "lab")[
                "a.test"]?.get())
        #expect(answer.shownTTL == FamilyTTL(v4: 120))
        #expect(answer.ttl == FamilyTTL(v4: 120, v6: 60))
    }
}

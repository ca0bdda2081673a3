// Every HTTPDNS format against the real lab over real libcurl and TLS: every name resolves,
// signing works and fails the way a user can act on, families come out right, junk is refused.
import ConfigurationSources
import Foundation
import Lab
import NameResolution
import Testing

@Suite("Providers against the lab")
struct LabProviderTests {
    @Test("every provider format resolves every lab name", arguments: LabFormat.allCases)
    func everyFormatResolvesEveryName(format: LabFormat) async throws {
        try await withLab { lab in
            let provider = try format.provider(lab)
            for record in lab.endpoints.zone {
                // DNS errors reach only the formats with an RCODE; DNSAnswerTellingTests tell each by name.
                if record.rcode != nil, LabFormat.answeringRCodes.contains(format) { continue }
                let v4 = record.ipv4.filter { IPLiteral.family(of: $0) == .v4 }
                let v6 = record.ipv6.filter { IPLiteral.family(of: $0) == .v6 }
                let junk = record.ipv4.filter { !v4.contains($0) } + record.ipv6.filter { !v6.contains($0) }
                guard junk.isEmpty || !format.carriesText else {
                    // A name whose answer carries junk is refused whole, the junk named.
                    await #expect(throws: ResolutionError.notAnIP(junk: junk), "\(format) \(record.name)") {
                        try await provider.resolve(record.name, families: [.v4, .v6])
                    }
                    continue
                }
                if v4.isEmpty, v6.isEmpty {
                    await #expect(throws: ResolutionError.self, "\(format) \(record.name)") {
                        try await provider.resolve(record.name, families: [.v4, .v6])
                    }
                    continue
                }
                let answer = try await provider.resolve(record.name, families: [.v4, .v6])
                let kept = ProviderAnswer.maxAddressesPerFamily
                #expect(answer.ipv4.map(\.text) == Array(v4.prefix(kept)), "\(format) \(record.name)")
                #expect(answer.ipv6.map(\.text) == Array(v6.prefix(kept)), "\(format) \(record.name)")
                // Each family keeps its own TTL; the legacy single answer carries one for both.
                let oneTTL = [.alicloudLegacy, .alicloudLegacySigned, .alicloudLegacyTLS].contains(format)
                #expect(answer.shownTTL.v4 == (v4.isEmpty ? nil : record.ttl), "\(format) \(record.name)")
                #expect(
                    answer.shownTTL.v6 == (v6.isEmpty ? nil : oneTTL ? record.ttl : record.ttl(true)),
                    "\(format) \(record.name)")
            }
        }
    }

    @Test("alicloud-legacy batch pre-resolve answers every name, five a request")
    func alicloudBatch() async throws {
        try await withLab { lab in
            let provider = try LabFormat.alicloudLegacy.provider(lab)
            let names = lab.endpoints.zone.filter { $0.ipv4 == ["127.0.0.1"] }.map(\.name)
            let results = await provider.resolveBatch(names, families: [.v4])
            for name in names {
                let answer = try results[name]?.get()
                #expect(answer?.ipv4 == ["127.0.0.1"], "\(name)")
            }
            let batches = lab.httpdnsQueries().filter { $0.format == "alicloud-batch" }
            #expect(batches.count == (names.count + 4) / 5)
        }
    }

    /// Issue 32: optimised, the task group that resolves such a batch one name at a time lost the
    /// names (a miscompile, see `HTTPDNSProvider.resolveBatch`); `make tsan-opt` runs this at -O.
    @Test(
        "a provider without a batch API answers each name of a batch, under its own name",
        arguments: [LabFormat.dohResolve, .dohWire, .dohWirePost])
    func oneAtATimeBatch(format: LabFormat) async throws {
        try await withLab { lab in
            let provider = try format.provider(lab)
            let names = ["plain.lab.test", "dual.lab.test", "single.lab.test", "sni-a.lab.test"]
            for _ in 0..<5 {
                let results = await provider.resolveBatch(names, families: [.v4])
                #expect(results.keys.sorted() == names.sorted())
                for name in names {
                    #expect((try? results[name]?.get())?.host == name, "\(name): \(String(describing: results[name]))")
                }
            }
        }
    }

    @Test("signed alicloud-legacy works with the right secret and reports a rejected signature with a wrong one")
    func signing() async throws {
        try await withLab { lab in
            let good = try LabFormat.alicloudLegacySigned.provider(lab)
            let answer = try await good.resolve("sni-a.lab.test", families: [.v4])
            #expect(answer.ipv4 == ["127.0.0.1"])
            #expect(lab.httpdnsQueries().last?.format == "alicloud-signed")

            var wrong = LabFormat.alicloudLegacySigned.configuration(lab)
            wrong.secret = "not-the-secret"
            let bad = try ProviderFactory.make(wrong)
            await #expect(throws: ResolutionError.signatureRejected) {
                try await bad.resolve("sni-a.lab.test", families: [.v4])
            }
            #expect(
                ResolutionError.signatureRejected.description
                    == "signature rejected: check the secret and this machine's clock")
        }
    }

    @Test("an unknown account is named")
    func unknownAccount() async throws {
        try await withLab { lab in
            var config = LabFormat.alicloudLegacy.configuration(lab)
            config.account = "999999"
            let provider = try ProviderFactory.make(config)
            await #expect(throws: ResolutionError.invalidAccount("999999")) {
                try await provider.resolve("plain.lab.test", families: [.v4])
            }
        }
    }

    @Test(
        "a name the service does not know is 'no such name' (NXDOMAIN by name from DNS messages)",
        arguments: LabFormat.allCases)
    func noSuchName(format: LabFormat) async throws {
        try await withLab { lab in
            let provider = try format.provider(lab)
            do {
                _ = try await provider.resolve("nowhere.lab.test", families: [.v4])
                Issue.record("\(format) resolved a name the lab does not have")
            } catch {
                let said =
                    LabFormat.answeringRCodes.contains(format)
                    ? "answered NXDOMAIN for nowhere.lab.test" : "no such name"
                #expect("\(error)".contains(said), "\(format): \(error)")
            }
        }
    }

    @Test("auto, v4, v6 and both give the right families for dual.lab.test")
    func familiesForDual() async throws {
        try await withLab { lab in
            for format in LabFormat.allCases {
                let cache = ResolverCache(
                    configuration: format.configuration(lab), provider: try format.provider(lab))
                let v4 = await cache.resolve("dual.lab.test", family: .v4)
                #expect(v4.httpdns.ipv4 == ["127.0.0.1"] && v4.httpdns.ipv6.isEmpty, "\(format)")
                let v6 = await cache.resolve("dual.lab.test", family: .v6)
                #expect(v6.httpdns.ipv4.isEmpty && v6.httpdns.ipv6 == ["::1"], "\(format)")
                let both = await cache.resolve("dual.lab.test", family: .both)
                #expect(both.httpdns.ipv4 == ["127.0.0.1"] && both.httpdns.ipv6 == ["::1"], "\(format)")
                let auto = await cache.resolve("dual.lab.test", family: .auto)
                #expect(auto.httpdns.ipv4 == ["127.0.0.1"], "\(format)")
                #expect(auto.httpdns.ipv6 == (IPv6Route.available() ? ["::1"] : []), "\(format)")
            }
        }
    }

    @Test(
        "an answer carrying junk is refused whole, the junk named, and nothing cached",
        arguments: LabFormat.allCases.filter(\.carriesText))
    func poisonedAnswer(format: LabFormat) async throws {
        try await withLab { lab in
            let cache = ResolverCache(configuration: format.configuration(lab), provider: try format.provider(lab))
            let resolution = await cache.resolve("poisoned.lab.test", family: .both)
            #expect(
                resolution.httpdns.error?.sentence.hasSuffix("which are not IP addresses: answer refused") == true,
                "\(resolution.httpdns.error?.sentence ?? "no error")")
            #expect(resolution.httpdns.error?.sentence.contains("'not-an-ip'") == true)
            #expect(resolution.httpdns.ipv4.isEmpty && resolution.httpdns.ipv6.isEmpty)
            #expect(Set(resolution.httpdns.rejected ?? []) == ["not-an-ip", "999.1.2.3", "fe80::zz"])
            #expect(cache.entries().filter { $0.host == "poisoned.lab.test" }.isEmpty)
        }
    }

    @Test("an answer that is all junk is an error that names it, and nothing is cached")
    func allJunk() async throws {
        let provider = ScriptedJunk()
        // Wide, as CacheTests.config: the junk comes at once, but its delivery waits for a cooperative
        // thread that a loaded suite's labs can hold past 30 s while the deadline's timer runs.
        let cache = ResolverCache(
            configuration: ResolverConfiguration(timeout: 120, fallbackToSystem: false), provider: provider)
        let resolution = await cache.resolve("junk.example", family: .v4)
        #expect(resolution.httpdns.error == "HTTPDNS answered 'not-an-ip', which is not an IP address: answer refused")
        #expect(resolution.agreement == .httpdnsFailed || resolution.agreement == .bothFailed)
        #expect(cache.entries().isEmpty)
    }
}

/// A provider whose service sends one non-IP string, through the same screening as the real ones.
struct ScriptedJunk: HTTPDNSProvider {
    var name: String { "junk" }
    func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        let v4 = IPLiteral.screen(["not-an-ip"], family: .v4)
        if v4.valid.isEmpty { throw .notAnIP(junk: v4.rejected) }
        return ProviderAnswer(host: host, ipv4: v4.valid, ttl: FamilyTTL(60, for: families), answered: families)
    }
}

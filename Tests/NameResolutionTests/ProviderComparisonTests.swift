// Several providers from the configuration file, compared against the real lab: what each
// answered, who agrees with whom and with the system column, and secrets kept out of the file.
import ConfigurationSources
import Foundation
import Lab
import NameResolution
import Testing

@Suite struct ProviderComparisonTests {
    private func parse(_ text: String) throws -> (layer: ConfigurationLayer, warnings: [String]) {
        try ConfigurationLayer.toml(text, path: "config.toml")
    }

    @Test("[[providers]] tables read with their secrets' variable names, never the secrets")
    func providerTables() throws {
        let parsed = try parse(
            """
            provider = "alicloud"
            [[providers]]
            name = "aliyun"
            kind = "alicloud"
            account = "139450"
            cipher = "aes-cbc"
            secret_env = "ALI_SECRET"
            key_env = "ALI_KEY"
            colour = "blue"

            [[providers]]
            kind = "doh"
            endpoint = "https://dns.alidns.com/dns-query"
            """)
        let providers = try #require(parsed.layer.providers)
        #expect(providers.map(\.name) == ["aliyun", "doh"])
        #expect(providers[0].cipher == .aesCBC)
        #expect(providers[0].secretVariable == "ALI_SECRET")
        #expect(parsed.warnings.contains { $0.contains("'colour' in providers[1]") })

        let base = ResolverConfiguration()
        let configuration = try providers[0].configuration(
            over: base, environment: ["ALI_SECRET": "00112233", "ALI_KEY": "aabbccdd"])
        #expect(configuration.provider == .alicloud)
        #expect(configuration.secret == "00112233")
        #expect(configuration.key == "aabbccdd")
        var shown = parsed.layer.resolved(defaultCachePath: nil)
        shown.secret = nil
        let text = "\(shown)"
        #expect(text.contains("secret from $ALI_SECRET"))

        // A variable that is not set is named, with what to do.
        #expect {
            _ = try providers[0].configuration(over: base, environment: [:])
        } throws: { error in
            "\(error)".contains("ALI_SECRET, which is not set: export ALI_SECRET")
        }
    }

    @Test("a secret written into a provider table, an unknown kind or a repeated name is refused with a sentence")
    func refusedTables() {
        let cases: [(String, String)] = [
            ("[[providers]]\nkind = \"alicloud\"\nsecret = \"abc\"", "name it with secret_env"),
            ("[[providers]]\nkind = \"bind9\"", "providers[1].kind: 'bind9' is not one of"),
            ("[[providers]]\nendpoint = \"http://x\"", "providers[1].kind' must be one of"),
            ("[[providers]]\nkind = \"doh\"\n[[providers]]\nkind = \"doh\"", "two providers are named 'doh'"),
            ("theme = \"sepia\"", "theme: 'sepia' is not one of auto, light, dark"),
            ("[keys]\nquit = 1", "'keys.quit' must be a key or an array of keys"),
        ]
        for (text, sentence) in cases {
            #expect(throws: ConfigurationError.self) { try parse(text) }
            do {
                _ = try parse(text)
            } catch {
                #expect("\(error)".contains(sentence), "\(error)")
            }
        }
    }

    @Test("theme and [keys] are read for the console")
    func consoleSettings() throws {
        let parsed = try parse("theme = \"light\"\n[keys]\nquit = [\"x\", \"Ctrl-Q\"]\nhelp = \"h\"")
        let settings = parsed.layer.resolved(defaultCachePath: nil).console
        #expect(settings.theme == .light)
        #expect(Set(settings.keys.map(\.action)) == ["quit", "help"])
        #expect(settings.keys.first { $0.action == "quit" }?.keys == ["x", "Ctrl-Q"])
        #expect(parsed.warnings.isEmpty)
    }

    /// The lab's four providers, as `--lab` configures them.
    private func labProviders(_ lab: Lab) -> [ProviderSetting] {
        let e = lab.endpoints
        return [
            .inMemory(
                name: "alicloud", kind: .alicloud, endpoint: e.httpdnsTLS, account: e.account, secret: e.secret,
                key: nil, caFile: e.ca),
            .inMemory(
                name: "legacy", kind: .alicloudLegacy, endpoint: e.httpdns, account: e.account, secret: e.secret,
                key: nil, caFile: nil),
            .inMemory(
                name: "tencent", kind: .tencent, endpoint: e.httpdns, account: e.keys.tencentID, cipher: .des,
                secret: nil, key: e.keys.tencentDESKey, caFile: nil),
            .inMemory(
                name: "doh", kind: .doh, endpoint: e.httpdnsTLS + "/dns-query", account: nil, secret: nil, key: nil,
                caFile: e.ca),
        ]
    }

    private func compare(_ host: String, lab: Lab, extra: [ProviderSetting] = []) async throws -> ProviderComparison {
        var base = ResolverConfiguration(timeout: 10)
        base.dnsServer = try DNSServer.parse(lab.endpoints.dns)
        let providers = ComparedProvider.build(labProviders(lab) + extra, base: base, environment: [:])
        return await ProviderComparison.run(
            host, providers: providers, system: SystemResolver(dnsServer: base.dnsServer), families: [.v4],
            timeout: .seconds(10))
    }

    @Test("the lab's four providers agree with each other and with its DNS server on an honest name")
    func allAgree() async throws {
        try await withLab { lab in
            let result = try await compare("sni-a.lab.test", lab: lab)
            #expect(result.providers.map(\.name) == ["alicloud", "legacy", "tencent", "doh"])
            for row in result.providers {
                #expect(row.error == nil, "\(row.name): \(row.error?.sentence ?? "")")
                #expect(row.ipv4 == ["127.0.0.1"])
                #expect(row.ttl == FamilyTTL(v4: 60))
                #expect(row.group == "A")
                #expect(row.vsSystem == .same)
            }
            #expect(result.systemGroup == "A")
            // alicloud v2 and tencent say which client they saw.
            #expect(result.providers[0].clientIP == "127.0.0.1")
            #expect(result.summary.contains("all 4 providers answering and the system column agree (A)"))
        }
    }

    @Test("a hijacking DNS server gets its own letter; a provider that cannot start says why in its row")
    func hijackedAndMisconfigured() async throws {
        try await withLab { lab in
            let broken = ProviderSetting(
                name: "no-secret", kind: .alicloud, endpoint: lab.endpoints.httpdns, account: lab.endpoints.account,
                secretVariable: "IPDIRECT_TEST_UNSET_SECRET")
            let result = try await compare("hijacked.lab.test", lab: lab, extra: [broken])
            #expect(result.providers.prefix(4).allSatisfy { $0.group == "A" && $0.vsSystem == .disjoint })
            #expect(result.systemGroup == "B")
            let row = try #require(result.providers.last)
            #expect(row.group == nil)
            #expect(row.error?.sentence.contains("IPDIRECT_TEST_UNSET_SECRET, which is not set") == true)
            #expect(result.summary.contains("the system column gave B"))
            #expect(result.summary.contains("1 failed"))
        }
    }

    @Test("junk addresses fail the text formats with the junk named, while DNS wire answers")
    func poisoned() async throws {
        try await withLab { lab in
            let result = try await compare("poisoned.lab.test", lab: lab)
            let byName = Dictionary(uniqueKeysWithValues: result.providers.map { ($0.name, $0) })
            #expect(byName["alicloud"]?.error?.sentence.contains("not-an-ip") == true)
            #expect(byName["doh"]?.error == nil)
            #expect(byName["doh"]?.ipv4 == ["127.0.0.1"])
            #expect(byName["doh"]?.group == "A")
        }
    }
}

// A provider that cannot be built from its configuration fails with the setting it needs, typed:
// the library says it in its own words, and the command line phrases it with its flags.
import ConfigurationSources
import NameResolution
import Testing

@Suite("Provider setup failures")
struct ProviderSetupTests {
    /// Configurations no provider can be built from, each for a setting it lacks or cannot use.
    static var unusable: [ResolverConfiguration] {
        var cases = [
            ResolverConfiguration(provider: .alicloud),
            ResolverConfiguration(provider: .alicloudLegacy),
            ResolverConfiguration(provider: .doh),
            ResolverConfiguration(provider: .tencent, endpoint: "google"),
            ResolverConfiguration(provider: .alicloud, account: "1", cipher: .des),
            ResolverConfiguration(provider: .alicloud, account: "1", cipher: .aesCBC),
            ResolverConfiguration(provider: .tencent, account: "1", cipher: .des),
            ResolverConfiguration(provider: .tencent, cipher: .aesGCM),
        ]
        var keyNoAccount = ResolverConfiguration(provider: .tencent, cipher: .des)
        keyNoAccount.key = "k3yDES42"
        var tokenNoAccount = ResolverConfiguration(provider: .tencent, endpoint: "https://119.29.29.99")
        tokenNoAccount.token = "t"
        cases += [keyNoAccount, tokenNoAccount]
        return cases + sdkAndValueCases
    }

    /// Settings a provider cannot use as they are: an SDK profile of the other API, what the
    /// Node.js SDK does not send, a malformed sdns key, a legacy path, a secret or key not in form.
    static var sdkAndValueCases: [ResolverConfiguration] {
        var v1SDK = ResolverConfiguration(provider: .alicloud, endpoint: "http://127.0.0.1", account: "1")
        v1SDK.sdk = .c22
        var v2SDK = ResolverConfiguration(provider: .alicloudLegacy, endpoint: "http://127.0.0.1", account: "1")
        v2SDK.sdk = .node10
        var sealedNode = ResolverConfiguration(
            provider: .alicloud, endpoint: "http://127.0.0.1", account: "1", cipher: .aesCBC)
        sealedNode.sdk = .node10
        sealedNode.key = "00112233445566778899aabbccddeeff"
        sealedNode.sdns = ["region": "east"]
        var badSDNS = ResolverConfiguration(provider: .alicloud, endpoint: "http://127.0.0.1", account: "1")
        badSDNS.sdns = ["bad key": "x"]
        var secret = ResolverConfiguration(provider: .alicloud, endpoint: "http://127.0.0.1", account: "1")
        secret.secret = "not hex"
        var key = ResolverConfiguration(
            provider: .alicloud, endpoint: "http://127.0.0.1", account: "1", cipher: .aesCBC)
        key.key = "abc"
        var desKey = ResolverConfiguration(
            provider: .tencent, endpoint: "http://119.29.29.98", account: "1", cipher: .des)
        desKey.key = "short"
        return [
            v1SDK, v2SDK, sealedNode, badSDNS, secret, key, desKey,
            ResolverConfiguration(provider: .alicloud, endpoint: "http://127.0.0.1/100000/d", account: "1"),
        ]
    }

    @Test("the library names the setting it needs, never a command-line flag or variable")
    func libraryWordsNameSettings() {
        for configuration in Self.unusable {
            do {
                _ = try ProviderFactory.make(configuration)
                Issue.record("\(configuration.provider) was built")
            } catch {
                #expect(!error.description.contains("--"), "\(error.description)")
                #expect(!error.description.contains("IPDIRECT_"), "\(error.description)")
            }
        }
    }

    @Test("the command line says the same failures with the flags, variables and keys that fix them")
    func commandLineNamesFlags() throws {
        func said(_ configuration: ResolverConfiguration) -> String {
            do {
                _ = try ProviderFactory.make(configuration)
                return "built"
            } catch {
                return ConfigurationField.phrased(error)
            }
        }
        #expect(
            said(ResolverConfiguration(provider: .alicloud))
                == "alicloud needs an account ID: --account, IPDIRECT_ACCOUNT or 'account' in the configuration file")
        #expect(
            said(ResolverConfiguration(provider: .doh))
                == "doh needs an endpoint (for example https://dns.alidns.com/dns-query): --endpoint, IPDIRECT_ENDPOINT or 'endpoint' in the configuration file"
        )
        #expect(
            said(ResolverConfiguration(provider: .tencent, account: "1", cipher: .des))
                == "tencent's encrypted form needs the key: IPDIRECT_HTTPDNS_KEY or 'key' in the configuration file")
        #expect(
            said(ResolverConfiguration(provider: .tencent, cipher: .aesGCM))
                == "tencent has no AES-GCM: use --cipher des or aes-cbc")
        #expect(
            said(ResolverConfiguration(provider: .tencent, endpoint: "google"))
                == "preset 'google' is a doh-json service, not tencent: use --provider doh-json or another endpoint")
        let phrased = Self.sdkAndValueCases.map(said)
        #expect(phrased[0] == "--sdk c-2.2 speaks the legacy API: use --provider alicloud-legacy")
        #expect(phrased[1] == "--sdk node-1.0 speaks the v2 API: use --provider alicloud")
        #expect(
            phrased[2]
                == "--sdk node-1.0 sends names in the clear and no sdns-* parameters: drop --cipher aes-cbc and --sdns region=east"
        )
        #expect(phrased[3] == "alicloud --sdns bad key=x: keys take letters, digits, '-' and '_'; values also '='")
        #expect(
            phrased[4]
                == "the alicloud secret must be hex, copied as the console shows it: check IPDIRECT_HTTPDNS_SECRET or 'secret' in the configuration file"
        )
        #expect(
            phrased[5]
                == "the alicloud key must be 32 hex digits (16 bytes), as the console shows it: check IPDIRECT_HTTPDNS_KEY or 'key' in the configuration file"
        )
        #expect(phrased[6] == "tencent --cipher des: a DES key is 8 bytes (8 characters), not 5")
        #expect(
            phrased[7]
                == "provider alicloud now speaks the v2 API (/v2/d), and http://127.0.0.1/100000/d is a legacy API path: to keep the legacy API use --provider alicloud-legacy; for v2 give the base URL only (scheme://host[:port])"
        )
    }
}

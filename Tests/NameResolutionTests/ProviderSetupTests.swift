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
        return cases
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
    }
}

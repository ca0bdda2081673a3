// The configuration's field list: every setting read from the file, checked and named by its key,
// and given by its variable, from the one list rather than a parser per source.
import ConfigurationSources
import NameResolution
import Testing

@Suite("Configuration field list")
struct ConfigurationFieldTests {
    @Test("a value of the wrong type is refused with the setting's key, for every setting of the list")
    func everyFieldIsChecked() {
        for field in ConfigurationField.all {
            do {
                _ = try ConfigurationLayer.toml("\(field.key) = { x = [] }\n", path: "c.toml")
                Issue.record("\(field.key) took a table of arrays")
            } catch {
                #expect(error.description.contains(field.key), "\(error.description)")
            }
        }
    }

    @Test("every setting's variable reaches the configuration in force, over the file and the defaults")
    func variablesReachTheConfiguration() throws {
        let environment = [
            "IPDIRECT_PROVIDER": "tencent", "IPDIRECT_ENDPOINT": " http://192.0.2.9 ", "IPDIRECT_ACCOUNT": "77",
            "IPDIRECT_HTTPDNS_SECRET": "s", "IPDIRECT_HTTPDNS_KEY": " k ", "IPDIRECT_HTTPDNS_TOKEN": "t",
        ]
        #expect(Set(ConfigurationField.all.compactMap(\.variable)) == Set(environment.keys))
        let layer = try ConfigurationLayer.environment(environment)
        let (file, _) = try ConfigurationLayer.toml("provider = \"alicloud\"\naccount = \"1\"\n", path: "c.toml")
        let configuration = layer.over(file).resolved(defaultCachePath: nil)
        #expect(configuration.provider == .tencent)
        #expect(configuration.endpoint == "http://192.0.2.9")
        #expect(configuration.account == "77")
        // Credentials are taken exactly as set: a blank in a key is part of the key.
        #expect(configuration.secret == "s" && configuration.key == " k " && configuration.token == "t")
        #expect(configuration.timeout == IPDirectConfiguration.defaults.timeout)
    }
}

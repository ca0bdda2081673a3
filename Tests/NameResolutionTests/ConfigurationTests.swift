// Configuration: command line over environment over file over defaults, the secret never
// from argv and never printed, presets by name, and `config init`'s file.
import BundledResources
import ConfigurationSources
import Foundation
import NameResolution
import TestSupport
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    @Test("nothing configured gives a public DoH preset with real answers")
    func defaults() throws {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let (config, warnings) = try ConfigurationLoader.load(environment: ["HOME": dir.path])
        #expect(warnings.isEmpty)
        #expect(config.provider == .dohJSON)
        #expect(config.effectiveEndpoint == "https://dns.alidns.com/resolve")
        #expect(config.timeout == 2)
        #expect(config.fallbackToSystem)
        #expect(config.cachePath == dir.path + "/.cache/ipdirect/cache.json")
    }

    @Test("command line over environment over file over defaults")
    func precedence() throws {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let path = dir.path + "/config.toml"
        try """
        provider = "alicloud"
        endpoint = "https://file.example"
        account = "111"
        secret = "from-file"
        timeout = 5
        reuse_expired = true
        prefetch = ["a.test", "b.test"]
        """.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        let env = ["HOME": dir.path, "IPDIRECT_ENDPOINT": "https://env.example", "IPDIRECT_ACCOUNT": "222"]
        let (config, warnings) = try ConfigurationLoader.load(
            commandLine: ConfigurationLayer { $0.account = "333" }, environment: env, file: path)
        #expect(warnings.isEmpty)
        #expect(config.provider == .alicloud)
        #expect(config.endpoint == "https://env.example")
        #expect(config.account == "333")
        #expect(config.secret == "from-file")
        #expect(config.timeout == 5)
        #expect(config.reuseExpired)
        #expect(config.prefetch == ["a.test", "b.test"])

        let withSecret = try ConfigurationLoader.load(
            environment: env.merging(["IPDIRECT_HTTPDNS_SECRET": "from-env"]) { $1 }, file: path)
        #expect(withSecret.configuration.secret == "from-env")
    }

    @Test("a file holding the secret that others can read gives a warning")
    func readableSecret() throws {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let path = dir.path + "/config.toml"
        try #"secret = "s3cret""#.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        let (_, warnings) = try ConfigurationLoader.load(environment: ["HOME": dir.path], file: path)
        #expect(warnings.contains { $0.contains("chmod 600") })
    }

    @Test("the secret never appears in descriptions, debug output or dumps")
    func redaction() {
        let config = ResolverConfiguration(provider: .alicloud, account: "1", secret: "TOPSECRET-123")
        var dumped = ""
        dump(config, to: &dumped)
        for text in [config.description, String(reflecting: config), "\(config)", dumped] {
            #expect(!text.contains("TOPSECRET"), "\(text)")
        }
    }

    @Test("a preset name works as the endpoint and picks its provider")
    func presets() throws {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let dnspod = try ConfigurationLoader.load(
            commandLine: ConfigurationLayer { $0.endpoint = "dnspod" }, environment: ["HOME": dir.path]
        ).configuration
        #expect(dnspod.provider == .tencent)
        #expect(dnspod.effectiveEndpoint == "http://119.29.29.29")
        let google = try ConfigurationLoader.load(
            commandLine: ConfigurationLayer {
                $0.provider = .dohJSON; $0.endpoint = "google"
            }, environment: ["HOME": dir.path]
        ).configuration
        #expect(google.effectiveEndpoint == "https://dns.google/resolve")
        #expect(Set(ProviderPreset.all.map(\.name)) == ["alidns", "dnspod", "google", "cloudflare"])
    }

    @Test("config init writes every setting with a comment, and refuses to overwrite without force")
    func initFile() throws {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let path = dir.path + "/ipdirect/config.toml"
        try ConfigurationLoader.writeDefault(to: path, force: false)
        #expect(throws: ConfigurationError.exists(path)) {
            try ConfigurationLoader.writeDefault(to: path, force: false)
        }
        try ConfigurationLoader.writeDefault(to: path, force: true)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (index, line) in lines.enumerated() where line.contains(" = ") && !line.hasPrefix("#") {
            #expect(index > 0 && lines[index - 1].hasPrefix("#"), "setting without a comment: \(line)")
        }
        // The written file loads cleanly and gives the defaults.
        let (config, warnings) = try ConfigurationLoader.load(environment: ["HOME": dir.path], file: path)
        #expect(warnings.isEmpty)
        #expect(config.provider == .dohJSON)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("the built-in defaults are the bundled default file, which sets every setting")
    func defaultsAreTheBundledFile() throws {
        let bundled = ConfigurationLayer.defaults
        #expect(bundled.provider != nil && bundled.timeout != nil && bundled.family != nil)
        #expect(bundled.fallbackToSystem != nil && bundled.reuseExpired != nil && bundled.persistCache != nil)
        #expect(bundled.dohMethod == .get)
        #expect(bundled.cipher != nil && bundled.region != nil && bundled.sdns != nil && bundled.prefetch != nil)
        // dns_server's default is "not set" (getaddrinfo), still written down with its comment.
        #expect(BundledResources.defaultConfigTOML.contains("\ndns_server = \"\"\n"))
        // Nothing configured anywhere: what the file says is what is in force.
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let (config, _) = try ConfigurationLoader.load(environment: ["HOME": dir.path], file: dir.path + "/none.toml")
        #expect(config.provider == bundled.provider && config.timeout == bundled.timeout)
        #expect(config.family == bundled.family && config.fallbackToSystem == bundled.fallbackToSystem)
        #expect(ResolverConfiguration().timeout == bundled.timeout)
        #expect(ResolverConfiguration.defaults.reuseExpired == bundled.reuseExpired)
        #expect(ResolverConfiguration().region == bundled.region && ResolverConfiguration().cipher == bundled.cipher)
        #expect(ResolverConfiguration().dohMethod == bundled.dohMethod)
    }

    @Test("a bad file is an error naming the problem")
    func badFile() throws {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let path = dir.path + "/config.toml"
        try #"provider = "bogus""#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(environment: ["HOME": dir.path], file: path)
        }
        try "timeout = [".write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try ConfigurationLoader.load(environment: ["HOME": dir.path], file: path)
            Issue.record("broken TOML accepted")
        } catch {
            #expect(error.description.contains("line 1"))
        }
    }

    /// Loads `bytes` as the configuration file and returns the error's sentence (nil when it loaded).
    private func loadError(_ bytes: [UInt8]) throws -> String? {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let path = dir.path + "/config.toml"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try ConfigurationLoader.load(environment: ["HOME": dir.path], file: path)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("a file that aborts the TOML library is refused with a sentence instead (the fuzzer's finding)")
    func tomlLibraryAbortShapes() throws {
        // The input `make fuzz` found: a table header opened by a control character and a NUL.
        let finding = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/configuration/crash-d34d9b4ef7319dcb0c167fa19802043ca66d0415")
        let found = try #require(FileManager.default.contents(atPath: finding.path))
        let said = try #require(try loadError(Array(found)))
        #expect(said.contains("line 1, byte 2 is the control character \\x01"))
        // The same assertion in toml++ reached without any control character.
        for header in ["[=x]\n", "[\n", "[#\n", "[[ .a]]\n", "provider = \"system\"\n  [ ,\n"] {
            let sentence = try #require(try loadError(Array(header.utf8)), "accepted: \(header)")
            #expect(sentence.contains("table header"), "\(sentence)")
        }
        // A NUL would otherwise cut the file short in silence (the library takes a C string).
        let cut = try #require(try loadError(Array("provider = \"system\"\u{0}\nprovider = \"bogus\"\n".utf8)))
        #expect(cut.contains("NUL"))
        // The second finding: toml++ asserts on a '}' where an array expects a value (`a=[}`).
        for text in ["a=[}", "prefetch = [\n  \"a\", # c\n }\n"] {
            let sentence = try #require(try loadError(Array(text.utf8)), "accepted: \(text)")
            #expect(sentence.contains("'}' right after '[' or ','"), "\(sentence)")
        }
        // Ordinary tables and arrays still load, braces inside strings and comments included.
        #expect(try loadError(Array("prefetch = [\n  \"a.example\",\n]\n[sdns]\n".utf8)) == nil)
        #expect(try loadError(Array("prefetch = [\"[}\", ',}', # [}\n]\n".utf8)) == nil)
        #expect(try loadError(Array("\u{FEFF}provider = \"system\"\r\n\tprefetch = [ \"a\" ]\n".utf8)) == nil)
    }

    @Test("a signing secret bound for plain HTTP gets one warning; legacy's default (discovery) is https")
    func plainHTTPSigning() throws {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let none = dir.path + "/none.toml"
        let withSecret = ["HOME": dir.path, "IPDIRECT_HTTPDNS_SECRET": "s3cr3t-value"]
        let (_, warned) = try ConfigurationLoader.load(
            commandLine: ConfigurationLayer {
                $0.provider = .alicloudLegacy; $0.endpoint = "http://203.0.113.9"; $0.account = "1"
            },
            environment: withSecret, file: none)
        #expect(warned.filter { $0.contains("http://203.0.113.9 over plain HTTP") }.count == 1, "\(warned)")
        #expect(!warned.joined().contains("s3cr3t-value"))
        // No endpoint: service discovery over HTTPS from the region's start IPs, nothing to warn about.
        let (legacy, quiet) = try ConfigurationLoader.load(
            commandLine: ConfigurationLayer {
                $0.provider = .alicloudLegacy; $0.account = "1"
            }, environment: withSecret,
            file: none)
        #expect(legacy.effectiveEndpoint == "service discovery (region cn)")
        #expect(quiet.isEmpty, "\(quiet)")
        // v2 service discovery from plain start IPs is the same exposure.
        var v2 = ResolverConfiguration(provider: .alicloud, account: "1", secret: "s")
        v2.startIPs = ["http://198.51.100.1"]
        #expect(v2.plainHTTPCredentialWarning?.contains("http://198.51.100.1") == true)
        // Without a secret nothing is signed, so nothing is said.
        #expect(
            ResolverConfiguration(provider: .alicloudLegacy, endpoint: "http://x.test").plainHTTPCredentialWarning
                == nil)
    }

    /// A token travels as it is in the query (anyone on the path can reuse it); a key never
    /// travels, and it is what seals the name and the answer for plain HTTP.
    @Test("a Tencent token bound for plain HTTP gets one warning; over https, or a key alone, none")
    func plainHTTPToken() throws {
        let dir = try ScratchDirectory("config")
        defer { dir.remove() }
        let none = dir.path + "/none.toml"
        let withToken = ["HOME": dir.path, "IPDIRECT_HTTPDNS_TOKEN": "tok-value-93b1"]
        let (_, warned) = try ConfigurationLoader.load(
            commandLine: ConfigurationLayer {
                $0.provider = .tencent; $0.endpoint = "http://203.0.113.7"
            },
            environment: withToken, file: none)
        #expect(warned.filter { $0.contains("http://203.0.113.7") && $0.contains("token") }.count == 1, "\(warned)")
        #expect(!warned.joined().contains("tok-value-93b1"))
        let (_, overTLS) = try ConfigurationLoader.load(
            commandLine: ConfigurationLayer {
                $0.provider = .tencent; $0.endpoint = "https://203.0.113.7"
            },
            environment: withToken, file: none)
        #expect(overTLS.isEmpty, "\(overTLS)")
        let (_, keyOnly) = try ConfigurationLoader.load(
            commandLine: ConfigurationLayer {
                $0.provider = .tencent; $0.endpoint = "http://203.0.113.7"; $0.account = "12"
            },
            environment: ["HOME": dir.path, "IPDIRECT_HTTPDNS_KEY": "aB3dE5gH"], file: none)
        #expect(keyOnly.isEmpty, "\(keyOnly)")
    }

    @Test("redact = [...] is read from the file, shown by config show, and a wrong type is refused")
    func redactNames() throws {
        let (layer, warnings) = try ConfigurationLayer.toml("redact = [\"X-My-Header\", \"tenant\"]\n", path: "c.toml")
        #expect(warnings.isEmpty, "\(warnings)")
        let configuration = layer.resolved(defaultCachePath: nil)
        #expect(configuration.redact == ["X-My-Header", "tenant"])
        #expect(configuration.redactedLines.contains { $0.key == "redact" && $0.value == "X-My-Header, tenant" })
        #expect(IPDirectConfiguration.defaults.redact.isEmpty)
        #expect(throws: ConfigurationError.self) { try ConfigurationLayer.toml("redact = \"x\"\n", path: "c.toml") }
        #expect(throws: ConfigurationError.self) { try ConfigurationLayer.toml("redact = [1]\n", path: "c.toml") }
    }

    @Test("a timeout of inf, nan, 1e300 or below zero in the file is refused with the range")
    func timeoutOutOfRange() throws {
        for value in ["inf", "+inf", "nan", "1e300", "-1", "0", "121"] {
            let said = try #require(try loadError(Array("timeout = \(value)\n".utf8)), "accepted timeout = \(value)")
            #expect(said.contains("'timeout' must be a number of seconds above 0 and at most 120"))
        }
        #expect(try loadError(Array("timeout = 120\n".utf8)) == nil)
    }
}

@Suite("Provider factory")
struct ProviderFactoryTests {
    @Test("a preset of another kind is refused with a way out")
    func presetKindMismatch() {
        let config = ResolverConfiguration(provider: .alicloud, endpoint: "google", account: "1")
        #expect(throws: ResolutionError.self) { try ProviderFactory.make(config) }
        do {
            _ = try ProviderFactory.make(config)
        } catch {
            #expect(ConfigurationField.phrased(error).contains("use --provider doh-json"))
        }
    }

    @Test("alicloud without an account says where to give one")
    func alicloudNeedsAccount() {
        do {
            _ = try ProviderFactory.make(ResolverConfiguration(provider: .alicloud))
            Issue.record("alicloud without an account was accepted")
        } catch {
            #expect(ConfigurationField.phrased(error).contains("IPDIRECT_ACCOUNT"))
        }
    }

    @Test("each provider kind without an endpoint uses its public default")
    func defaults() {
        #expect(ResolverConfiguration(provider: .dohJSON).effectiveEndpoint == "https://dns.alidns.com/resolve")
        #expect(ResolverConfiguration(provider: .tencent).effectiveEndpoint == "http://119.29.29.29")
        #expect(ResolverConfiguration(provider: .alicloud).effectiveEndpoint == "service discovery (region cn)")
        #expect(ResolverConfiguration(provider: .alicloudLegacy).effectiveEndpoint == "service discovery (region cn)")
        #expect(ResolverConfiguration(provider: .system).effectiveEndpoint == nil)
    }
}

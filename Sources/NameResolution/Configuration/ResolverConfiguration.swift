// The resolver's settings and where they come from: command line over environment over
// the TOML file over built-in defaults. The signing secret never comes from argv nor leaves.
import BundledResources
import Foundation
import TOMLKit

/// Everything the resolver needs to know, already merged from every source.
public struct ResolverConfiguration: Sendable, Equatable {
    public var provider: ProviderKind
    /// alicloud/tencent: the service's base URL; doh-json: the full query URL.
    public var endpoint: String?
    public var account: String?
    /// The alicloud signing secret. Never printed: `description`, `debugDescription` and
    /// reflection all redact it.
    public var secret: String?
    /// Extra CA file (PEM) to trust for the HTTPDNS service.
    public var caFile: String?
    /// Seconds to wait for HTTPDNS and for system DNS.
    public var timeout: Double
    public var family: AddressFamily
    /// Answer with system DNS when HTTPDNS fails.
    public var fallbackToSystem: Bool
    /// Serve expired answers at once while refreshing in the background.
    public var reuseExpired: Bool
    /// Names to resolve ahead of time.
    public var prefetch: [String]
    /// The persistent cache file; nil means no persistence.
    public var cachePath: String?
    /// How long a system-fallback answer stays in the cache, seconds.
    public var fallbackTTL: Int
    /// How queries are sealed (`--cipher`); `none` is the clear (signed) form.
    public var cipher: HTTPDNSCipher
    /// The encryption key (alicloud: hex AES key; tencent: the DES/AES key string). Redacted like the secret.
    public var key: String?
    /// Tencent's HTTPS token. Redacted like the secret.
    public var token: String?
    /// alicloud `sdns-*` parameters (`--sdns K=V`).
    public var sdns: [String: String] = [:]
    /// alicloud region for service discovery (`cn`, `hk`, `sg`, `de`, `us`).
    public var region: String
    /// alicloud service discovery starts here instead of the region's start IPs: base URLs
    /// (`http://127.0.0.1:8080`), for a lab or a private deployment (`start_ips`).
    public var startIPs: [String] = []
    /// The name an alicloud service IP's certificate is checked against over HTTPS, whatever
    /// IP is connected to (`service_name`; the SDKs use 203.107.1.1).
    public var serviceName: String = AliCloudRegion.certificateName
    /// The DNS server the "system" column asks directly (`--dns-server`); nil keeps getaddrinfo.
    public var dnsServer: DNSServer? = nil
    /// How `doh` (RFC 8484) sends its queries (`--doh-method`).
    public var dohMethod: DoHMethod
    /// Providers to compare (`[[providers]]`, `resolve --all-providers`, the console's compare view).
    public var providers: [ProviderSetting] = []
    /// The console's theme and keys, carried for the console; the resolver ignores them.
    public var console = ConsoleSettings()
    /// The agent's `[[agent.targets]]`, carried for the agent; the resolver ignores them.
    public var agent = AgentFileSettings()
    /// Header, query parameter and cookie names hidden in traces and exports besides the built-in
    /// words (`redact`), carried for the probe; matched as parts of names, in any case.
    public var redact: [String] = []

    /// TTLs from a service are clamped to this range: a TTL of 0 would defeat the cache and
    /// one of years would pin an address long after the service changed its mind.
    public static let ttlBounds: ClosedRange<Int> = 1...86_400
    /// The longest wait for an answer that `timeout` (`--timeout`, the file's `timeout`) accepts, in seconds.
    public static let maxTimeout: Double = 120
    /// Bodies larger than this are refused as malformed: an HTTPDNS answer is a few hundred bytes.
    public static let maxBodyBytes = 64 * 1024

    /// The built-in defaults: the bundled Resources/default-config.toml (what `ipdirect config
    /// init` writes), with no cache file. The one place defaults are written down.
    public static let defaults = ConfigurationLayer.defaults.resolved(defaultCachePath: nil)

    /// A configuration; every setting left out takes its value from `defaults`.
    public init(
        provider: ProviderKind = defaults.provider, endpoint: String? = nil, account: String? = nil,
        secret: String? = nil, caFile: String? = nil, timeout: Double = defaults.timeout,
        family: AddressFamily = defaults.family, fallbackToSystem: Bool = defaults.fallbackToSystem,
        reuseExpired: Bool = defaults.reuseExpired, prefetch: [String] = defaults.prefetch, cachePath: String? = nil,
        fallbackTTL: Int = 30, cipher: HTTPDNSCipher = defaults.cipher, region: String = defaults.region,
        dohMethod: DoHMethod = defaults.dohMethod
    ) {
        self.provider = provider
        self.endpoint = endpoint
        self.account = account
        self.secret = secret
        self.caFile = caFile
        self.timeout = timeout
        self.family = family
        self.fallbackToSystem = fallbackToSystem
        self.reuseExpired = reuseExpired
        self.prefetch = prefetch
        self.cachePath = cachePath
        self.fallbackTTL = fallbackTTL
        self.cipher = cipher
        self.region = region
        self.dohMethod = dohMethod
    }

    /// The endpoint with a preset name replaced by the preset's URL, or the provider's
    /// default preset when none is set.
    public var effectiveEndpoint: String? {
        let service = ProviderRegistry.entry(provider).defaultService
        if service == .none { return nil }
        if let endpoint, !endpoint.isEmpty {
            return ProviderPreset.named(endpoint)?.endpoint ?? endpoint
        }
        switch service {
        case .none: return nil
        case .discovery:
            return startIPs.isEmpty
                ? "service discovery (region \(region))" : "service discovery from \(startIPs.joined(separator: ", "))"
        case .fixed(let plain, let signed):
            // The public service speaks HTTPS too: signed queries go there when a secret is set.
            return secret == nil ? plain : signed
        case .preset:
            return ProviderPreset.defaultPreset(for: provider)?.endpoint
        }
    }

    /// A warning when a credential would cross plain HTTP, nil otherwise: the one rule for every
    /// credential, said once where every command loads its configuration.
    ///
    /// - The signing secret (alicloud, alicloud-legacy) is never sent, but the signed query is:
    ///   anyone on the path reads the names and can replay it until it expires.
    /// - Tencent's token travels in the query as it is: anyone on the path can use it.
    /// - An encryption key (alicloud AES, Tencent DES/AES) is never sent, and it is what seals
    ///   the names and the answer: that is the services' own design for plain HTTP, so no warning.
    public var plainHTTPCredentialWarning: String? {
        let credential: String
        let exposure: String
        let targets: [String]
        let entry = ProviderRegistry.entry(provider)
        switch entry.wireCredential {
        case .signedQuery where secret != nil:
            credential = "the signing secret"
            exposure =
                "anyone on the path reads the names and the signed query and can replay it until it expires (the secret itself is never sent)"
            targets =
                entry.defaultService == .discovery && (endpoint ?? "").isEmpty ? startIPs : [effectiveEndpoint ?? ""]
        case .token where token != nil:
            credential = "the token"
            exposure = "the token travels in the query as it is, for anyone on the path to read and use"
            targets = [effectiveEndpoint ?? ""]
        default:
            return nil
        }
        guard let plain = targets.first(where: { $0.lowercased().hasPrefix("http://") }) else { return nil }
        return
            "\(credential) is set but queries go to \(plain) over plain HTTP, where \(exposure); use the service's https:// address"
    }

    /// Which provider an answer came from, as the cache files it: kind, endpoint (or the
    /// service set discovery starts from), account and cipher. Never a secret, key or token.
    /// A cache only ever serves answers its own identity gave.
    public var cacheIdentity: String {
        [provider.rawValue, effectiveEndpoint ?? "-", account ?? "-", cipher.rawValue].joined(separator: " | ")
    }

    /// A readable summary with the secret redacted.
    public var redactedLines: [(key: String, value: String)] {
        [
            ("provider", provider.rawValue),
            ("endpoint", effectiveEndpoint ?? "(none)"),
            ("account", account ?? "(none)"),
            ("secret", secret == nil ? "(none)" : "(set, redacted)"),
            ("cipher", cipher.rawValue),
            ("key", key == nil ? "(none)" : "(set, redacted)"),
            ("token", token == nil ? "(none)" : "(set, redacted)"),
            ("region", region),
            ("start_ips", startIPs.isEmpty ? "(the region's)" : startIPs.joined(separator: ", ")),
            ("service_name", serviceName),
            (
                "sdns",
                sdns.isEmpty
                    ? "(none)" : sdns.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            ),
            ("ca_file", caFile ?? "(none)"),
            ("timeout", ResolutionError.format(timeout)),
            ("family", family.rawValue),
            ("fallback_to_system", String(fallbackToSystem)),
            ("reuse_expired", String(reuseExpired)),
            ("prefetch", prefetch.isEmpty ? "(none)" : prefetch.joined(separator: ", ")),
            ("cache_path", cachePath ?? "(not persisted)"),
            ("dns_server", dnsServer.map { "\($0)" } ?? "(none: getaddrinfo)"),
            ("doh_method", dohMethod.rawValue),
            ("providers", providers.isEmpty ? "(none)" : providers.map(\.redactedSummary).joined(separator: "; ")),
            ("redact", redact.isEmpty ? "(the built-in words only)" : redact.joined(separator: ", ")),
            ("theme", (console.theme ?? .auto).rawValue),
            (
                "keys",
                console.keys.isEmpty
                    ? "(defaults)"
                    : console.keys.map { "\($0.action)=\($0.keys.joined(separator: "+"))" }.joined(separator: ", ")
            ),
        ]
    }
}

extension ResolverConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "ResolverConfiguration(" + redactedLines.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: redactedLines.map { (label: Optional($0.key), value: $0.value as Any) })
    }
}

// MARK: Presets

/// A public HTTPDNS or DoH service usable with no account (Resources/providers.json).
public struct ProviderPreset: Sendable, Codable, Equatable {
    public var name: String
    public var kind: ProviderKind
    public var endpoint: String
    public var description: String

    private struct File: Decodable {
        var `default`: String
        var presets: [ProviderPreset]
    }

    private static let file: File = {
        do {
            return try JSONDecoder().decode(File.self, from: Data(BundledResources.providersJSON.utf8))
        } catch {
            // The file ships inside the binary; failing to read it is a build defect, made loud.
            fatalError("Resources/providers.json does not parse: \(error)")
        }
    }()

    /// Every preset, in the file's order.
    public static var all: [ProviderPreset] { file.presets }

    /// The preset with this name (case-insensitive), if any.
    public static func named(_ name: String) -> ProviderPreset? {
        all.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// The preset used when nothing is configured.
    public static var fallback: ProviderPreset { named(file.default) ?? all[0] }

    /// The preset a provider kind uses when no endpoint is given (its registry row says whether
    /// it takes one): the default preset when it is of that kind, else the kind's first.
    public static func defaultPreset(for kind: ProviderKind) -> ProviderPreset? {
        fallback.kind == kind ? fallback : all.first { $0.kind == kind }
    }
}

// MARK: Sources

/// The settings one source (file, environment, command line) gives; nil means "not given".
public struct ConfigurationLayer: Sendable, Equatable {
    public var provider: ProviderKind?
    public var endpoint: String?
    public var account: String?
    public var secret: String?
    public var caFile: String?
    public var timeout: Double?
    public var family: AddressFamily?
    public var fallbackToSystem: Bool?
    public var reuseExpired: Bool?
    public var prefetch: [String]?
    public var persistCache: Bool?
    public var cachePath: String?
    public var cipher: HTTPDNSCipher?
    public var key: String?
    public var token: String?
    public var sdns: [String: String]?
    public var region: String?
    public var startIPs: [String]?
    public var serviceName: String?
    public var dnsServer: DNSServer?
    public var dohMethod: DoHMethod?
    public var providers: [ProviderSetting]?
    public var console = ConsoleSettings()
    /// `[agent]`; nil when this layer does not have it.
    public var agent: AgentFileSettings?
    public var redact: [String]?

    public init(
        provider: ProviderKind? = nil, endpoint: String? = nil, account: String? = nil, secret: String? = nil,
        caFile: String? = nil, timeout: Double? = nil, family: AddressFamily? = nil, fallbackToSystem: Bool? = nil,
        reuseExpired: Bool? = nil, prefetch: [String]? = nil, persistCache: Bool? = nil, cachePath: String? = nil,
        dnsServer: DNSServer? = nil, dohMethod: DoHMethod? = nil
    ) {
        self.provider = provider
        self.endpoint = endpoint
        self.account = account
        self.secret = secret
        self.caFile = caFile
        self.timeout = timeout
        self.family = family
        self.fallbackToSystem = fallbackToSystem
        self.reuseExpired = reuseExpired
        self.prefetch = prefetch
        self.persistCache = persistCache
        self.cachePath = cachePath
        self.dnsServer = dnsServer
        self.dohMethod = dohMethod
    }

    /// The layer the environment gives: `IPDIRECT_PROVIDER`, `IPDIRECT_ENDPOINT`,
    /// `IPDIRECT_ACCOUNT`, `IPDIRECT_HTTPDNS_SECRET`.
    ///
    /// - Throws: `ConfigurationError` for an unknown provider name.
    public static func environment(_ env: [String: String]) throws(ConfigurationError) -> ConfigurationLayer {
        func value(_ key: String) -> String? {
            guard let v = env[key]?.trimmingCharacters(in: .whitespaces), !v.isEmpty else { return nil }
            return v
        }
        var layer = ConfigurationLayer()
        if let name = value("IPDIRECT_PROVIDER") {
            guard let kind = ProviderKind(rawValue: name) else {
                throw .invalid("IPDIRECT_PROVIDER", name, expected: ProviderKind.allCases.map(\.rawValue))
            }
            layer.provider = kind
        }
        layer.endpoint = value("IPDIRECT_ENDPOINT")
        layer.account = value("IPDIRECT_ACCOUNT")
        layer.secret = env["IPDIRECT_HTTPDNS_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        layer.key = env["IPDIRECT_HTTPDNS_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        layer.token = env["IPDIRECT_HTTPDNS_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return layer
    }

    /// Parses the TOML configuration file's text.
    ///
    /// - Throws: `ConfigurationError` naming the line of a syntax error, or the key whose
    ///   value has the wrong type or an unknown value.
    public static func toml(
        _ text: String, path: String
    ) throws(ConfigurationError) -> (
        layer: ConfigurationLayer, warnings: [String]
    ) {
        let table: TOMLTable
        // TOMLKit aborts the process on some malformed files; those are refused here first.
        if let problem = TOMLPreflight.problem(in: text) { throw .unreadable(path, problem) }
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw .unreadable(path, "\(error.description) at line \(error.source.begin.line)")
        } catch {
            throw .unreadable(path, "\(error)")
        }
        var warnings: [String] = []
        var layer = ConfigurationLayer()
        let known: Set<String> = [
            "provider", "endpoint", "account", "secret", "ca_file", "timeout", "family", "fallback_to_system",
            "reuse_expired", "prefetch", "persist_cache", "cache_path", "cipher", "key", "token", "region", "sdns",
            "start_ips", "service_name", "dns_server", "doh_method", "providers", "theme", "keys", "agent", "redact",
        ]
        for key in table.keys where !known.contains(key) {
            warnings.append("\(path): unknown setting '\(key)' ignored")
        }
        func string(_ key: String) throws(ConfigurationError) -> String? {
            guard let raw = table[key] else { return nil }
            guard let s = raw.string else { throw .wrongType(path, key, "a string") }
            return s.isEmpty ? nil : s
        }
        func bool(_ key: String) throws(ConfigurationError) -> Bool? {
            guard let raw = table[key] else { return nil }
            guard let b = raw.bool else { throw .wrongType(path, key, "true or false") }
            return b
        }
        if let name = try string("provider") {
            guard let kind = ProviderKind(rawValue: name) else {
                throw .invalid("\(path): provider", name, expected: ProviderKind.allCases.map(\.rawValue))
            }
            layer.provider = kind
        }
        if let name = try string("family") {
            guard let family = AddressFamily(rawValue: name) else {
                throw .invalid("\(path): family", name, expected: AddressFamily.allCases.map(\.rawValue))
            }
            layer.family = family
        }
        layer.endpoint = try string("endpoint")
        layer.account = try string("account")
        layer.secret = try string("secret")
        layer.caFile = try string("ca_file")
        layer.cachePath = try string("cache_path")
        if let text = try string("dns_server") {
            layer.dnsServer = try DNSServer.parse(text, setting: "\(path): dns_server")
        }
        if let name = try string("doh_method") {
            guard let method = DoHMethod(rawValue: name) else {
                throw .invalid("\(path): doh_method", name, expected: DoHMethod.allCases.map(\.rawValue))
            }
            layer.dohMethod = method
        }
        layer.key = try string("key")
        layer.token = try string("token")
        layer.region = try string("region")
        layer.serviceName = try string("service_name")
        if let raw = table["start_ips"] {
            let urls = raw.array?.compactMap(\.string) ?? []
            guard let array = raw.array, urls.count == array.count else {
                throw .wrongType(path, "start_ips", "an array of base URLs ([\"http://127.0.0.1:8080\"])")
            }
            layer.startIPs = urls
        }
        if let name = try string("cipher") {
            guard let cipher = HTTPDNSCipher(rawValue: name) else {
                throw .invalid("\(path): cipher", name, expected: HTTPDNSCipher.allCases.map(\.rawValue))
            }
            layer.cipher = cipher
        }
        if let raw = table["sdns"] {
            guard let sdns = raw.table else { throw .wrongType(path, "sdns", "a table of strings ({ k = \"v\" })") }
            var values: [String: String] = [:]
            for (key, value) in sdns {
                guard let text = value.string else { throw .wrongType(path, "sdns.\(key)", "a string") }
                values[key] = text
            }
            layer.sdns = values
        }
        if let raw = table["timeout"] {
            // inf, nan and 1e300 are TOML numbers too; converting them to milliseconds would trap.
            guard let t = raw.double ?? raw.int.map(Double.init), t > 0, t <= ResolverConfiguration.maxTimeout else {
                throw .wrongType(
                    path, "timeout",
                    "a number of seconds above 0 and at most \(ResolutionError.format(ResolverConfiguration.maxTimeout))"
                )
            }
            layer.timeout = t
        }
        layer.fallbackToSystem = try bool("fallback_to_system")
        layer.reuseExpired = try bool("reuse_expired")
        layer.persistCache = try bool("persist_cache")
        if let raw = table["prefetch"] {
            guard let array = raw.array else { throw .wrongType(path, "prefetch", "an array of names") }
            var names: [String] = []
            for item in array {
                guard let name = item.string else { throw .wrongType(path, "prefetch", "an array of names") }
                names.append(name)
            }
            layer.prefetch = names
        }
        if let raw = table["redact"] {
            let expected = "an array of names ([\"x-my-header\"])"
            guard let array = raw.array else { throw .wrongType(path, "redact", expected) }
            var names: [String] = []
            for item in array {
                guard let name = item.string else { throw .wrongType(path, "redact", expected) }
                names.append(name)
            }
            layer.redact = names
        }
        let providers = try ProviderSetting.list(table["providers"], path: path)
        layer.providers = providers.0
        warnings += providers.1
        layer.console = try ConsoleSettings.parse(table, path: path)
        let agent = try AgentFileSettings.parse(table, path: path)
        layer.agent = agent.settings
        warnings += agent.warnings
        return (layer, warnings)
    }

    /// The bundled Resources/default-config.toml as a layer: every setting given.
    public static let defaults: ConfigurationLayer = {
        do {
            return try toml(BundledResources.defaultConfigTOML, path: "Resources/default-config.toml").layer
        } catch {
            // The file ships inside the binary; failing to read it is a build defect, made loud.
            fatalError("Resources/default-config.toml does not parse: \(error)")
        }
    }()

    /// This layer over `base`: every setting this layer gives replaces the base's.
    public func over(_ base: ConfigurationLayer) -> ConfigurationLayer {
        var merged = ConfigurationLayer(
            provider: provider ?? base.provider, endpoint: endpoint ?? base.endpoint, account: account ?? base.account,
            secret: secret ?? base.secret, caFile: caFile ?? base.caFile, timeout: timeout ?? base.timeout,
            family: family ?? base.family, fallbackToSystem: fallbackToSystem ?? base.fallbackToSystem,
            reuseExpired: reuseExpired ?? base.reuseExpired, prefetch: prefetch ?? base.prefetch,
            persistCache: persistCache ?? base.persistCache, cachePath: cachePath ?? base.cachePath)
        merged.cipher = cipher ?? base.cipher
        merged.key = key ?? base.key
        merged.token = token ?? base.token
        merged.sdns = sdns ?? base.sdns
        merged.region = region ?? base.region
        merged.startIPs = startIPs ?? base.startIPs
        merged.serviceName = serviceName ?? base.serviceName
        merged.dnsServer = dnsServer ?? base.dnsServer
        merged.dohMethod = dohMethod ?? base.dohMethod
        merged.providers = providers ?? base.providers
        merged.console = console.over(base.console)
        merged.agent = agent ?? base.agent
        merged.redact = redact ?? base.redact
        return merged
    }

    /// The finished configuration: this layer over the built-in defaults (`defaults`).
    ///
    /// An endpoint naming a preset also picks the preset's provider kind when no provider
    /// was given, so `--endpoint dnspod` alone means tencent.
    public func resolved(defaultCachePath: String?) -> ResolverConfiguration {
        var layer = self
        if layer.provider == nil, let endpoint, let preset = ProviderPreset.named(endpoint) {
            layer.provider = preset.kind
        }
        // The bundled file sets every one of these (a test holds it to that).
        let merged = layer.over(Self.defaults)
        var configuration = ResolverConfiguration(
            provider: merged.provider!, endpoint: merged.endpoint, account: merged.account, secret: merged.secret,
            caFile: merged.caFile, timeout: merged.timeout!, family: merged.family!,
            fallbackToSystem: merged.fallbackToSystem!, reuseExpired: merged.reuseExpired!,
            prefetch: merged.prefetch!,
            cachePath: merged.persistCache! ? (merged.cachePath ?? defaultCachePath) : nil, cipher: merged.cipher!,
            region: merged.region!, dohMethod: merged.dohMethod!)
        configuration.key = merged.key
        configuration.token = merged.token
        configuration.sdns = merged.sdns!
        configuration.startIPs = merged.startIPs ?? []
        configuration.serviceName = merged.serviceName ?? AliCloudRegion.certificateName
        configuration.dnsServer = merged.dnsServer
        configuration.providers = merged.providers ?? []
        configuration.console = merged.console
        configuration.agent = merged.agent ?? AgentFileSettings()
        configuration.redact = merged.redact ?? []
        return configuration
    }
}

/// A configuration that cannot be used, in words.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(String, String)
    case wrongType(String, String, String)
    case invalid(String, String, expected: [String])
    case exists(String)
    case io(String)

    public var description: String {
        switch self {
        case .unreadable(let path, let why): return "cannot read \(path): \(why)"
        case .wrongType(let path, let key, let expected): return "\(path): '\(key)' must be \(expected)"
        case .invalid(let what, let value, let expected):
            return "\(what): '\(value)' is not one of \(expected.joined(separator: ", "))"
        case .exists(let path): return "\(path) already exists (use --force to overwrite it)"
        case .io(let why): return why
        }
    }
}

/// Where ipdirect keeps its files, following the XDG base directory convention.
public enum ConfigurationPaths {
    /// `$XDG_CONFIG_HOME/ipdirect/config.toml`, or `~/.config/ipdirect/config.toml`.
    public static func configFile(environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        base("XDG_CONFIG_HOME", fallback: ".config", env) + "/ipdirect/config.toml"
    }

    /// `$XDG_CACHE_HOME/ipdirect/cache.json`, or `~/.cache/ipdirect/cache.json`.
    public static func cacheFile(environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        base("XDG_CACHE_HOME", fallback: ".cache", env) + "/ipdirect/cache.json"
    }

    private static func base(_ variable: String, fallback: String, _ env: [String: String]) -> String {
        // XDG says a relative value is invalid and must be ignored.
        if let value = env[variable], value.hasPrefix("/") { return value }
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/" + fallback
    }
}

/// Loads the configuration from every source.
public enum ConfigurationLoader {
    /// Merges command line over environment over file over defaults.
    ///
    /// - Parameters:
    ///   - commandLine: what the user typed (never a secret).
    ///   - environment: the process environment.
    ///   - file: the configuration file; nil means the XDG default. A missing file is fine.
    /// - Returns: the configuration and warnings to show (unknown keys, a file others can read).
    /// - Throws: `ConfigurationError` for a file that exists but cannot be used.
    public static func load(
        commandLine: ConfigurationLayer = .init(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        file: String? = nil
    ) throws(ConfigurationError) -> (configuration: ResolverConfiguration, warnings: [String]) {
        let path = file ?? ConfigurationPaths.configFile(environment: environment)
        var warnings: [String] = []
        var fileLayer = ConfigurationLayer()
        if FileManager.default.fileExists(atPath: path) {
            let text: String
            do {
                // ipdirect's own file, read by every command: never a FIFO to block on.
                text = try TextFile.contents(of: path, accepting: .regularFile)
            } catch {
                throw .unreadable(path, error.reason)
            }
            let parsed = try ConfigurationLayer.toml(text, path: path)
            fileLayer = parsed.layer
            warnings += parsed.warnings
            if fileLayer.secret != nil || fileLayer.key != nil || fileLayer.token != nil,
                let mode = permissions(of: path), mode & 0o077 != 0
            {
                warnings.append(
                    "\(path) holds the HTTPDNS secret and others can read it (mode \(String(mode, radix: 8))): run chmod 600 \(path)"
                )
            }
        }
        let merged = commandLine.over(try ConfigurationLayer.environment(environment)).over(fileLayer)
        let configuration = merged.resolved(defaultCachePath: ConfigurationPaths.cacheFile(environment: environment))
        // Said once, here, where every command loads its configuration.
        if let warning = configuration.plainHTTPCredentialWarning { warnings.append(warning) }
        return (configuration, warnings)
    }

    /// Writes the commented default configuration to `path`.
    ///
    /// - Parameter force: overwrite an existing file.
    /// - Throws: `ConfigurationError.exists` when the file exists and `force` is off.
    public static func writeDefault(to path: String, force: Bool) throws(ConfigurationError) {
        let manager = FileManager.default
        if manager.fileExists(atPath: path), !force { throw .exists(path) }
        do {
            try manager.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        } catch {
            throw .io("cannot write \(path): \(error.localizedDescription)")
        }
        // Created private from the start (no moment at 0644): the file is where the signing secret goes.
        try PrivateFile.write(Data(BundledResources.defaultConfigTOML.utf8), to: path)
    }

    static func permissions(of path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }
}

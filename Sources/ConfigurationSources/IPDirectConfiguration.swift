// Everything the configuration says, merged from every source: the resolver's settings, and the
// console's, the agent's and the probe's sections, which the resolver never sees.
import FoundationEssentials
import NameResolution

/// The configuration in force: `resolver` for name resolution, and the sections that belong to
/// the console (`theme`, `[keys]`), the agent (`[[agent.targets]]`) and the probe (`redact`).
/// The resolver's settings read as the configuration's own (`configuration.timeout`).
@dynamicMemberLookup
public struct IPDirectConfiguration: Sendable, Equatable {
    public var resolver: ResolverConfiguration
    /// The console's theme and keys.
    public var console = ConsoleSettings()
    /// The agent's `[[agent.targets]]`.
    public var agent = AgentFileSettings()
    /// Header, query parameter and cookie names hidden in traces and exports besides the built-in
    /// words (`redact`); matched as parts of names, in any case.
    public var redact: [String] = []

    public init(resolver: ResolverConfiguration) { self.resolver = resolver }

    public subscript<T>(dynamicMember path: WritableKeyPath<ResolverConfiguration, T>) -> T {
        get { resolver[keyPath: path] }
        set { resolver[keyPath: path] = newValue }
    }

    public subscript<T>(dynamicMember path: KeyPath<ResolverConfiguration, T>) -> T { resolver[keyPath: path] }

    /// The built-in defaults: the bundled Resources/default-config.toml (what `ipdirect config
    /// init` writes), with no cache file. The one place defaults are written down.
    public static let defaults = ConfigurationLayer().resolved(defaultCachePath: nil)

    /// The settings every configuration has, taken from the bundled file; the layers are
    /// written over it.
    static let base: IPDirectConfiguration = {
        let file = ConfigurationLayer.defaults
        guard let provider = file.provider, let timeout = file.timeout, let family = file.family,
            let fallbackToSystem = file.fallbackToSystem, let reuseExpired = file.reuseExpired,
            let prefetch = file.prefetch, let cipher = file.cipher, let region = file.region,
            let dohMethod = file.dohMethod
        else {
            // The file ships inside the binary (a test holds it to giving every setting).
            fatalError("Resources/default-config.toml leaves out a setting every configuration needs")
        }
        return IPDirectConfiguration(
            resolver: ResolverConfiguration(
                required: provider, timeout: timeout, family: family, fallbackToSystem: fallbackToSystem,
                reuseExpired: reuseExpired, prefetch: prefetch, cipher: cipher, region: region, dohMethod: dohMethod))
    }()

    /// What `config show` prints, secrets redacted: the resolver's settings, then the sections.
    public var redactedLines: [(key: String, value: String)] {
        resolver.redactedLines + [
            ("redact", redact.isEmpty ? "(the built-in words only)" : redact.joined(separator: ", ")),
            ("theme", (console.theme ?? .auto).rawValue),
            ("export_dir", console.exportDirectory ?? "(the working directory)"),
            (
                "keys",
                console.keys.isEmpty
                    ? "(defaults)"
                    : console.keys.map { "\($0.action)=\($0.keys.joined(separator: "+"))" }.joined(separator: ", ")
            ),
        ]
    }
}

extension IPDirectConfiguration: RedactedSettings {}

extension ResolverConfiguration {
    /// The built-in defaults (Resources/default-config.toml), with no cache file.
    public static var defaults: ResolverConfiguration { IPDirectConfiguration.defaults.resolver }

    /// A configuration built in code; every setting left out takes its value from `defaults`.
    public init(
        provider: ProviderKind = defaults.provider, endpoint: String? = nil, account: String? = nil,
        secret: String? = nil, caFile: String? = nil, timeout: Double = defaults.timeout,
        family: AddressFamily = defaults.family, fallbackToSystem: Bool = defaults.fallbackToSystem,
        reuseExpired: Bool = defaults.reuseExpired, prefetch: [String] = defaults.prefetch, cachePath: String? = nil,
        cipher: HTTPDNSCipher = defaults.cipher, region: String = defaults.region,
        dohMethod: DoHMethod = defaults.dohMethod
    ) {
        self = Self.defaults
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
        self.cipher = cipher
        self.region = region
        self.dohMethod = dohMethod
    }
}

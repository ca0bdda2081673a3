// The resolver's settings, already merged (the ConfigurationSources module reads them from the file, the
// environment and the command line), and the public services they can name. Secrets never leave.
import BundledResources
import FoundationEssentials

/// Everything the resolver needs to know, already merged from every source (the Configuration
/// module's `ConfigurationLayer`, which also holds the built-in defaults).
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
    public var fallbackTTL = 30
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
    /// Whose requests the Alibaba providers send (`--sdk`, `sdk`): ipdirect's, or one SDK's exactly.
    public var sdk: SDKProfile = .ipdirect
    /// The client address to ask the answer for (`--client-ip`, `client_ip`): legacy `ip=`, v2
    /// `cip`; nil asks for this machine's. Always an IP literal.
    public var clientIP: String? = nil
    /// The name the doctor resolves end to end (`canary`, `--canary`); nil: the first `--host`,
    /// else the doctor's default (the lab's with `--lab`).
    public var canary: String? = nil
    /// The plain-HTTP URLs the doctor's interception check asks, each expected to answer 204 with
    /// an empty body (`connectivity_urls`, `--connectivity-url`); empty: Android's and Xiaomi's
    /// (the lab's with `--lab`).
    public var connectivityURLs: [String] = []
    /// One alicloud service address every query goes to, as discovery would list it (its
    /// certificate checked against its `checkName`): the doctor asks the address that answered, as
    /// an SDK rotates to it. nil: the endpoint or service discovery, as configured.
    public var pinnedServiceAddress: AliCloudServiceRequests.Address? = nil
    /// Providers to compare (`[[providers]]`, `resolve --all-providers`, the console's compare view).
    public var providers: [ProviderSetting] = []
    /// TTLs from a service are clamped to this range: a TTL of 0 would defeat the cache and
    /// one of years would pin an address long after the service changed its mind.
    public static let ttlBounds: ClosedRange<Int> = 1...86_400
    /// The longest wait for an answer that `timeout` (`--timeout`, the file's `timeout`) accepts, in seconds.
    public static let maxTimeout: Double = 120
    /// Bodies larger than this are refused as malformed: an HTTPDNS answer is a few hundred bytes.
    public static let maxBodyBytes = 64 * 1024

    /// A configuration from the settings every configuration has; the optional ones start unset.
    /// The values come from the configuration's defaults (the ConfigurationSources module), not from here.
    public init(
        required provider: ProviderKind, timeout: Double, family: AddressFamily, fallbackToSystem: Bool,
        reuseExpired: Bool,
        prefetch: [String], cipher: HTTPDNSCipher, region: String, dohMethod: DoHMethod
    ) {
        self.provider = provider
        self.timeout = timeout
        self.family = family
        self.fallbackToSystem = fallbackToSystem
        self.reuseExpired = reuseExpired
        self.prefetch = prefetch
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
        // Answers asked for another client address are that address's: filed apart.
        ([provider.rawValue, effectiveEndpoint ?? "-", account ?? "-", cipher.rawValue]
            + (clientIP.map { ["cip \($0)"] } ?? []))
            .joined(separator: " | ")
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
            ("sdk", sdk.rawValue),
            ("client_ip", clientIP ?? "(this machine's)"),
            ("canary", canary ?? "(the first --host, else the doctor's default)"),
            (
                "connectivity_urls",
                connectivityURLs.isEmpty ? "(Android's and Xiaomi's)" : connectivityURLs.joined(separator: ", ")
            ),
            ("providers", providers.isEmpty ? "(none)" : providers.map(\.redactedSummary).joined(separator: "; ")),
        ]
    }
}

extension ResolverConfiguration: RedactedSettings {}

/// Settings that hold secrets: `description`, `debugDescription` and reflection show only
/// `redactedLines`, so printing or dumping them never shows a secret, key or token.
public protocol RedactedSettings: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Every setting as `config show` prints it, secrets redacted.
    var redactedLines: [(key: String, value: String)] { get }
}

extension RedactedSettings {
    public var description: String {
        "\(Self.self)(" + redactedLines.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
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
        // Preset names are ASCII, where lower-casing both is what a case-insensitive comparison does.
        all.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The preset used when nothing is configured.
    public static var fallback: ProviderPreset { named(file.default) ?? all[0] }

    /// The preset a provider kind uses when no endpoint is given (its registry row says whether
    /// it takes one): the default preset when it is of that kind, else the kind's first.
    public static func defaultPreset(for kind: ProviderKind) -> ProviderPreset? {
        fallback.kind == kind ? fallback : all.first { $0.kind == kind }
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
        case .exists(let path): return "\(path) already exists, and is not written over unless asked"
        case .io(let why): return why
        }
    }
}

// The provider registry: one row per HTTPDNS wire format, read by the factory, `--provider`'s help,
// `--lab`, the fuzz targets and the endpoint defaults. A new provider is a folder and a row.
import LabFaults

/// A setting of the resolver's configuration that a provider reads, by the name the
/// configuration file gives it.
public enum ProviderSettingName: String, Sendable, CaseIterable {
    case provider, endpoint, account, secret, key, token, cipher, sdns, region
    case startIPs = "start_ips"
    case serviceName = "service_name"
    case dohMethod = "doh_method"
    case sdk
}

/// Where a provider asks when no endpoint is configured.
public enum DefaultService: Sendable, Equatable {
    /// It asks no service (`system`).
    case none
    /// Service discovery from the region's start IPs, as the SDKs do (alicloud v2 and legacy).
    case discovery
    /// The first preset of its kind in Resources/providers.json (the default preset when it is one).
    case preset
}

/// The credential a provider's queries carry over the wire, which plain HTTP would expose.
public enum WireCredential: Sendable, Equatable {
    /// The signing secret: never sent, but the signed query is, and it can be replayed.
    case signedQuery
    /// A token sent in the query as it is.
    case token
}

/// Where `--lab` points a provider of this kind: which of the lab's HTTPDNS listeners, the path
/// under it, its account and which of the lab's keys each cipher takes. Data only: the front end
/// that starts the lab reads the lab's endpoints through it (NameResolution does not import Lab).
public struct LabRoute: Sendable {
    /// The lab's HTTPDNS service over plain HTTP, or over TLS.
    public enum Listener: Sendable { case plain, tls }
    /// The lab's Alibaba account, or its Tencent AUTH_ID.
    public enum Account: Sendable { case alibaba, tencent }
    /// One of the keys the lab made.
    public enum Key: Sendable { case aes, tencentDES, tencentAES }

    public var listener: Listener
    /// The wire format the lab answers this kind in, which picks the lab's handler.
    public var format: LabWireFormat
    /// Appended to the listener's base URL (`/resolve`, `/dns-query`): the format's path.
    public var path: String { format.endpointPath }
    public var account: Account
    /// The lab key each cipher needs; a cipher not listed takes none.
    public var keys: [HTTPDNSCipher: Key]
    /// The cipher of this kind's row in the lab's comparison set (`resolve --all-providers --lab`,
    /// the console's compare view); nil leaves the kind out of it.
    public var compared: HTTPDNSCipher?

    public init(
        listener: Listener, format: LabWireFormat, account: Account = .alibaba, keys: [HTTPDNSCipher: Key] = [:],
        compared: HTTPDNSCipher? = nil
    ) {
        self.listener = listener
        self.format = format
        self.account = account
        self.keys = keys
        self.compared = compared
    }
}

/// A parser of a provider's answers under fuzzing: its corpus is `Tests/Fuzz/Corpus/<corpus>/`.
public struct ProviderFuzzEntry: Sendable {
    public var corpus: String
    public var run: @Sendable ([UInt8]) -> Void
}

/// Everything ipdirect knows about one kind of provider, in one place.
public struct ProviderEntry: Sendable {
    public var kind: ProviderKind
    /// How `--provider`'s help names it: `alicloud (v2)`, `doh (RFC 8484)`.
    public var helpName: String
    /// The settings of the configuration its factory reads.
    public var settings: [ProviderSettingName]
    public var defaultService: DefaultService
    public var wireCredential: WireCredential?
    /// Builds the provider from a configuration whose `provider` is this kind, given the
    /// endpoint with presets and defaults applied (`ResolverConfiguration.effectiveEndpoint`).
    public var make:
        @Sendable (_ configuration: ResolverConfiguration, _ endpoint: String?) throws(ResolutionError) ->
            any HTTPDNSProvider
    /// Where `--lab` points it; nil when the lab does not serve it.
    public var lab: LabRoute?
    /// The parser `make fuzz` and the corpus replay run for its answers.
    public var fuzz: ProviderFuzzEntry?
}

/// The table every other place reads.
public enum ProviderRegistry {
    /// Every provider, in the order `--provider`'s help lists them.
    public static let all: [ProviderEntry] = [.aliCloudV2, .aliCloudLegacy, .tencent, .dohWire, .dohJSON, .system]

    /// The row of a kind.
    public static func entry(_ kind: ProviderKind) -> ProviderEntry {
        // Every kind has a row: a test holds `all` to `ProviderKind.allCases`.
        all.first { $0.kind == kind } ?? .system
    }

    /// `--provider`'s help: every kind with its note, in the table's order.
    public static var helpSentence: String {
        let names = all.map(\.helpName)
        return "HTTPDNS flavour: \(names.dropLast().joined(separator: ", ")), or \(names.last ?? "")."
    }

    /// The corpora of the providers' fuzz entries, each once, in the table's order.
    public static var fuzzCorpora: [String] {
        var corpora: [String] = []
        for entry in all { if let corpus = entry.fuzz?.corpus, !corpora.contains(corpus) { corpora.append(corpus) } }
        return corpora
    }

    /// Runs every provider parser fuzzed under `corpus` on one input.
    public static func fuzz(corpus: String, _ bytes: [UInt8]) {
        for entry in all where entry.fuzz?.corpus == corpus { entry.fuzz?.run(bytes) }
    }
}

extension ProviderEntry {
    /// `--provider system`: no HTTPDNS, getaddrinfo answers in its place.
    static let system = ProviderEntry(
        kind: .system, helpName: "system (no HTTPDNS)", settings: [], defaultService: .none,
        make: { configuration, _ throws(ResolutionError) in SystemProvider(timeout: configuration.timeout) })
}

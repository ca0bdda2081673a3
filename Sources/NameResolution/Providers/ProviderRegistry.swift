// The provider registry: one row per HTTPDNS wire format, read by the factory, `--provider`'s help,
// `--lab`, the fuzz targets and the endpoint defaults. A new provider is a folder and a row.
import LabFaults

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
    public var settings: [Setting]
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
    /// What `ipdirect doctor` needs to know of it.
    public var doctor: ProviderDoctorFacts
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
        make: { configuration, _ throws(ResolutionError) in SystemProvider(timeout: configuration.timeout) },
        doctor: ProviderDoctorFacts(
            addresses: .none("The provider is system DNS: there is no HTTPDNS service to reach."),
            clock: .none("The provider is system DNS: no service clock to compare with."),
            clientAddressAbsent: "With --provider system no HTTPDNS service reports a client address.",
            account: .none("The provider is system DNS: there is no account."), signs: false))
}

/// What `ipdirect doctor` needs to know of a provider, in its row: how its service's addresses are
/// found, how the service is asked for its time and the client address, whether it has an account
/// and whether it signs. Every row must give it (no default): a new provider cannot fall through.
public struct ProviderDoctorFacts: Sendable {
    /// How the service's addresses are found.
    public enum Addresses: Sendable, Equatable {
        /// It asks no service; the sentence says so (the reachability check skips with it).
        case none(String)
        /// The region's start IPs (or the endpoint) and the service IPs their `/ss` names (Alibaba).
        case serviceDiscovery
        /// The configured endpoint's address, or every address its name resolves to.
        case endpoint
    }

    /// How the service is asked a question the doctor reads an answer or a header of.
    public enum Query: Sendable, Equatable {
        /// It cannot be asked; the sentence says why.
        case none(String)
        /// An Alibaba resolve query at the first service address that answers, signed when a secret is set.
        case aliCloud
        /// A GET of the configured endpoint itself.
        case endpoint
    }

    /// What the account check asks.
    public enum Account: Sendable, Equatable {
        /// There is no account: the check does not apply; the sentence says why.
        case none(String)
        /// An Alibaba account: unsigned and signed requests, the cipher, then the canary.
        case aliCloud
        /// An account the queries carry, checked by resolving the canary through the provider.
        case canary
    }

    public var addresses: Addresses
    /// Where the clock check reads the service's `Date`.
    public var clock: Query
    /// Whether answers carry the client address the service saw; nil with why when not.
    public var clientAddressAbsent: String?
    public var account: Account
    /// How far ahead of the service's time v2 takes a signature's expiry, in seconds, for a
    /// provider that signs by time (nil: no such bound); `signs` false: it does not sign.
    public var signs: Bool
    public var signatureMaximumAhead: Int?

    public init(
        addresses: Addresses, clock: Query, clientAddressAbsent: String?, account: Account, signs: Bool,
        signatureMaximumAhead: Int? = nil
    ) {
        self.addresses = addresses
        self.clock = clock
        self.clientAddressAbsent = clientAddressAbsent
        self.account = account
        self.signs = signs
        self.signatureMaximumAhead = signatureMaximumAhead
    }

    /// An Alibaba provider's facts (v2 and legacy share their service discovery and queries).
    static func aliCloud(signatureMaximumAhead: Int?) -> ProviderDoctorFacts {
        ProviderDoctorFacts(
            addresses: .serviceDiscovery, clock: .aliCloud, clientAddressAbsent: nil, account: .aliCloud, signs: true,
            signatureMaximumAhead: signatureMaximumAhead)
    }

    /// A DoH provider's facts: an endpoint, no account, no client address.
    static let doh = ProviderDoctorFacts(
        addresses: .endpoint, clock: .endpoint,
        clientAddressAbsent:
            "DoH answers carry no client address ipdirect reads (no EDNS Client Subnet option is read), so there is none to compare.",
        account: .none("The provider is DoH, which has no account: there is nothing to check."), signs: false)
}

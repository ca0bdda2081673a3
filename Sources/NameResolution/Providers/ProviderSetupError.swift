// Why a provider cannot be built from a configuration, typed: the setting it needs or cannot use.
// The library says it with the settings' names; a front end phrases it with its own (the CLI's flags).

/// A configuration a provider cannot be built from: the setting it lacks, a cipher it does not
/// speak, an endpoint naming another kind's preset or path, an SDK profile that does not fit, or
/// a value it cannot use.
public enum ProviderSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `provider` (in `form`, when only one of its forms needs it) needs `setting`; `example`
    /// shows a value.
    case missing(Setting, provider: ProviderKind, form: String? = nil, example: String? = nil)
    /// `provider` does not speak `cipher`; `instead` are the ciphers it does.
    case cipherNotSpoken(HTTPDNSCipher, provider: ProviderKind, instead: [HTTPDNSCipher])
    /// The endpoint names a preset of another kind than `provider`.
    case presetOfAnotherKind(preset: String, kind: ProviderKind, provider: ProviderKind)
    /// The endpoint is a path of Alibaba's legacy API, but `alicloud` speaks v2.
    case legacyPathForV2(endpoint: String)
    /// The SDK of `sdk` speaks another API than `provider`'s: `sdk.provider`'s.
    case sdkSpeaksAnotherAPI(SDKProfile, provider: ProviderKind)
    /// The SDK of `sdk` sends names in the clear and no sdns-* parameters, but the configuration
    /// seals them with `cipher` or adds `sdns` (each `key=value`).
    case sdkSendsNoExtras(SDKProfile, cipher: HTTPDNSCipher?, sdns: [String])
    /// `provider` cannot use `value` of `setting` (never a secret's or a key's): `reason` says why.
    case unusable(Setting, value: String, provider: ProviderKind, reason: String)
    /// A secret or key not in the form `provider` takes (never shown): `form` says which it takes.
    case notInForm(Setting, provider: ProviderKind, form: String)

    /// In the library's words: each setting by its name (`the account setting`, `cipher = "des"`).
    public var description: String { phrased(naming: Self.settingWords) }

    private static func settingWords(_ setting: Setting, value: String?) -> String {
        value.map { "\(setting.rawValue) = \"\($0)\"" } ?? "the \(setting.rawValue) setting"
    }

    /// The failure as a sentence, each setting named by `naming`: how the reader gives the
    /// setting, or gives it the value when there is one (the command line: `--cipher des`).
    public func phrased(naming: (Setting, _ value: String?) -> String) -> String {
        switch self {
        case .missing(let setting, let provider, let form, let example):
            let who = form.map { "\(provider.rawValue)'s \($0)" } ?? provider.rawValue
            let value = example.map { " (for example \($0))" } ?? ""
            return "\(who) needs \(setting.noun)\(value): \(naming(setting, nil))"
        case .cipherNotSpoken(let cipher, let provider, let instead):
            let others = instead.dropFirst().map(\.rawValue)
            let first = instead.first.map { naming(.cipher, $0.rawValue) } ?? ""
            let listed = ([first] + others.dropLast()).joined(separator: ", ") + (others.last.map { " or \($0)" } ?? "")
            return "\(provider.rawValue) has no \(cipher.shownName): use \(listed)"
        case .presetOfAnotherKind(let preset, let kind, let provider):
            return "preset '\(preset)' is a \(kind.rawValue) service, not \(provider.rawValue): "
                + "use \(naming(.provider, kind.rawValue)) or another endpoint"
        case .legacyPathForV2(let endpoint):
            return "provider alicloud now speaks the v2 API (/v2/d), and \(endpoint) is a legacy API path: "
                + "to keep the legacy API use \(naming(.provider, ProviderKind.alicloudLegacy.rawValue)); "
                + "for v2 give the base URL only (scheme://host[:port])"
        case .sdkSpeaksAnotherAPI(let sdk, let provider):
            // Every SDK but ipdirect's own speaks one API.
            let speaks = sdk.provider ?? provider
            let speaking =
                provider == .alicloud || provider == .alicloudLegacy
                ? "speaks the \(speaks == .alicloud ? "v2" : "legacy") API" : "shapes Alibaba requests only"
            return "\(naming(.sdk, sdk.rawValue)) \(speaking): use \(naming(.provider, speaks.rawValue))"
        case .sdkSendsNoExtras(let sdk, let cipher, let sdns):
            let extras = (cipher.map { [naming(.cipher, $0.rawValue)] } ?? []) + sdns.map { naming(.sdns, $0) }
            let listed =
                extras.dropLast().joined(separator: ", ") + (extras.count > 1 ? " and " : "") + (extras.last ?? "")
            return "\(naming(.sdk, sdk.rawValue)) sends names in the clear and no sdns-* parameters: drop \(listed)"
        case .unusable(let setting, let value, let provider, let reason):
            return "\(provider.rawValue) \(naming(setting, value)): \(reason)"
        case .notInForm(let setting, let provider, let form):
            return "the \(provider.rawValue) \(setting.rawValue) must be \(form): check \(naming(setting, nil))"
        }
    }
}

extension Setting {
    /// What the setting is, for sentences: "an account ID", "the endpoint".
    var noun: String {
        switch self {
        case .provider: "the provider kind"
        case .endpoint: "an endpoint"
        case .account: "an account ID"
        case .secret: "the signing secret"
        case .key: "the key"
        case .token: "the token"
        case .cipher: "a cipher"
        case .sdns: "sdns parameters"
        case .region: "a region"
        case .startIPs: "start IPs"
        case .serviceName: "a service name"
        case .dohMethod: "a DoH method"
        case .sdk: "an SDK profile"
        // No provider lacks these: the words serve.
        case .family, .caFile, .cachePath, .dnsServer, .clientIP, .timeout, .fallbackToSystem, .reuseExpired,
            .prefetch, .canary, .connectivityURLs, .probeCAFile, .allowDowngrade, .locationTrusted, .concurrency,
            .interval, .jsonl, .rotate,
            .label, .probeConcurrency, .probeAllow, .otlpEndpoint, .webConfigFile, .metricsListen, .lab:
            words
        }
    }
}

extension HTTPDNSCipher {
    /// The cipher as sentences name it: DES, AES-CBC, AES-GCM.
    var shownName: String { self == .none ? "none" : rawValue.uppercased() }
}

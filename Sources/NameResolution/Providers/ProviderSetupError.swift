// Why a provider cannot be built from a configuration, typed: the setting it needs or cannot use.
// The library says it with the settings' names; a front end phrases it with its own (the CLI's flags).

/// A configuration a provider cannot be built from: the setting it lacks, a cipher it does not
/// speak, or an endpoint naming another kind's preset.
public enum ProviderSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `provider` (in `form`, when only one of its forms needs it) needs `setting`; `example`
    /// shows a value.
    case missing(ProviderSettingName, provider: ProviderKind, form: String? = nil, example: String? = nil)
    /// `provider` does not speak `cipher`; `instead` are the ciphers it does.
    case cipherNotSpoken(HTTPDNSCipher, provider: ProviderKind, instead: [HTTPDNSCipher])
    /// The endpoint names a preset of another kind than `provider`.
    case presetOfAnotherKind(preset: String, kind: ProviderKind, provider: ProviderKind)

    /// In the library's words: each setting by its name (`the account setting`, `cipher = "des"`).
    public var description: String { phrased(naming: Self.settingWords) }

    private static func settingWords(_ setting: ProviderSettingName, value: String?) -> String {
        value.map { "\(setting.rawValue) = \"\($0)\"" } ?? "the \(setting.rawValue) setting"
    }

    /// The failure as a sentence, each setting named by `naming`: how the reader gives the
    /// setting, or gives it the value when there is one (the command line: `--cipher des`).
    public func phrased(naming: (ProviderSettingName, _ value: String?) -> String) -> String {
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
        }
    }
}

extension ProviderSettingName {
    /// What the setting is, for sentences: "an account ID", "the endpoint".
    var noun: String {
        switch self {
        case .provider: return "the provider kind"
        case .endpoint: return "an endpoint"
        case .account: return "an account ID"
        case .secret: return "the signing secret"
        case .key: return "the key"
        case .token: return "the token"
        case .cipher: return "a cipher"
        case .sdns: return "sdns parameters"
        case .region: return "a region"
        case .startIPs: return "start IPs"
        case .serviceName: return "a service name"
        case .dohMethod: return "a DoH method"
        }
    }
}

extension HTTPDNSCipher {
    /// The cipher as sentences name it: DES, AES-CBC, AES-GCM.
    var shownName: String { self == .none ? "none" : rawValue.uppercased() }
}

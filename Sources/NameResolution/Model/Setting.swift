// The settings library sentences point their reader at, typed: a library says which setting and
// what to do with it, and each front end names it its own way (the CLI by its flag, the console by
// its key or in words, the agent's log by its key), so no library string spells a flag.

/// A setting a sentence of Probe, Agent or Doctor tells its reader to change.
///
/// Its `flag` is the command line's name; the resolver's settings also have a `key` in the
/// configuration file (the same as `ConfigurationField.all` gives them: a test holds the two
/// together). The agent's and the probe's own settings are flags only.
public enum Setting: String, Sendable, CaseIterable {
    // The resolver's, from the configuration's field list.
    case provider, endpoint, cipher, timeout
    case dnsServer = "dns_server"
    // The probe's.
    case probeCAFile, allowDowngrade, locationTrusted, concurrency
    // The agent's.
    case interval, jsonl, rotate, label, probeConcurrency, probeAllow, otlpEndpoint, webConfigFile, metricsListen
    // The lab, started instead of real services.
    case lab

    /// How the command line gives it (`--dns-server`).
    public var flag: String {
        switch self {
        case .provider: "--provider"
        case .endpoint: "--endpoint"
        case .cipher: "--cipher"
        case .timeout: "--timeout"
        case .dnsServer: "--dns-server"
        case .probeCAFile: "--cacert"
        case .allowDowngrade: "--allow-downgrade"
        case .locationTrusted: "--location-trusted"
        case .concurrency: "--concurrency"
        case .interval: "--interval"
        case .jsonl: "--jsonl"
        case .rotate: "--rotate"
        case .label: "--label"
        case .probeConcurrency: "--probe-concurrency"
        case .probeAllow: "--probe-allow"
        case .otlpEndpoint: "--otlp-endpoint"
        case .webConfigFile: "--web-config-file"
        case .metricsListen: "--metrics-listen"
        case .lab: "--lab"
        }
    }

    /// Its key in the configuration file, for the resolver's settings (`dns_server`).
    public var key: String? {
        switch self {
        case .provider, .endpoint, .cipher, .timeout, .dnsServer: rawValue
        default: nil
        }
    }

    /// The setting in words, where neither a flag nor a key fits the reader (the console's
    /// probe settings, which it sets for its user).
    public var words: String {
        switch self {
        case .provider: "the provider"
        case .endpoint: "the endpoint"
        case .cipher: "the cipher"
        case .timeout: "the timeout"
        case .dnsServer: "the DNS server"
        case .probeCAFile: "a CA file for the probes"
        case .allowDowngrade: "allowing downgrades"
        case .locationTrusted: "trusting redirects"
        case .concurrency: "the concurrency"
        case .interval: "the interval"
        case .jsonl: "the JSON Lines file"
        case .rotate: "the rotation size"
        case .label: "the label"
        case .probeConcurrency: "the probe concurrency"
        case .probeAllow: "the probe allow-list"
        case .otlpEndpoint: "the OTLP endpoint"
        case .webConfigFile: "the web configuration file"
        case .metricsListen: "the metrics address"
        case .lab: "the lab"
        }
    }

    /// The setting as `voice` names it, with `value` when the sentence gives one
    /// (`--dns-server 10.0.0.2`, `dns_server = "10.0.0.2"`).
    public func named(_ voice: SettingVoice, value: String? = nil) -> String {
        switch voice {
        case .commandLine:
            return value.map { "\(flag) \($0)" } ?? flag
        case .configuration:
            // The agent's own settings have no key: its operator gives them as flags.
            guard let key else { return value.map { "\(flag) \($0)" } ?? flag }
            return value.map { "\(key) = \"\($0)\"" } ?? key
        case .console:
            guard let key else { return value.map { "\(words) \($0)" } ?? words }
            return value.map { "\(key) = \"\($0)\"" } ?? key
        }
    }
}

extension Setting {
    /// Every way `voice`'s reader gives the setting: the command line's flag and the file's key
    /// (`--cipher (or cipher in the configuration file)`), else the key in the file.
    public func givenAs(_ voice: SettingVoice) -> String {
        guard let key else { return named(voice) }
        return voice == .commandLine
            ? "\(flag) (or \(key) in the configuration file)" : "\(key) in the configuration file"
    }
}

/// Whose words a sentence is written in: which name of a `Setting` its reader knows.
public enum SettingVoice: Sendable {
    /// The command line's and the exports' (what a probe run has always written): flags.
    case commandLine
    /// The agent's log: the configuration key, or the flag for a setting only a flag gives.
    case configuration
    /// The console's: the configuration key, or the setting in words.
    case console
}

// Every setting by one name: what a provider reads and what a library sentence points at, typed;
// each front end names it its own way (the CLI by its flag, the console by its key or in words).

/// A setting, by one name wherever it is named: the resolver's settings a provider reads
/// (`ProviderEntry.settings`) or lacks (`ProviderSetupError`), and every setting a sentence of
/// Probe, Agent or Doctor tells its reader to change.
///
/// The resolver's settings are named by their `key` in the configuration file, and
/// `ConfigurationField.all` reads each of them, taking its `flag` from here. The probe's, the
/// agent's and the lab's are flags only.
public enum Setting: String, Sendable, CaseIterable {
    // The resolver's, by their key in the configuration file.
    case provider, family, endpoint, account, secret
    case caFile = "ca_file"
    case cachePath = "cache_path"
    case dnsServer = "dns_server"
    case dohMethod = "doh_method"
    case sdk
    case clientIP = "client_ip"
    case key, token, region
    case serviceName = "service_name"
    case startIPs = "start_ips"
    case cipher, sdns, timeout
    case fallbackToSystem = "fallback_to_system"
    case reuseExpired = "reuse_expired"
    case prefetch
    /// The doctor's: the name its canary resolves, the URLs its captive-portal check fetches.
    case canary
    case connectivityURLs = "connectivity_urls"
    // The probe's.
    case probeCAFile, allowDowngrade, locationTrusted, concurrency
    // The agent's.
    case interval, jsonl, rotate, label, probeConcurrency, probeAllow, otlpEndpoint, webConfigFile, metricsListen
    // The lab, started instead of real services.
    case lab

    /// How the command line gives it (`--dns-server`); nil for a setting only the
    /// configuration file (or a variable) gives.
    public var flag: String? {
        switch self {
        case .provider: "--provider"
        case .endpoint: "--endpoint"
        case .account: "--account"
        case .caFile: "--httpdns-ca"
        case .dnsServer: "--dns-server"
        case .dohMethod: "--doh-method"
        case .sdk: "--sdk"
        case .clientIP: "--client-ip"
        case .cipher: "--cipher"
        case .sdns: "--sdns"
        case .timeout: "--timeout"
        case .fallbackToSystem: "--no-fallback"
        case .reuseExpired: "--reuse-expired"
        case .canary: "--canary"
        case .connectivityURLs: "--connectivity-url"
        case .family, .secret, .cachePath, .key, .token, .region, .serviceName, .startIPs, .prefetch: nil
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
        case .provider, .family, .endpoint, .account, .secret, .caFile, .cachePath, .dnsServer, .dohMethod, .sdk,
            .clientIP, .key, .token, .region, .serviceName, .startIPs, .cipher, .sdns, .timeout, .fallbackToSystem,
            .reuseExpired, .prefetch, .canary, .connectivityURLs:
            rawValue
        case .probeCAFile, .allowDowngrade, .locationTrusted, .concurrency, .interval, .jsonl, .rotate, .label,
            .probeConcurrency, .probeAllow, .otlpEndpoint, .webConfigFile, .metricsListen, .lab:
            nil
        }
    }

    /// The setting in words, where neither a flag nor a key fits the reader (the console's
    /// probe settings, which it sets for its user).
    public var words: String {
        switch self {
        case .provider: "the provider"
        case .family: "the address family"
        case .endpoint: "the endpoint"
        case .account: "the account"
        case .secret: "the signing secret"
        case .caFile: "the HTTPDNS CA file"
        case .cachePath: "the cache file"
        case .dnsServer: "the DNS server"
        case .dohMethod: "the DoH method"
        case .sdk: "the SDK profile"
        case .clientIP: "the client IP"
        case .key: "the key"
        case .token: "the token"
        case .region: "the region"
        case .serviceName: "the service name"
        case .startIPs: "the start IPs"
        case .cipher: "the cipher"
        case .sdns: "the sdns parameters"
        case .timeout: "the timeout"
        case .fallbackToSystem: "the fallback to system DNS"
        case .reuseExpired: "expired-IP reuse"
        case .prefetch: "the names to prefetch"
        case .canary: "the canary name"
        case .connectivityURLs: "the connectivity URLs"
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
            // A setting no flag gives is named as the file gives it.
            guard let flag else { return named(.configuration, value: value) }
            return value.map { "\(flag) \($0)" } ?? flag
        case .configuration:
            // The agent's own settings have no key: its operator gives them as flags.
            guard let key else { return named(.commandLine, value: value) }
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
        guard voice == .commandLine, let flag else { return "\(key) in the configuration file" }
        return "\(flag) (or \(key) in the configuration file)"
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

// A session built from configuration: the layers merged, the lab started when asked, the provider
// from the registry, the resolver cache. Every front end (commands, console, agent, doctor) starts one.
import ConfigurationSources
import CurlTransport
import FoundationEssentials
import FoundationGaps
import Lab
import LabFaults
import NameResolution
import Probe

/// What a session is built from: the command line's layer over the environment and the
/// configuration file, and whether the lab stands in for the HTTPDNS service.
public struct SessionSettings: Sendable {
    /// The settings given on the command line (never a secret: argv has none).
    public var commandLine: ConfigurationLayer
    /// The configuration file to read; nil for the default path.
    public var configurationFile: String?
    /// The lab to start in-process; nil for the configured service.
    public var lab: LabRequest?
    /// Where the environment's settings, secrets and CA bundles are read.
    public var environment: [String: String]

    /// Settings from a command-line layer, the configuration file and the process's environment.
    public init(
        commandLine: ConfigurationLayer = ConfigurationLayer(), configurationFile: String? = nil,
        lab: LabRequest? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.commandLine = commandLine
        self.configurationFile = configurationFile
        self.lab = lab
        self.environment = environment
    }
}

/// The lab a session starts in place of the configured service.
public struct LabRequest: Sendable {
    /// The provider the session speaks to the lab as; Alibaba Cloud's v2 when nil.
    public var provider: ProviderKind?
    /// The faults the lab fakes from the start.
    public var faults: LabFaultSet

    /// A lab for `provider` (alicloud when nil) faking `faults`.
    public init(provider: ProviderKind? = nil, faults: LabFaultSet = LabFaultSet()) {
        self.provider = provider
        self.faults = faults
    }
}

/// Why a session could not start, as a sentence.
public enum SessionError: Error, CustomStringConvertible, Equatable {
    /// The configuration cannot be used: a bad value, a missing account.
    case configuration(String)
    /// The HTTPDNS service's CA file (the configuration's `ca_file`) cannot be a CA file; each
    /// front end names the setting in its own words.
    case serviceCAFile(path: String, reason: String)
    /// A CA bundle the environment names (`CURL_CA_BUNDLE`, `SSL_CERT_FILE`) cannot be read.
    case environmentCABundle(String)

    public var description: String {
        switch self {
        case .configuration(let sentence), .environmentCABundle(let sentence): return sentence
        case .serviceCAFile(let path, let reason): return "the HTTPDNS service's CA file \(path): \(reason)"
        }
    }
}

/// Where a session's warnings go (an unknown setting, a corrupt cache file, a cache not saved):
/// the front end says them in its own voice.
public protocol SessionWarnings: Sendable {
    /// Says one warning, a sentence without a prefix.
    func warn(_ sentence: String)
}

/// A resolver ready to use: the merged configuration, the cache, and the lab when one was asked
/// for. Call `close()` when done: it saves the cache and stops the lab.
public struct ResolverSession: Sendable {
    /// The merged configuration (with the lab, pointing at the lab).
    public let configuration: IPDirectConfiguration
    /// The resolver cache in front of the provider.
    public let cache: ResolverCache
    /// The lab started for this session, if any.
    public let lab: Lab?
    /// The folder holding the lab's cache file, removed on close.
    public let temporaryDirectory: String?
    /// The warnings said while starting.
    public let warnings: [String]
    private let warningsSink: any SessionWarnings

    /// Loads the configuration, starts the lab when asked, and builds the resolver cache.
    ///
    /// Warnings (unknown settings, a readable secret file, a corrupt cache file) go to `warnings`.
    /// - Throws: `SessionError` for an unusable configuration, or the lab's start-up error.
    public static func start(
        _ settings: SessionSettings, warnings sink: any SessionWarnings
    ) async throws -> ResolverSession {
        let commandLine = settings.commandLine
        var configuration: IPDirectConfiguration
        var warnings: [String]
        do {
            (configuration, warnings) = try ConfigurationLoader.load(
                commandLine: commandLine, environment: settings.environment, file: settings.configurationFile)
        } catch {
            throw SessionError.configuration(error.description)
        }
        // The service's CA file adds to the system's CAs; the lab's, set below, stands alone.
        if let caFile = configuration.caFile {
            if let reason = CAFileCheck.reason(caFile) {
                throw SessionError.serviceCAFile(path: caFile, reason: reason)
            }
            configuration.caFile = CABundle.path(adding: caFile)
        } else if let bundle = try CAFileCheck.environmentBundle(settings.environment) {
            // curl's CURL_CA_BUNDLE and SSL_CERT_FILE, instead of the system's CAs, as in curl.
            configuration.caFile = bundle
        }
        var startedLab: Lab?
        var temporary: String?
        if let request = settings.lab {
            var options = LabOptions(fault: request.faults.httpdns)
            options.networkFaults = request.faults.network
            let running = try await Lab.start(options)
            startedLab = running
            let e = running.endpoints
            let kind = request.provider ?? .alicloud
            let route = ProviderRegistry.entry(kind).lab
            configuration.provider = kind
            configuration.account = route.map(e.account) ?? e.account
            configuration.secret = e.secret
            configuration.caFile = e.ca
            configuration.cipher = commandLine.cipher ?? .none
            configuration.key = route?.keys[configuration.cipher].map(e.key)
            configuration.token = nil
            configuration.endpoint = route.map(e.endpoint)
            // The lab's DNS server stands in for the carrier's LocalDNS, so the system column
            // compares with HTTPDNS at once; a DNS server given on the command line still wins.
            if commandLine.dnsServer == nil { configuration.dnsServer = try? DNSServer.parse(e.dns) }
            // One provider of each kind the lab serves, for comparing providers.
            configuration.providers = LabProviders.settings(e)
            // The lab's names would only pollute the user's own cache file.
            let directory = FileManager.default.temporaryDirectory.path.appendingPathComponent(
                "ipdirect-lab-" + UUID().uuidString)
            temporary = directory
            configuration.cachePath = directory + "/cache.json"
        }
        let httpdns: any HTTPDNSProvider
        do {
            httpdns = try ProviderFactory.make(configuration.resolver)
        } catch {
            try? await startedLab?.shutdown()
            throw SessionError.configuration(ConfigurationField.phrased(error))
        }
        let cache = ResolverCache(configuration: configuration.resolver, provider: httpdns)
        warnings += cache.loadWarnings
        for warning in warnings { sink.warn(warning) }
        return ResolverSession(
            configuration: configuration, cache: cache, lab: startedLab, temporaryDirectory: temporary,
            warnings: warnings, warningsSink: sink)
    }

    /// The provider and where it points, for status lines (never the secret).
    public var providerDescription: String {
        guard let endpoint = configuration.effectiveEndpoint else { return "none (system DNS only)" }
        return "\(cache.provider.name) at \(endpoint)" + (lab != nil ? " (lab)" : "")
    }

    /// Where to send a host or URL the user typed: with the lab running, a lab name without
    /// a port goes to the lab server that serves it (each listens on a port of its own);
    /// anything else is returned as it is.
    public func labTarget(_ text: String) -> String {
        guard let hosts = lab?.endpoints.hosts, let url = try? ProbeURL.parse(text), !url.hasExplicitPort,
            let base = hosts[url.host]
        else { return text }
        return base + url.pathAndQuery.dropFirst()
    }

    /// The lab's URLs, one a name, in name order; nil without the lab.
    public var labURLs: [String]? {
        lab.map { lab in lab.endpoints.hosts.keys.sorted().compactMap { lab.endpoints.hosts[$0] } }
    }

    /// Names through the session's cache: system DNS and HTTPDNS side by side.
    public var resolver: HostResolver {
        let cache = self.cache
        return { await cache.resolve($0) }
    }

    /// A probe engine resolving through the session's cache, except the names in `pins`, which
    /// answer with their addresses (both columns) and are never looked up.
    ///
    /// - Parameter chooser: who chose the pinned addresses, shown as the HTTPDNS provider.
    public func probeEngine(
        _ options: ProbeOptions, pinning pins: [String: [IPAddress]] = [:], by chooser: String = ""
    ) -> ProbeEngine {
        guard !pins.isEmpty else { return ProbeEngine(resolve: resolver, options: options) }
        let resolve = resolver
        return ProbeEngine(
            resolve: { name in
                if let addresses = pins[name] { return HostResolution.pinned(name, to: addresses, by: chooser) }
                return await resolve(name)
            }, options: options)
    }

    /// `options` trusting the lab's CA with the lab (its names are all a lab session probes),
    /// else `originCA`, adding to the system's CAs or replacing them; secrets named by the
    /// configuration's `redact` too.
    public func probeOptions(_ options: ProbeOptions, originCA: OriginCA?) -> ProbeOptions {
        var options = options
        options.caFile = lab?.endpoints.ca ?? originCA?.path
        options.caFileAddsToSystem = lab == nil && originCA?.addsToSystem == true
        options.secretNames = RedactionNames(adding: configuration.redact)
        return options
    }

    /// Saves the cache (a failure is a warning) and stops the lab.
    public func close() async {
        do {
            try cache.save()
        } catch {
            warningsSink.warn("\(error)")
        }
        if let lab { try? await lab.shutdown() }
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
    }
}

/// A CA file for origins' TLS and whether it adds to the system's CAs (`--cacert`) or replaces
/// them (the environment's bundle, as curl uses it).
public typealias OriginCA = (path: String, addsToSystem: Bool)

extension HostResolution {
    /// What a lookup of `name` answers when it is pinned to `addresses`, as both columns say it.
    ///
    /// - Parameter chooser: who chose the addresses, shown as the HTTPDNS provider.
    public static func pinned(_ name: String, to addresses: [IPAddress], by chooser: String) -> HostResolution {
        let v4 = addresses.filter { $0.family == .v4 }
        let v6 = addresses.filter { $0.family == .v6 }
        return HostResolution(
            host: name, system: SystemAnswer(ipv4: v4, ipv6: v6),
            httpdns: HTTPDNSAnswer(provider: ProviderID(chooser), ipv4: v4, ipv6: v6))
    }
}

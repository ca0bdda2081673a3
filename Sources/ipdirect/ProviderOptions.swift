// The provider options every front end shares (`resolve`, `probe`, `agent`, `config show`, the
// console): which HTTPDNS service, how long to wait, or `--lab` to use the lab's. Never a secret on argv.
import ArgumentParser
import ConfigurationSources
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe
import TerminalText

extension ProviderKind: ExpressibleByArgument {
    /// The kinds in the registry's order, which `--help` lists and the shell completions offer.
    public static var allValueStrings: [String] { ProviderRegistry.all.map(\.kind.rawValue) }
}
extension HTTPDNSCipher: ExpressibleByArgument {}
extension DoHMethod: ExpressibleByArgument {}

/// `--provider --endpoint --account --preset --timeout --lab ...`, merged with the environment
/// and the configuration file into a ready resolver by `start()`.
struct ProviderOptions: ParsableArguments {
    @Option(help: ArgumentHelp(ProviderRegistry.helpSentence, valueName: "PROVIDER"))
    var provider: ProviderKind?

    @Option(
        help: ArgumentHelp(
            "How queries are sealed: none, aes-cbc, aes-gcm (alicloud m=1/2), des or aes-cbc (tencent). The key comes only from IPDIRECT_HTTPDNS_KEY or the file.",
            valueName: "CIPHER"))
    var cipher: HTTPDNSCipher?

    @Option(
        help: ArgumentHelp("An alicloud sdns-K parameter (repeatable), e.g. --sdns region=east.", valueName: "K=V"))
    var sdns: [String] = []

    @Option(
        help: ArgumentHelp(
            "The HTTPDNS service: base URL for alicloud/tencent, full query URL for doh-json, or a preset name.",
            valueName: "URL"))
    var endpoint: String?

    @Option(
        help: ArgumentHelp(
            "Account ID (alicloud). The signing secret comes only from IPDIRECT_HTTPDNS_SECRET or the file.",
            valueName: "ID"))
    var account: String?

    @Option(
        help: ArgumentHelp(
            "A public service by name: \(ProviderPreset.all.map(\.name).joined(separator: ", ")).", valueName: "NAME"))
    var preset: String?

    @Option(
        help: ArgumentHelp(
            "Seconds to wait for HTTPDNS and for system DNS (default \(ResolutionError.format(ResolverConfiguration().timeout)), the configuration's timeout).",
            valueName: "SECONDS"))
    var timeout: Double?

    @Option(help: ArgumentHelp("Extra CA file (PEM) trusted for the HTTPDNS service's TLS.", valueName: "FILE"))
    var httpdnsCA: String?

    @Option(
        help: ArgumentHelp(
            "Ask this DNS server directly for the system column, as dig @server would (default: getaddrinfo).",
            valueName: "HOST[:PORT]"))
    var dnsServer: String?

    @Option(
        help: ArgumentHelp(
            "How --provider doh sends queries: get (?dns=) or post (default \(ResolverConfiguration.defaults.dohMethod.rawValue), the configuration's doh_method).",
            valueName: "METHOD"))
    var dohMethod: DoHMethod?

    @Option(
        help: ArgumentHelp(
            "Send each HTTPDNS request exactly as this client does: ipdirect (default), ios-3.4, android-2.6, node-1.0 (alicloud), c-2.2 (alicloud-legacy); the configuration's sdk.",
            valueName: "PROFILE"))
    var sdk: SDKProfile?

    @Option(
        help: ArgumentHelp(
            "Ask alicloud for the answer this client address would get (legacy ip=, v2 cip); the configuration's client_ip.",
            valueName: "IP"))
    var clientIP: String?

    @Flag(help: "Serve expired answers at once while refreshing them.")
    var reuseExpired = false

    @Flag(help: "Do not fall back to system DNS when HTTPDNS fails.")
    var noFallback = false

    @Option(help: configFileHelp)
    var config: String?

    /// `--config`'s help, for every command that reads the configuration file.
    static let configFileHelp = ArgumentHelp(
        "Configuration file (default: $XDG_CONFIG_HOME/ipdirect/config.toml).", valueName: "FILE")

    @Flag(
        help:
            "Start the embedded lab in-process and resolve through its HTTPDNS service (provider alicloud unless --provider says otherwise)."
    )
    var lab = false

    func validate() throws {
        if let preset, ProviderPreset.named(preset) == nil {
            throw ValidationError(
                "unknown preset '\(preset)'; known: \(ProviderPreset.all.map(\.name).joined(separator: ", "))")
        }
        if let timeout, !(timeout > 0 && timeout <= ResolverConfiguration.maxTimeout) {
            throw ValidationError(
                "--timeout must be a number of seconds above 0 and at most \(ResolutionError.format(ResolverConfiguration.maxTimeout))"
            )
        }
        if preset != nil, endpoint != nil {
            throw ValidationError("give --preset or --endpoint, not both")
        }
        if let dnsServer {
            do {
                _ = try DNSServer.parse(dnsServer, setting: "--dns-server")
            } catch {
                throw ValidationError(error.description)
            }
        }
        if let clientIP, IPLiteral.family(of: clientIP) == nil {
            throw ValidationError("--client-ip takes an IPv4 or IPv6 address, not '\(clientIP)'")
        }
        for pair in sdns where !pair.contains("=") || pair.hasPrefix("=") {
            throw ValidationError("--sdns takes KEY=VALUE, not '\(pair)'")
        }
    }

    /// What the command line says, as a configuration layer (no secret: argv has none).
    var commandLineLayer: ConfigurationLayer {
        var layer = ConfigurationLayer()
        layer.provider = provider
        layer.endpoint = endpoint
        layer.account = account
        layer.caFile = httpdnsCA
        layer.timeout = timeout
        layer.fallbackToSystem = noFallback ? false : nil
        layer.reuseExpired = reuseExpired ? true : nil
        layer.cipher = cipher
        if !sdns.isEmpty {
            var values: [String: String] = [:]
            for pair in sdns {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                values[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
            layer.sdns = values
        }
        layer.dnsServer = dnsServer.flatMap { try? DNSServer.parse($0) }
        layer.dohMethod = dohMethod
        layer.sdk = sdk
        layer.clientIP = clientIP
        if let preset = preset.flatMap(ProviderPreset.named) {
            layer.endpoint = preset.name
            layer.provider = provider ?? preset.kind
        }
        return layer
    }

    /// Loads the configuration, starts the lab when asked, and builds the resolver cache.
    ///
    /// Warnings (unknown settings, a readable secret file, a corrupt cache file) go to stderr.
    /// - Parameter labFaults: the faults the lab fakes from the start, with `--lab` (`doctor --fault`).
    /// - Throws: `ValidationError` for an unusable configuration, or the lab's start-up error.
    func start(labFaults: LabFaultSet = LabFaultSet()) async throws -> ResolverSession {
        var configuration: IPDirectConfiguration
        var warnings: [String]
        do {
            (configuration, warnings) = try ConfigurationLoader.load(commandLine: commandLineLayer, file: config)
        } catch {
            throw ValidationError(error.description)
        }
        // ca_file (--httpdns-ca) adds to the system's CAs; the lab's, set below, stands alone.
        if let caFile = configuration.caFile {
            if let problem = CAFileOption.problem(caFile, named: "ca_file (--httpdns-ca)") {
                throw ValidationError(problem)
            }
            configuration.caFile = CABundle.path(adding: caFile)
        } else if let bundle = try CAFileOption.environmentBundle() {
            // curl's CURL_CA_BUNDLE and SSL_CERT_FILE, instead of the system's CAs, as in curl.
            configuration.caFile = bundle
        }
        var startedLab: Lab?
        var temporary: String?
        if lab {
            var options = LabOptions(fault: labFaults.httpdns)
            options.networkFaults = labFaults.network
            let running = try await Lab.start(options)
            startedLab = running
            let e = running.endpoints
            let kind = provider ?? .alicloud
            let route = ProviderRegistry.entry(kind).lab
            configuration.provider = kind
            configuration.account = route.map(e.account) ?? e.account
            configuration.secret = e.secret
            configuration.caFile = e.ca
            configuration.cipher = cipher ?? .none
            configuration.key = route?.keys[configuration.cipher].map(e.key)
            configuration.token = nil
            configuration.endpoint = route.map(e.endpoint)
            // The lab's DNS server stands in for the carrier's LocalDNS, so the system column
            // compares with HTTPDNS at once; --dns-server on the command line still wins.
            if dnsServer == nil { configuration.dnsServer = try? DNSServer.parse(e.dns) }
            // One provider of each kind the lab serves, for --all-providers and the compare view.
            configuration.providers = CompareProviders.labProviders(e)
            // The lab's names would only pollute the user's own cache file.
            let directory = NSTemporaryDirectory() + "ipdirect-lab-" + UUID().uuidString
            temporary = directory
            configuration.cachePath = directory + "/cache.json"
        }
        let httpdns: any HTTPDNSProvider
        do {
            httpdns = try ProviderFactory.make(configuration.resolver)
        } catch {
            try? await startedLab?.shutdown()
            throw ValidationError(ConfigurationField.phrased(error))
        }
        let cache = ResolverCache(configuration: configuration.resolver, provider: httpdns)
        warnings += cache.loadWarnings
        for warning in warnings { ResolutionOutput.warn("warning: \(warning)") }
        return ResolverSession(
            configuration: configuration, cache: cache, lab: startedLab, temporaryDirectory: temporary,
            warnings: warnings)
    }
}

/// A resolver ready to use: the merged configuration, the cache, and the lab when `--lab`
/// started one. Call `close()` when done: it saves the cache and stops the lab.
struct ResolverSession: Sendable {
    let configuration: IPDirectConfiguration
    let cache: ResolverCache
    let lab: Lab?
    let temporaryDirectory: String?
    let warnings: [String]

    /// The provider and where it points, for status lines (never the secret).
    var providerDescription: String {
        guard let endpoint = configuration.effectiveEndpoint else { return "none (system DNS only)" }
        return "\(cache.provider.name) at \(endpoint)" + (lab != nil ? " (lab)" : "")
    }

    /// Where to send a host or URL the user typed: with the lab running, a lab name without
    /// a port goes to the lab server that serves it (each listens on a port of its own);
    /// anything else is returned as it is.
    func labTarget(_ text: String) -> String {
        guard let hosts = lab?.endpoints.hosts, let url = try? ProbeURL.parse(text), !url.hasExplicitPort,
            let base = hosts[url.host]
        else { return text }
        return base + url.pathAndQuery.dropFirst()
    }

    /// Saves the cache (a failure is a warning) and stops the lab.
    func close() async {
        do {
            try cache.save()
        } catch {
            ResolutionOutput.warn("warning: \(error)")
        }
        if let lab { try? await lab.shutdown() }
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
    }
}

/// Messages to stderr for the resolution commands, escaped: they quote what servers, files
/// and providers said.
enum ResolutionOutput {
    static func warn(_ line: String) {
        FileHandle.standardError.write(Data((TerminalText.escapedLines(line) + "\n").utf8))
    }
}

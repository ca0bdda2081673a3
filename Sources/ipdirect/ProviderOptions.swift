// The provider options every front end shares (`resolve`, `probe`, `agent`, `config show`, the
// console): which HTTPDNS service, how long to wait, or `--lab` to use the lab's. Never a secret on argv.
import ArgumentParser
import Composition
import ConfigurationSources
import FoundationEssentials
import FoundationGaps
import LabFaults
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
    /// - Throws: `ValidationError` for an unusable configuration, `UsageError` for an unusable CA
    ///   bundle in the environment, or the lab's start-up error.
    func start(labFaults: LabFaultSet = LabFaultSet()) async throws -> ResolverSession {
        let settings = SessionSettings(
            commandLine: commandLineLayer, configurationFile: config,
            lab: lab ? LabRequest(provider: provider, faults: labFaults) : nil)
        do {
            return try await ResolverSession.start(settings, warnings: ResolutionOutput())
        } catch SessionError.configuration(let sentence) {
            throw ValidationError(sentence)
        } catch SessionError.serviceCAFile(let path, let reason) {
            throw ValidationError("ca_file (--httpdns-ca) \(path): \(reason)")
        } catch SessionError.environmentCABundle(let sentence) {
            throw UsageError(sentence)
        }
    }
}

/// Messages to stderr for the resolution commands, escaped: they quote what servers, files
/// and providers said.
struct ResolutionOutput: SessionWarnings {
    static func warn(_ line: String) {
        StandardStream.error.write((TerminalText.escapedLines(line) + "\n"))
    }

    /// A session's warning, as `warning: ...`.
    func warn(_ sentence: String) { Self.warn("warning: \(sentence)") }
}

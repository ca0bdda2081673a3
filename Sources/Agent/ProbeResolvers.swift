// The resolvers a `/probe` request may pick besides the agent's own: a `[[providers]]` entry by
// name, a DNS server for the system column; the configuration's kept, a request's bounded in number.
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe

/// Makes and keeps the resolvers `provider=` and `dns_server=` name.
public final class ProbeResolvers: Sendable {
    /// Resolvers kept for `dns_server=` values requests name; past these, the one used longest
    /// ago is let go (a relay must not let a scraper grow the agent without end). The
    /// configuration's choices (a `[[providers]]` entry, a module's `dns_server`) are finite and
    /// kept apart, so requests naming other servers never take their place.
    public static let kept = 16

    private struct Choice: Hashable {
        var provider: String?
        var dnsServer: DNSServer?
    }

    /// The resolvers made so far: the configuration's, and requests' in the order last used.
    private struct Made {
        var configured: [Choice: ResolverCache] = [:]
        var requested: [Choice: ResolverCache] = [:]
        var used: [Choice] = []
    }

    private let configuration: ResolverConfiguration
    private let environment: [String: String]
    private let allow: ProbeAllowList
    private let made = Locked(Made())

    /// - Parameters:
    ///   - configuration: the agent's; its `[[providers]]` are what `provider=` may name.
    ///   - allow: what `dns_server=` may name (an address the requester writes, like a target's);
    ///     the resolvers' answers are screened by it too.
    ///   - environment: where a provider's `secret_env`, `key_env` and `token_env` are read.
    public init(
        configuration: ResolverConfiguration, allow: ProbeAllowList = ProbeAllowList(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        var configuration = configuration
        // These caches live in memory only: the agent's file is its own cache's.
        configuration.cachePath = nil
        configuration.prefetch = []
        self.configuration = configuration
        self.environment = environment
        self.allow = allow
    }

    /// The resolver for a provider's name and a DNS server, each nil for the agent's.
    ///
    /// - Returns: nil when both are nil (the agent's own resolver serves).
    /// - Throws: a sentence (400) for an unknown provider or a DNS server that is not one or is
    ///   outside `--probe-allow` (403).
    func resolver(provider: String?, dnsServer: String?) throws(EndpointRefusal) -> HostResolver? {
        var server: DNSServer?
        if let dnsServer {
            do {
                server = try DNSServer.parse(dnsServer, setting: "dns_server=")
            } catch {
                throw EndpointRefusal(400, "\(error)")
            }
        }
        // The requester wrote this address: it is held to the list as a literal target is.
        if let server, let reason = allow.refusal(host: server.address.text) {
            throw EndpointRefusal(403, "dns_server=\(server) refused: \(reason)")
        }
        return try resolver(provider: provider, dnsServer: server, requested: server != nil)
    }

    /// The resolver for a provider's name and a DNS server already read (a module's, which the
    /// configuration chose: not held to `--probe-allow`), each nil for the agent's.
    func resolver(provider: String?, dnsServer server: DNSServer?) throws(EndpointRefusal) -> HostResolver? {
        try resolver(provider: provider, dnsServer: server, requested: false)
    }

    /// - Parameter requested: the DNS server is a request's, not the configuration's.
    private func resolver(
        provider: String?, dnsServer server: DNSServer?, requested: Bool
    ) throws(EndpointRefusal) -> HostResolver? {
        guard provider != nil || server != nil else { return nil }
        var choice = Choice(provider: provider)
        var settings = configuration
        if let provider {
            guard let setting = configuration.providers.first(where: { $0.name == provider }) else {
                let names = configuration.providers.map(\.name)
                throw EndpointRefusal(
                    400,
                    "provider=\(provider): no [[providers]] entry has that name"
                        + (names.isEmpty
                            ? " (the configuration has none)" : " (there are \(names.joined(separator: ", ")))"))
            }
            do {
                settings = try setting.configuration(over: configuration, environment: environment)
            } catch {
                throw EndpointRefusal(400, "provider=\(provider): \(error)")
            }
        }
        if let server {
            settings.dnsServer = server
            choice.dnsServer = server
        }
        let made = made.withLock { made -> Result<ResolverCache, EndpointRefusal> in
            if let cache = requested ? made.requested[choice] : made.configured[choice] {
                if requested, let index = made.used.firstIndex(of: choice) {
                    made.used.append(made.used.remove(at: index))
                }
                return .success(cache)
            }
            let provider: any HTTPDNSProvider
            do {
                provider = try ProviderFactory.make(settings)
            } catch {
                return .failure(EndpointRefusal(400, "cannot resolve through that provider: \(error)"))
            }
            let cache = ResolverCache(configuration: settings, provider: provider)
            guard requested else {
                made.configured[choice] = cache
                return .success(cache)
            }
            // A probe still using the one let go keeps it until it ends: nothing is cut short.
            if made.requested.count >= Self.kept { made.requested[made.used.removeFirst()] = nil }
            made.requested[choice] = cache
            made.used.append(choice)
            return .success(cache)
        }
        let cache = try made.get()
        return allow.guarding { await cache.resolve($0) }
    }
}

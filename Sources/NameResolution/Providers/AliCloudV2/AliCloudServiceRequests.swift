// The Alibaba providers' requests for a caller that sends them itself and reads every exchange
// (`ipdirect doctor`): start addresses, `/ss` and its answer, one name's query signed or not.
import FoundationEssentials
import FoundationGaps

/// What `alicloud` and `alicloud-legacy` send, built by the code they send it with, so a check
/// that looks at each exchange (status, `Date`, the service's code) asks exactly what they ask.
public enum AliCloudServiceRequests {
    /// One service address: its base URL, the IP or host that names it, and the name its
    /// certificate must carry over HTTPS (nil: the URL's own host).
    public struct Address: Sendable, Equatable {
        public var url: String
        public var label: String
        public var checkName: String?

        public init(url: String, label: String, checkName: String? = nil) {
            self.url = url
            self.label = label
            self.checkName = checkName
        }
    }

    /// Where a configuration's queries start: its endpoint alone (`fixed`), or the region's
    /// start IPs (or `start_ips`) from which `/ss` discovers the service IPs.
    ///
    /// - Throws: `.misconfigured` for an unknown region or a start URL that is not one.
    public static func starts(
        _ configuration: ResolverConfiguration
    ) throws(ResolutionError) -> (addresses: [Address], fixed: Bool) {
        let account = configuration.account ?? ""
        if let endpoint = configuration.endpoint.flatMap({ $0.isEmpty ? nil : ProviderPreset.named($0)?.endpoint ?? $0 }
        ) {
            let base =
                configuration.provider == .alicloudLegacy
                ? AliCloudProvider.base(endpoint, account: account) : trimmedBase(endpoint)
            return ([Address(url: base, label: URLComponents(string: base)?.host ?? base)], true)
        }
        let bases = try AliCloudServiceIPs.starts(
            region: configuration.region, startIPs: configuration.startIPs, serviceName: configuration.serviceName)
        return (bases.map(Address.init), false)
    }

    /// The `/ss` request's path and query, as the configured provider and `--sdk` send it (signed
    /// with the secret for the legacy API, as the C SDK signs it).
    public static func serviceListTarget(_ configuration: ResolverConfiguration) -> String {
        let secret = configuration.secret.flatMap { $0.isEmpty ? nil : $0 }
        return AliCloudServiceIPs.serviceListTarget(
            .init(
                starts: [], account: configuration.account ?? "", sessionID: AliCloudV2Provider.newSessionID(),
                transport: HTTPDNSTransport(configuration), serviceName: configuration.serviceName,
                legacySecret: configuration.provider == .alicloudLegacy ? secret : nil, profile: configuration.sdk))
    }

    /// The service addresses a `/ss` answer names, on `start`'s scheme, every one an IP literal.
    ///
    /// - Throws: `.malformed` for an answer that is no JSON object, `.notAnIP` for junk in its lists.
    public static func serviceList(
        _ body: [UInt8], from start: Address, serviceName: String
    ) throws(ResolutionError) -> [Address] {
        try AliCloudServiceIPs.serviceIPs(
            body, start: AliCloudServiceIPs.Base(url: start.url, label: start.label, checkName: start.checkName),
            serviceName: serviceName
        ).map(Address.init)
    }

    /// One name's query (path and query) as the configured provider sends it, with its cipher;
    /// signed with the configured secret when `signed`, the expiry read from `now`.
    ///
    /// - Throws: `.setup` without an account, `.misconfigured` for a secret or key the provider refuses.
    public static func query(
        _ configuration: ResolverConfiguration, host: String, signed: Bool, now: Date
    ) throws(ResolutionError) -> String {
        guard let account = configuration.account, !account.isEmpty else {
            throw .setup(.missing(.account, provider: configuration.provider))
        }
        let secret = signed ? configuration.secret : nil
        // The servers are never asked: only the target is built.
        let servers = AliCloudServiceIPs(endpoint: "http://127.0.0.1")
        if configuration.provider == .alicloudLegacy {
            return AliCloudProvider(
                servers: servers, account: account, secret: secret, transport: HTTPDNSTransport(configuration),
                profile: configuration.sdk, clientIP: configuration.clientIP, now: { now }
            ).target(for: host, families: [.v4])
        }
        return try AliCloudV2Provider(
            servers: servers, account: account, secret: secret, cipher: configuration.cipher, key: configuration.key,
            sdns: configuration.sdns, transport: HTTPDNSTransport(configuration), now: { now },
            profile: configuration.sdk, clientIP: configuration.clientIP
        ).target(for: [host], families: [.v4])
    }

    /// What an answer says about itself: the service's `code` (cleaned) and, for v2, the `mode`
    /// its data is sealed with (0 plain, 1 AES-CBC, 2 AES-GCM).
    public static func reading(_ body: [UInt8]) -> (code: String?, mode: Int?) {
        let object = JSONValue(parsing: body)?.object
        return (serviceCode(in: object), object.flatMap { integer($0["mode"]) })
    }

    /// The sentence for a refusal `code` (`InvalidSignature`, `SignatureExpired`, ...), with
    /// what to do, as the providers say it.
    public static func explain(
        code: String, status: Int, configuration: ResolverConfiguration, serverDate: String?, now: Date
    ) -> ResolutionError {
        AliCloudV2Errors.explain(
            code: code, status: status, account: configuration.account ?? "", signed: configuration.secret != nil,
            serverDate: serverDate, now: now)
    }

    /// An RFC 9110 `Date` header's time; nil for text that is not one.
    public static func httpDate(_ text: String) -> Date? { AliCloudV2Errors.httpDate(text) }
}

extension AliCloudServiceRequests.Address {
    init(_ base: AliCloudServiceIPs.Base) {
        self.init(url: base.url, label: base.label, checkName: base.checkName)
    }
}

// Alibaba Cloud legacy's row in the provider registry: its settings, the public address by
// default, its factory, where the lab serves it and the parser `make fuzz` runs.

extension ProviderEntry {
    /// `--provider alicloud-legacy`.
    static let aliCloudLegacy = ProviderEntry(
        kind: .alicloudLegacy, helpName: "alicloud-legacy", settings: [.endpoint, .account, .secret],
        defaultService: .fixed(
            plain: ProviderFactory.alicloudDefaultEndpoint, signed: ProviderFactory.alicloudDefaultHTTPSEndpoint),
        wireCredential: .signedQuery,
        make: { configuration, endpoint throws(ResolutionError) in
            guard let account = configuration.account, !account.isEmpty else {
                throw .setup(.missing(.account, provider: configuration.provider))
            }
            return AliCloudProvider(
                endpoint: endpoint ?? ProviderFactory.alicloudDefaultEndpoint, account: account,
                secret: configuration.secret, transport: HTTPDNSTransport(configuration))
        },
        lab: LabRoute(listener: .tls, compared: HTTPDNSCipher.none),
        fuzz: ProviderFuzzEntry(corpus: "alicloud", run: ParserEntryPoints.aliCloud))
}

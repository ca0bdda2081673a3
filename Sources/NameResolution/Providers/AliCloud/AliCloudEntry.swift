// Alibaba Cloud legacy's row in the provider registry: its settings, service discovery by default
// (as the SDKs do, as for v2), its factory, where the lab serves it and the parser `make fuzz` runs.
import LabFaults

extension ProviderEntry {
    /// `--provider alicloud-legacy`.
    static let aliCloudLegacy = ProviderEntry(
        kind: .alicloudLegacy, helpName: "alicloud-legacy",
        settings: [.endpoint, .account, .secret, .region, .startIPs, .serviceName],
        defaultService: .discovery, wireCredential: .signedQuery,
        make: { configuration, _ throws(ResolutionError) in
            guard let account = configuration.account, !account.isEmpty else {
                throw .setup(.missing(.account, provider: configuration.provider))
            }
            // No endpoint means service discovery (`/ss`, signed when a secret is set), as for v2.
            return try AliCloudProvider.make(configuration, account: account)
        },
        lab: LabRoute(listener: .tls, format: .alicloudLegacy, compared: HTTPDNSCipher.none),
        fuzz: ProviderFuzzEntry(corpus: "alicloud", run: ParserEntryPoints.aliCloud),
        doctor: .aliCloud(signatureMaximumAhead: nil))
}

// Alibaba Cloud v2's row in the provider registry: its settings, service discovery by default,
// its factory, where the lab serves it and the parser `make fuzz` runs.
import LabFaults

extension ProviderEntry {
    /// `--provider alicloud`.
    static let aliCloudV2 = ProviderEntry(
        kind: .alicloud, helpName: "alicloud (v2)",
        settings: [.endpoint, .account, .secret, .key, .cipher, .sdns, .region, .startIPs, .serviceName],
        defaultService: .discovery, wireCredential: .signedQuery,
        make: { configuration, _ throws(ResolutionError) in
            guard let account = configuration.account, !account.isEmpty else {
                throw .setup(.missing(.account, provider: configuration.provider))
            }
            // No endpoint means service discovery, as the SDKs do.
            let given = configuration.endpoint.flatMap { $0.isEmpty ? nil : ProviderPreset.named($0)?.endpoint ?? $0 }
            return try AliCloudV2Provider.make(configuration, account: account, endpoint: given)
        },
        lab: LabRoute(
            listener: .tls, format: .alicloudV2, keys: [.aesCBC: .aes, .aesGCM: .aes], compared: HTTPDNSCipher.none),
        fuzz: ProviderFuzzEntry(corpus: "alicloud", run: ParserEntryPoints.aliCloudV2),
        doctor: .aliCloud(signatureMaximumAhead: 24 * 3600))
}

// Tencent DNSPod D+'s row in the provider registry: its settings, the public preset by default,
// its factory, where the lab serves it and the parser `make fuzz` runs.
import LabFaults

extension ProviderEntry {
    /// `--provider tencent`.
    static let tencent = ProviderEntry(
        kind: .tencent, helpName: "tencent", settings: [.endpoint, .account, .key, .token, .cipher],
        defaultService: .preset, wireCredential: .token,
        make: { configuration, endpoint throws(ResolutionError) in
            guard let endpoint else {
                throw .setup(.missing(.endpoint, provider: configuration.provider, example: "http://119.29.29.29"))
            }
            return try TencentProvider.make(
                configuration, endpoint: endpoint, transport: HTTPDNSTransport(configuration))
        },
        lab: LabRoute(
            listener: .plain, format: .tencent, account: .tencent, keys: [.des: .tencentDES, .aesCBC: .tencentAES],
            compared: .des),
        fuzz: ProviderFuzzEntry(corpus: "tencent", run: ParserEntryPoints.tencent),
        doctor: ProviderDoctorFacts(
            addresses: .endpoint, clock: .endpoint,
            clientAddressAbsent:
                "Tencent's answers carry no client address as ipdirect asks for them, so there is none to compare.",
            account: .canary, signs: false))
}

// DoH JSON's row in the provider registry: the default preset when nothing is configured, its
// factory, where the lab serves it and the parser `make fuzz` runs.
import LabFaults

extension ProviderEntry {
    /// `--provider doh-json`.
    static let dohJSON = ProviderEntry(
        kind: .dohJSON, helpName: "doh-json", settings: [.endpoint], defaultService: .preset,
        make: { configuration, endpoint throws(ResolutionError) in
            guard let endpoint else {
                throw .setup(
                    .missing(.endpoint, provider: configuration.provider, example: "https://dns.google/resolve"))
            }
            return DoHJSONProvider(endpoint: endpoint, transport: HTTPDNSTransport(configuration))
        },
        lab: LabRoute(listener: .tls, format: .dohJSON),
        fuzz: ProviderFuzzEntry(corpus: "doh-json", run: ParserEntryPoints.dohJSON),
        doctor: .doh)
}

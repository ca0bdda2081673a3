// RFC 8484 DoH's row in the provider registry: its settings, its factory, where the lab serves
// it and the parser `make fuzz` runs (DNS messages, shared with `--dns-server`).
import LabFaults

extension ProviderEntry {
    /// `--provider doh`.
    static let dohWire = ProviderEntry(
        kind: .doh, helpName: "doh (RFC 8484)", settings: [.endpoint, .dohMethod], defaultService: .preset,
        make: { configuration, endpoint throws(ResolutionError) in
            guard let endpoint else {
                throw .setup(
                    .missing(.endpoint, provider: configuration.provider, example: "https://dns.alidns.com/dns-query"))
            }
            return DoHWireProvider(
                endpoint: endpoint, method: configuration.dohMethod, transport: HTTPDNSTransport(configuration))
        },
        lab: LabRoute(listener: .tls, format: .dohWire, compared: HTTPDNSCipher.none),
        fuzz: ProviderFuzzEntry(corpus: "doh-wire", run: ParserEntryPoints.dohWire),
        doctor: .doh)
}

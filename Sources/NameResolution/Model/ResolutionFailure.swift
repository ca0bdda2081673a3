// Why one side of a resolution (system DNS, a DNS server, HTTPDNS) gave no answer, as a value:
// the engine decides by its case, and `sentence` writes it only where text is shown.
import CurlTransport
import TerminalText

/// Why system DNS, the chosen DNS server or HTTPDNS gave no answer for a name (`error` on
/// `SystemAnswer` and `HTTPDNSAnswer`).
///
/// `Codable` as the sentence (`SentencedFailure`), the form `resolve --format json` and the probe
/// exports have always written under `error`; read back, a sentence becomes `.reported`. `kind` names the case in
/// words that stay the same across releases, for scripts and metrics.
public enum ResolutionFailure: SentencedFailure {
    /// The HTTPDNS service, or the provider standing in for it, failed.
    case httpdns(ResolutionError)
    /// The operating system's resolver (getaddrinfo) failed.
    case systemDNS(SystemDNSFailure)
    /// The DNS server `--dns-server` names failed.
    case dnsServer(DNSServer, DNSServerFailure)
    /// No address family was asked for.
    case noFamilyAsked
    /// Known only by its sentence: read back from a JSON document, or set by a front end that
    /// has no answer to show ("not asked").
    case reported(String)

    /// A stable name for the case: `httpdns`, `system-dns`, `dns-server`, `no-family`, `reported`.
    public var kind: String {
        switch self {
        case .httpdns: "httpdns"
        case .systemDNS: "system-dns"
        case .dnsServer: "dns-server"
        case .noFamilyAsked: "no-family"
        case .reported: "reported"
        }
    }

    /// The one sentence a person reads for this failure.
    public var sentence: String {
        switch self {
        case .httpdns(let error): error.description
        case .systemDNS(let failure): failure.sentence
        case .dnsServer(let server, let failure): failure.sentence(server: "DNS server \(server)")
        case .noFamilyAsked: "no address family asked for"
        case .reported(let sentence): sentence
        }
    }

    /// The sentence led by the resolver's name (`system DNS: no such name x`), unless it starts
    /// by naming that resolver already.
    ///
    /// - Parameter resolver: how the text names the resolver: `system DNS`, `HTTPDNS`,
    ///   `DNS server 127.0.0.1:5353`.
    public func sentence(from resolver: String) -> String {
        let named: Bool =
            switch self {
            case .systemDNS: resolver == "system DNS"
            case .dnsServer(let server, _): resolver == "DNS server \(server)"
            case .httpdns(.http), .httpdns(.notAnIP), .httpdns(.transport): resolver == "HTTPDNS"
            case .httpdns, .noFamilyAsked: false
            // Only text to go by.
            case .reported(let sentence): sentence.lowercased().hasPrefix(resolver.lowercased())
            }
        return named ? sentence : "\(resolver): \(sentence)"
    }
}

/// Why getaddrinfo gave no address.
public enum SystemDNSFailure: Sendable, Hashable {
    /// EAI_NONAME.
    case noSuchName(host: String)
    /// EAI_AGAIN: no DNS server answered.
    case temporary(host: String)
    /// EAI_FAIL.
    case serverFailed(host: String)
    /// EAI_NODATA or EAI_ADDRFAMILY.
    case noAddressOfFamily(host: String)
    /// Another getaddrinfo error, with `gai_strerror`'s words.
    case other(message: String, host: String)
    /// getaddrinfo succeeded with no address of any family asked.
    case noAddress(host: String)
    /// No answer within the timeout; `lookups` is how many run at once.
    case timedOut(seconds: Double, lookups: Int)

    /// The sentence, starting "system DNS".
    public var sentence: String {
        switch self {
        case .noSuchName(let host): "system DNS: no such name \(host)"
        case .temporary(let host): "system DNS: temporary failure resolving \(host) (no DNS server answered)"
        case .serverFailed(let host): "system DNS: the DNS server failed for \(host)"
        case .noAddressOfFamily(let host): "system DNS: \(host) has no address of that family"
        case .other(let message, let host): "system DNS: \(message) (\(host))"
        case .noAddress(let host): "system DNS: no address for \(host)"
        case .timedOut(let seconds, let lookups):
            "system DNS timed out after \(ResolutionError.format(seconds)) s (at most \(lookups) lookups run at once; the rest wait their turn within that time)"
        }
    }
}

/// Why the DNS server `--dns-server` names gave no address.
public enum DNSServerFailure: Sendable, Hashable {
    /// c-ares could not be set up.
    case libraryFailed
    /// c-ares could not open a channel.
    case channelFailed
    /// c-ares did not take the server's address.
    case addressRefused
    /// The name cannot be put in a query; `clause` says why ("is too long").
    case unaskable(host: String, clause: String)
    /// NXDOMAIN.
    case noSuchName(host: String)
    /// No usable reply; `problems` says what came instead, one clause each (none: no answer).
    case noAnswer(problems: [String])
    /// No reply came to any query (each timed out or was refused): the way to the server is
    /// closed, as against a server that replied with an error. `problems` as for `noAnswer`.
    case unanswered(problems: [String])
    /// No query left this machine: connect or send failed at once (a local firewall, no route).
    /// `problems` as for `noAnswer`.
    case stoppedHere(how: ConnectionFailure, problems: [String])
    /// The reply held records that are not addresses (cleaned, at most three kept).
    case notAddresses([String])
    /// NOERROR without a record of the families asked (NODATA).
    case noData(host: String, families: Set<IPFamily>)

    /// The sentence, starting with `server` ("DNS server 127.0.0.1:5353").
    func sentence(server: String) -> String {
        switch self {
        case .libraryFailed: "\(server): the c-ares library failed to initialise"
        case .channelFailed: "\(server): c-ares could not start a resolver channel"
        case .addressRefused: "\(server): c-ares refused the server address"
        case .unaskable(let host, let clause):
            "\(server): cannot ask for \(TerminalText.quoted(host)): the name \(clause)"
        case .noSuchName(let host): "\(server): no such name \(host) (NXDOMAIN): the name does not exist"
        case .noAnswer(let problems), .unanswered(let problems), .stoppedHere(_, let problems):
            "\(server): " + (problems.isEmpty ? "no answer" : problems.joined(separator: "; "))
        case .notAddresses(let junk):
            "\(server) answered \(junk.map { TerminalText.quoted($0) }.joined(separator: ", ")), not IP addresses"
        case .noData(let host, let families):
            "\(server): \(host) exists but has no \(ResolutionError.addressWord(families)) (NODATA)"
        }
    }
}

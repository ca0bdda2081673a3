// Why a resolution failed, as values a person can read: every HTTPDNS and system DNS
// failure maps to one case, and each case to one sentence. Nobody reads "error 28".
import CurlTransport
import FoundationEssentials
import FoundationGaps
import TerminalText

/// A failed HTTPDNS or system DNS resolution.
public enum ResolutionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No answer within the timeout.
    case timeout(seconds: Double)
    /// No answer within the timeout, of which the query spent `waited` seconds (a tenth or
    /// more) in ipdirect's own queue before it was sent: the service had only the rest.
    case timeoutAfterWaiting(seconds: Double, waited: Double)
    /// No answer because the query was never sent: it waited `waited` seconds for its turn in
    /// ipdirect's own queue (every connection busy) and the timeout came first. The service was
    /// not asked, so nothing is said about it.
    case notSent(waited: Double)
    /// The endpoint refused the connection (ECONNREFUSED: nothing listens there).
    case refused(endpoint: String, detail: String)
    /// The connection to the endpoint failed otherwise: a local firewall, no route, a reset,
    /// each in its own words (a time-out is `timeout`).
    case unreachable(endpoint: String, how: ConnectionFailure)
    /// The endpoint's own host name did not resolve.
    case endpointUnresolvable(endpoint: String)
    /// TLS to the service failed: certificate not trusted, wrong name, handshake error.
    case tls(detail: String)
    /// The service answered with an HTTP error; `code` is its JSON `code`, when it sent one
    /// (cleaned where it was read, `serviceCode`).
    case http(status: Int, code: String?)
    /// The service refused the request signature (wrong secret or a skewed clock).
    case signatureRejected
    /// The signature's expiry time had passed when it arrived.
    case signatureExpired
    /// The service does not know the account ID.
    case invalidAccount(String)
    /// The answer could not be read.
    case malformed(detail: String)
    /// The name has no address of the requested families.
    case noSuchName(host: String, families: Set<IPFamily>)
    /// The name exists but has no address of the requested families (NOERROR, no records: NODATA).
    case noData(host: String, families: Set<IPFamily>)
    /// A DNS server (a DoH endpoint) answered with an RCODE that carries no address, named.
    case dnsRcode(server: String, host: String, rcode: DNSRcode)
    /// Every address in the answer was something other than an IP literal.
    case notAnIP(junk: [String])
    /// The configuration makes a request impossible (no account, bad endpoint...).
    case misconfigured(String)
    /// No provider can be built from the configuration: the setting it needs, typed.
    case setup(ProviderSetupError)
    /// System DNS (getaddrinfo) failed.
    case system(detail: String)
    /// Some other transport failure, with libcurl's words.
    case transport(detail: String)
    /// The service refused the request with one of its error codes; `sentence` names the
    /// code and says what to do.
    case service(code: String, sentence: String)
    /// A sealed answer could not be opened, or a query not sealed; `detail` says what to check.
    case undecryptable(detail: String)

    public var description: String {
        switch self {
        case .timeout(let seconds):
            return "timed out after \(Self.format(seconds)) s"
        case .timeoutAfterWaiting(let seconds, let waited):
            return
                "timed out after \(Self.format(seconds)) s, \(Self.format(tenths: waited)) s of which the query waited "
                + "for its turn in ipdirect before it was sent"
        case .notSent(let waited):
            return
                "the query was never sent: it waited \(Self.format(tenths: waited)) s for its turn behind ipdirect's "
                + "other requests (ipdirect was busy, not the service)"
        case .refused(let endpoint, let detail):
            return "connection refused by \(endpoint) (\(detail))"
        case .unreachable(let endpoint, let how):
            return "\(endpoint) \(how.clause)"
        case .endpointUnresolvable(let endpoint):
            return "the HTTPDNS endpoint's own name did not resolve (\(endpoint))"
        case .tls(let detail):
            return "TLS to the HTTPDNS service failed: \(detail)"
        case .http(let status, let code?):
            return "HTTPDNS answered HTTP \(status) with code \(TerminalText.quoted(code, cutAt: serviceCodeLimit))"
        case .http(let status, nil):
            return "HTTPDNS answered HTTP \(status)"
        case .signatureRejected:
            return "signature rejected: check the secret and this machine's clock"
        case .signatureExpired:
            return "signature expired before it arrived: check this machine's clock"
        case .invalidAccount(let account):
            return "the HTTPDNS service does not know account '\(account)'"
        case .malformed(let detail):
            return "malformed HTTPDNS answer: \(detail)"
        case .noSuchName(let host, let families):
            return "no such name: the service has no \(Self.addressWord(families)) for \(host)"
        case .noData(let host, let families):
            return "\(host) exists but has no \(Self.addressWord(families)) (NODATA)"
        case .dnsRcode(let server, let host, let rcode):
            return "\(server) answered \(rcode) for \(host): \(rcode.meaning)"
        case .notAnIP(let junk):
            let listed = junk.prefix(3).map { TerminalText.quoted($0) }.joined(separator: ", ")
            return junk.count == 1
                ? "HTTPDNS answered \(listed), which is not an IP address: answer refused"
                : "HTTPDNS answered \(listed), which are not IP addresses: answer refused"
        case .misconfigured(let detail):
            return detail
        case .setup(let problem):
            return problem.description
        case .system(let detail):
            return detail
        case .transport(let detail):
            return "HTTPDNS request failed: \(detail)"
        case .service(_, let sentence), .undecryptable(let sentence):
            return sentence
        }
    }

    /// "IPv4 address", "IPv6 address" or "address" for the families asked.
    static func addressWord(_ families: Set<IPFamily>) -> String {
        families == [.v6] ? "IPv6 address" : families == [.v4] ? "IPv4 address" : "address"
    }

    /// Seconds as people write them: "2", "0.5".
    public static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(cFormat: "%.1f", seconds)
    }

    /// Seconds as `format` writes them, to a tenth: a measured wait, not a setting.
    static func format(tenths seconds: Double) -> String {
        format((seconds * 10).rounded() / 10)
    }

    /// What a query with no answer within `limit` is, read at the deadline from its departures:
    /// never sent is ipdirect's own wait (named), not the service's silence; sent with less
    /// than nine tenths of the limit left for the service is a time-out that says how much of it
    /// went on waiting in ipdirect; otherwise the plain time-out. A query joined while already
    /// under way counts only the part of the limit it was not yet sent.
    public static func unanswered(within limit: Duration, _ reading: TransferDepartures.Reading) -> ResolutionError {
        let seconds = limit.inSeconds
        switch reading {
        case .waiting(let waited):
            return .notSent(waited: waited.inSeconds)
        case .left(let ago):
            let unsent = seconds - ago.inSeconds
            return unsent * 10 >= seconds
                ? .timeoutAfterWaiting(seconds: seconds, waited: unsent) : .timeout(seconds: seconds)
        }
    }

    /// Maps a libcurl failure on a request to `endpoint` to what it means for a resolver.
    static func from(_ error: CurlError, endpoint: String, timeout: Double) -> ResolutionError {
        switch error.kind {
        case .timeout: return .timeout(seconds: timeout)
        case .connect:
            // Only ECONNREFUSED is a refusal; a connect failure with no errno is libcurl's own
            // (no socket), said in its words.
            if let how = error.connection, how != .refused { return .unreachable(endpoint: endpoint, how: how) }
            return .refused(endpoint: endpoint, detail: error.message)
        case .nameResolution: return .endpointUnresolvable(endpoint: endpoint)
        case .certificate, .tls: return .tls(detail: error.message)
        case .tooLarge: return .malformed(detail: error.message)
        case .outOfMemory: return .malformed(detail: "the service sent a response header larger than libcurl accepts")
        case .badURL: return .misconfigured("the HTTPDNS endpoint is not a usable URL: \(endpoint)")
        case .transfer, .other: return .transport(detail: error.message)
        }
    }

    /// `.notAnIP` with the junk cleaned where it enters: escaped, each cut after 60 characters,
    /// at most 32 kept (they reach sentences and `resolve --format json`'s `rejected`).
    static func notAnIP(cleaning rejected: [String]) -> ResolutionError {
        .notAnIP(junk: rejected.prefix(32).map { TerminalText.escaped($0, cutAt: 60) })
    }

    /// Maps an HTTP error status and the service's JSON `code` to a case.
    static func fromStatus(_ status: Int, code: String?, account: String?) -> ResolutionError {
        switch code {
        case "InvalidSignature", "SignatureMismatch": return .signatureRejected
        case "SignatureExpired": return .signatureExpired
        // The v2 API says AccountNotExists (AliCloudV2Errors); both spellings are taken here.
        case "InvalidAccount", "AccountNotExist", "AccountNotExists", "InvalidAccountId":
            return .invalidAccount(account ?? "")
        default: return .http(status: status, code: code)
        }
    }
}

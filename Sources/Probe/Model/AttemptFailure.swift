// Why an attempt, one of its hops or a ranked address got no good answer, as a value: the engine
// decides by its case, and `sentence` writes it only where text is shown (views, exports, the table).
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why an attempt (`Attempt.error`), a hop (`Hop.error`) or the TCP connect of a ranked address
/// (`RankedIP.error`) failed, or why the attempt was not made.
///
/// `Codable` as the sentence (`SentencedFailure`), the form the probe exports have always written
/// under `error` and `_error`; read back, a sentence becomes `.reported`. `kind` names the case in words that stay
/// the same across releases, for scripts and metrics.
public enum AttemptFailure: SentencedFailure {
    // MARK: The exchange, as libcurl and the TLS hook saw it

    /// libcurl could not resolve the name (CURLE_COULDNT_RESOLVE_HOST); `detail` is its words.
    case nameNotResolved(detail: String)
    /// The TCP connect was refused (CURLE_COULDNT_CONNECT with ECONNREFUSED): nothing listens there.
    case connectionRefused(target: String)
    /// The TCP connect failed otherwise (CURLE_COULDNT_CONNECT): `errno` as the system gave it,
    /// 0 when libcurl gave none and `detail`, its words, is all there is.
    case connectFailed(target: String, errno: Int32, detail: String)
    /// No TCP connection within the timeout (CURLE_OPERATION_TIMEDOUT before connecting).
    case connectTimedOut(target: String, after: Duration)
    /// Connected, but the TLS handshake did not finish within the timeout.
    case handshakeTimedOut(target: String, after: Duration)
    /// Connected and sent, but the answer did not finish within the timeout.
    case answerTimedOut(target: String, after: Duration)
    /// The TLS handshake failed for a reason other than the certificate (CURLE_SSL_CONNECT_ERROR, ...).
    case handshakeFailed(target: String, detail: String)
    /// The connection broke before the TLS handshake finished (CURLE_RECV_ERROR, a reset, ...).
    case brokeDuringHandshake(target: String, detail: String)
    /// The connection broke after it was made (CURLE_GOT_NOTHING, CURLE_RECV_ERROR, a reset, ...).
    case connectionBroke(target: String, detail: String)
    /// The server sent a header line past libcurl's 100 KB (CURLE_OUT_OF_MEMORY once connected).
    case responseHeaderTooLarge(target: String)
    /// Any other libcurl failure; `detail` is its words.
    case requestFailed(target: String, detail: String)
    /// The server answered 4xx or 5xx; `reason` is its reason phrase, cleaned where it entered.
    case httpStatus(Int, reason: String?)

    // MARK: The certificate, as the TLS hook saw it during the handshake

    /// The certificate is not for the name checked. `presented` holds the names it is for (nil
    /// when no certificate was kept).
    case certificateNameMismatch(presented: [String]?, checked: String?, sni: String?)
    /// A certificate of the chain expired (on `date`, when it is known).
    case certificateExpired(ChainCertificate, on: Date?)
    /// A certificate of the chain is not valid yet (until `date`, when it is known).
    case certificateNotYetValid(ChainCertificate, until: Date?)
    /// The server's certificate signs itself.
    case certificateSelfSigned(presented: [String]?)
    /// The chain ends at an issuer no trusted CA vouches for (nil: not known).
    case certificateUntrusted(presented: [String]?, issuer: String?)
    /// OpenSSL refused the chain for another reason, in its words.
    case certificateCheckFailed(verifyMessage: String, ChainCertificate)
    /// libcurl's own name check refused the certificate (CURLE_PEER_FAILED_VERIFICATION, its
    /// words in `detail`), where the hook saw nothing wrong.
    case certificateNameRefused(detail: String, sni: String?)
    /// libcurl refused the certificate for another reason, in its words.
    case certificateRefused(detail: String)

    // MARK: The attempt not made

    /// ipdirect itself ran out of `ResourceShortage`: `target` was not tried, and is not to blame.
    case resourceShortage(ResourceShortage, target: String)
    /// The scenario does not apply to the URL's scheme (direct-http to https, the others to http).
    case notApplicable(Scenario)
    /// system-dns had no address: why system DNS (or the DNS server) gave none, when it said.
    case noSystemAddress(host: String, ResolutionFailure?)
    /// A direct scenario had no address: neither HTTPDNS nor system DNS gave one.
    case noAddress(host: String, httpdns: ResolutionFailure?, system: ResolutionFailure?)
    /// The address could not be put in the URL as its host (the name there would have gone
    /// through system DNS, so nothing was sent).
    case notRewritable(ProbeURLError)

    // MARK: Redirects, by the chain's policy

    /// The chain went past `--max-redirects`.
    case redirectLimit(Int)
    /// A redirect came back to a request already made in the chain (`url` as traces show it).
    case redirectLoop(url: String)
    /// The `Location` does not make a URL the probe can request.
    case redirectUnusable(ProbeURLError)
    /// A redirect from https to plain http, refused without `--allow-downgrade`.
    case redirectDowngrade(url: String)
    /// A redirect whose host connects to a link-local or metadata address, refused; `host` is
    /// the name that led there, nil when `Location` named the address itself.
    case redirectToLinkLocal(url: String, address: IPAddress, host: String?)
    /// A redirect whose new host, or an address it would connect to, a `DestinationPolicy`
    /// refuses (the agent's `--probe-allow`), with the policy's reason.
    case redirectOffLimits(url: String, reason: String)
    /// The redirect's new host got no address from the resolver the attempt uses (`system` for
    /// system-dns, `httpdns` for the others), with why when it said.
    case redirectUnresolved(host: String, resolver: IPSource, ResolutionFailure?)

    // MARK: The ranking's own TCP connect

    /// The ranking's TCP connect failed with `errno`.
    case rankConnectFailed(target: String, errno: Int32)
    /// The ranking's TCP connect got no answer within its timeout.
    case rankConnectTimedOut(target: String, after: Duration)
    /// The address could not be made a socket address.
    case unusableAddress(IPAddress)
    /// The address was never measured (the ranking stopped before it).
    case notMeasured

    /// Known only by its sentence: read back from a JSON document, set by a front end or a test,
    /// or a sentence that redaction had to change.
    case reported(String)

    /// Which certificate of the chain a failure is about.
    public enum ChainCertificate: Sendable, Hashable {
        /// The server's own certificate, for these names (nil when none was kept).
        case leaf(names: [String]?)
        /// A certificate further up the chain, by its subject.
        case inChain(subject: String)
    }

    /// A stable name for the case, in kebab case (`connection-refused`, `redirect-loop`, ...).
    public var kind: String {
        switch self {
        case .nameNotResolved: "name-not-resolved"
        case .connectionRefused: "connection-refused"
        case .connectFailed: "connect-failed"
        case .connectTimedOut: "connect-timeout"
        case .handshakeTimedOut: "tls-timeout"
        case .answerTimedOut: "answer-timeout"
        case .handshakeFailed: "tls-handshake-failed"
        case .brokeDuringHandshake: "tls-connection-broke"
        case .connectionBroke: "connection-broke"
        case .responseHeaderTooLarge: "response-too-large"
        case .requestFailed: "request-failed"
        case .httpStatus: "http-status"
        case .certificateNameMismatch: "certificate-name-mismatch"
        case .certificateExpired: "certificate-expired"
        case .certificateNotYetValid: "certificate-not-yet-valid"
        case .certificateSelfSigned: "certificate-self-signed"
        case .certificateUntrusted: "certificate-untrusted"
        case .certificateCheckFailed: "certificate-check-failed"
        case .certificateNameRefused: "certificate-name-refused"
        case .certificateRefused: "certificate-refused"
        case .resourceShortage: "resource-shortage"
        case .notApplicable: "not-applicable"
        case .noSystemAddress: "system-dns-failed"
        case .noAddress: "no-address"
        case .notRewritable: "url-not-rewritable"
        case .redirectLimit: "redirect-limit"
        case .redirectLoop: "redirect-loop"
        case .redirectUnusable: "redirect-unusable"
        case .redirectDowngrade: "redirect-downgrade"
        case .redirectToLinkLocal: "redirect-link-local"
        case .redirectOffLimits: "redirect-off-limits"
        case .redirectUnresolved: "redirect-no-address"
        case .rankConnectFailed: "rank-connect-failed"
        case .rankConnectTimedOut: "rank-connect-timeout"
        case .unusableAddress: "unusable-address"
        case .notMeasured: "not-measured"
        case .reported: "reported"
        }
    }

    /// The one sentence a person reads for this failure, in the command line's words: the
    /// exports (JSON, JSON Lines, HAR) have always written this form and keep it byte for byte,
    /// so a setting it points at is named by its flag there too.
    public var sentence: String { sentence(.commandLine) }

    /// The sentence with the settings it points at named in `voice` (the console's views pass
    /// `.console`).
    public func sentence(_ voice: SettingVoice) -> String {
        switch self {
        case .nameNotResolved(let detail): "could not resolve the name: \(detail)"
        case .connectionRefused(let target): "could not connect to \(target): \(Self.words(ECONNREFUSED))"
        case .connectFailed(let target, let code, let detail):
            "could not connect to \(target): \(code != 0 ? Self.words(code) : detail)"
        case .connectTimedOut(let target, let after): "no connection to \(target) within \(Self.seconds(after)) s"
        case .handshakeTimedOut(let target, let after):
            "the TLS handshake with \(target) did not finish within \(Self.seconds(after)) s"
        case .answerTimedOut(let target, let after):
            "no complete answer from \(target) within \(Self.seconds(after)) s (connected, request sent)"
        case .handshakeFailed(let target, let detail): "the TLS handshake with \(target) failed: \(detail)"
        case .brokeDuringHandshake(let target, let detail):
            "the connection to \(target) broke during the TLS handshake: \(detail)"
        case .connectionBroke(let target, let detail): "the connection to \(target) broke: \(detail)"
        case .responseHeaderTooLarge(let target):
            "the server at \(target) sent a response header larger than libcurl accepts (100 KB a line): "
                + "the answer was not read"
        case .requestFailed(let target, let detail): "the request to \(target) failed: \(detail)"
        case .httpStatus(let status, let reason): "the server answered \(status)" + (reason.map { " \($0)" } ?? "")
        case .certificateNameMismatch(let presented, let checked, let sni):
            "certificate is for \(Self.names(presented)), not \(checked ?? "?"); \(Self.sniClause(sni))"
        case .certificateExpired(let certificate, let date):
            "\(Self.phrase(certificate)) expired" + (date.map { " on \(Self.day($0))" } ?? "")
        case .certificateNotYetValid(let certificate, let date):
            "\(Self.phrase(certificate)) is not valid" + (date.map { " until \(Self.day($0))" } ?? "")
        case .certificateSelfSigned(let presented):
            "certificate for \(Self.names(presented)) is self-signed, not issued by a trusted CA"
        case .certificateUntrusted(let presented, let issuer):
            "certificate for \(Self.names(presented)) is issued by \(issuer ?? "an unknown issuer"), "
                + "which is not a trusted CA (\(Setting.probeCAFile.named(voice)) adds one)"
        case .certificateCheckFailed(let message, let certificate):
            "certificate check failed: \(message) (\(Self.phrase(certificate)))"
        case .certificateNameRefused(let detail, let sni): "\(detail); \(Self.sniClause(sni))"
        case .certificateRefused(let detail): "the certificate was refused: \(detail)"
        case .resourceShortage(let shortage, let target):
            "not attempted: \(shortage.sentence(voice)); \(target) was not tried"
        case .notApplicable(let scenario):
            scenario == .directHTTP
                ? "direct-http applies to http URLs; this one is https"
                : "\(scenario.rawValue) applies to https URLs; this one is http"
        case .noSystemAddress(let host, let failure):
            failure?.sentence(from: "system DNS") ?? "system DNS: no address for \(host)"
        case .noAddress(let host, let httpdns, let system):
            "neither HTTPDNS (\(httpdns?.sentence ?? "no address")) nor system DNS "
                + "(\(system?.sentence ?? "no address")) gave an address for \(host)"
        case .notRewritable(let error): "\(error.reason); the attempt was not made"
        case .redirectLimit(let limit): "stopped after \(limit) redirects: the chain is longer than the limit"
        case .redirectLoop(let url): "redirect loop: \(url) was already requested in this chain"
        case .redirectUnusable(let error): "the redirect goes nowhere usable: \(error.reason)"
        case .redirectDowngrade(let url):
            "refused to follow a redirect from https to plain http (\(url)); "
                + "\(Setting.allowDowngrade.named(voice)) follows it"
        case .redirectToLinkLocal(let url, let address, let host):
            "refused to follow a redirect to \(url): it connects to "
                + "\(host.map { "\(address) (\($0))" } ?? address.text), a link-local address where cloud "
                + "metadata services answer; this prober does not go there"
        case .redirectOffLimits(let url, let reason): "refused to follow a redirect to \(url): \(reason)"
        case .redirectUnresolved(let host, let resolver, let failure):
            "\(resolver == .system ? "system DNS" : "HTTPDNS") gave no address for \(host): "
                + (failure?.sentence ?? "empty answer")
        case .rankConnectFailed(let target, let code):
            switch code {
            case ECONNREFUSED: "connection refused by \(target): nothing listens on that port there"
            case ENETUNREACH: "no route to \(target): this machine has no network path to that address family"
            case EHOSTUNREACH: "host \(target) is unreachable"
            case ETIMEDOUT: "connecting to \(target) timed out"
            case EADDRNOTAVAIL: "cannot connect to \(target) from this machine (address not available)"
            default: "cannot connect to \(target): \(Self.words(code))"
            }
        case .rankConnectTimedOut(let target, let after):
            "no answer from \(target) within \(Self.seconds(after)) s: a firewall may drop the packets, "
                + "or the address is not reachable from here"
        case .unusableAddress(let address): "\(address) is not an IP address"
        case .notMeasured: "not measured"
        case .reported(let sentence): sentence
        }
    }

    /// The failure with `scrub` applied to its sentence (secret values hidden): itself when
    /// nothing changed, else `.reported` with the scrubbed sentence, so no secret stays inside.
    ///
    /// - Parameter scrub: hides secret values in a text.
    /// - Returns: the failure as an export may carry it.
    public func scrubbed(_ scrub: (String) -> String) -> AttemptFailure {
        let text = sentence
        let hidden = scrub(text)
        return hidden == text ? self : .reported(hidden)
    }

    /// The system's words for an errno ("Connection refused").
    private static func words(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// A timeout in seconds as the sentences write it: "2", "0.5".
    private static func seconds(_ duration: Duration) -> String { String(cFormat: "%g", duration.inSeconds) }

    /// The names a certificate is for, as the sentences list them ("?" when none was kept).
    private static func names(_ names: [String]?) -> String { names?.joined(separator: ", ") ?? "?" }

    /// "certificate for a.lab.test", "a certificate in the chain (CN=Intermediate)".
    private static func phrase(_ certificate: ChainCertificate) -> String {
        switch certificate {
        case .leaf(let presented): "certificate for \(names(presented))"
        case .inChain(let subject): "a certificate in the chain (\(subject))"
        }
    }

    private static func sniClause(_ sni: String?) -> String { sni.map { "SNI \($0) was sent" } ?? "no SNI was sent" }

    /// A date as a calendar day ("2026-11-25"): the export's timestamp up to its time, which is
    /// what ISO8601DateFormatter's full date wrote (the date rounded to the millisecond first).
    private static func day(_ date: Date) -> String {
        String(ProbeJSON.timestamp(date).prefix { $0 != "T" })
    }
}

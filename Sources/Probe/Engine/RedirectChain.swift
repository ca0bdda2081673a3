// The redirect rules of one attempt as a value the engine asks at each hop (as async-http-client
// keeps its RedirectState): the limit, loops, method and body, credentials, downgrades, metadata.
import CurlTransport
import NameResolution

/// One attempt's chain of redirects: what the next request is, or why the chain stops.
///
/// Pure: it never touches the network. The engine makes each hop, hands the response's status and
/// `Location` to `next(status:location:)`, resolves a new host itself, and asks
/// `refusal(of:by:)` about that host and `judge(connectingTo:for:by:)` about the addresses it
/// would connect to.
struct RedirectChain: Sendable {
    /// The request a hop makes.
    struct Request: Sendable, Equatable {
        var url: ProbeURL
        var method: RequestMethod
        var body: [UInt8]?
        /// The user's extra headers, less those a redirect dropped.
        var headers: [HeaderField]
    }

    /// What follows a hop's response.
    enum Step: Sendable, Equatable {
        /// Not a redirect to follow: the attempt ends with the hop as it is.
        case done
        /// Make `Request` next; `notes` go at the top of that hop's trace (what was dropped).
        case follow(Request, notes: [String])
        /// The chain stops at the hop that answered: its outcome becomes the one given (nil keeps
        /// its own) and its error the failure.
        case stop(Outcome?, AttemptFailure)
    }

    /// Whether a hop may connect to the addresses its host resolved to.
    enum AddressJudgement: Sendable, Equatable {
        case connect
        /// Connect, and say this in the hop's trace and the verdict.
        case connectNoting(String)
        /// Do not connect: the hop that redirected ends `redirect-refused` with this failure.
        case refuse(AttemptFailure)
    }

    /// The request the next hop makes (the first: the attempt's own).
    private(set) var request: Request
    /// The URL the user gave, whose origin the credentials and the body were given for.
    private let origin: ProbeURL
    private let options: ProbeOptions
    /// Every request made in this chain, as method and URL: one made again is a loop.
    private var requested: Set<String>
    private var followed = 0

    /// The chain of an attempt that starts at `start` with the method, body and headers of `options`.
    init(start: ProbeURL, options: ProbeOptions) {
        request = Request(url: start, method: options.method, body: options.body, headers: options.headers)
        origin = start
        self.options = options
        requested = [Self.key(options.method, start)]
    }

    /// What follows a hop that answered `status` with `location`.
    ///
    /// - Parameters:
    ///   - status: the response's status; nil when the hop reached no server.
    ///   - location: the `Location` header as the server sent it (unredacted, uncleaned).
    /// - Returns: `.follow` with the next request (and this chain moved on to it), `.stop` with why
    ///   not, or `.done` when the response is no redirect.
    mutating func next(status: Int?, location: String?) -> Step {
        guard let status, [301, 302, 303, 307, 308].contains(status), let location else { return .done }
        if followed == options.maxRedirects {
            return .stop(.tooManyRedirects, .redirectLimit(options.maxRedirects))
        }
        let next: ProbeURL
        do {
            next = try request.url.resolving(location)
        } catch {
            return .stop(nil, .redirectUnusable(error))
        }
        if request.url.isHTTPS && !next.isHTTPS && !options.allowDowngrade {
            return .stop(.redirectRefused, .redirectDowngrade(url: options.shown(next)))
        }
        var following = request
        following.url = next
        // 307 and 308 keep method and body; the others become GET (HEAD stays HEAD).
        if [301, 302, 303].contains(status) && following.method != .head {
            following.method = .get
            following.body = nil
        }
        if !requested.insert(Self.key(following.method, next)).inserted {
            return .stop(.tooManyRedirects, .redirectLoop(url: options.shown(next)))
        }
        let notes = leavingOrigin(&following)
        request = following
        followed += 1
        return .follow(following, notes: notes)
    }

    /// Why the hop to `next` may not go to its host under `destinations`; nil when it may (or
    /// there is no policy). Asked before the host is resolved.
    func refusal(of next: ProbeURL, by destinations: (any DestinationPolicy)?) -> AttemptFailure? {
        guard let reason = destinations?.refusal(host: next.host) else { return nil }
        return .redirectOffLimits(url: options.shown(next), reason: reason)
    }

    /// Whether the hop to `next` may connect to `addresses` (those it would connect to, whatever
    /// `Location` named), under `ProbeOptions.linkLocal`, then `destinations`.
    func judge(
        connectingTo addresses: [IPAddress], for next: ProbeURL, by destinations: (any DestinationPolicy)? = nil
    ) -> AddressJudgement {
        let shownNext = options.shown(next)
        guard let address = addresses.first(where: \.isLinkLocalOrMetadata) else {
            // Every address is asked: system-dns pins them all, and curl may connect to any.
            for address in addresses {
                if let reason = destinations?.refusal(address: address) {
                    return .refuse(.redirectOffLimits(url: shownNext, reason: reason))
                }
            }
            return .connect
        }
        // "169.254.169.254", or "169.254.169.254 (metadata.example)" when a name led there.
        let place = next.hostIsIPLiteral ? address.text : "\(address) (\(next.host))"
        switch options.linkLocal {
        case .refuse:
            return .refuse(
                .redirectToLinkLocal(url: shownNext, address: address, host: next.hostIsIPLiteral ? nil : next.host))
        case .note:
            return .connectNoting(
                "a redirect led to \(shownNext), which connects to \(place), a link-local address where "
                    + "cloud metadata services answer (followed; the agent refuses it)")
        }
    }

    /// Credentials go to the origin they were given for (as curl does): scheme, host or port
    /// changing drops them, unless --location-trusted; a body is not carried there either.
    ///
    /// - Returns: notes for the next hop's trace saying what was dropped.
    private func leavingOrigin(_ following: inout Request) -> [String] {
        let next = following.url
        guard next.scheme != origin.scheme || next.host != origin.host || next.port != origin.port else { return [] }
        var notes: [String] = []
        let secret = { (field: HeaderField) in Redaction.isSecretHeader(field.name, options.secretNames) }
        let dropped = options.locationTrusted ? [] : following.headers.filter(secret)
        if !dropped.isEmpty {
            following.headers.removeAll(where: secret)
            notes.append(
                "ipdirect: dropped \(dropped.map(\.name).joined(separator: ", ")): the redirect leaves "
                    + "\(origin.scheme)://\(origin.hostHeader) for \(next.scheme)://\(next.hostHeader) "
                    // A trace note: the exports write it, in the command line's words as always.
                    + "(\(Setting.locationTrusted.named(.commandLine)) keeps them)")
        }
        if following.body != nil {
            following.body = nil
            notes.append("ipdirect: the request body is not carried to another origin (\(next.hostHeader))")
        }
        return notes
    }

    private static func key(_ method: RequestMethod, _ url: ProbeURL) -> String { method.rawValue + " " + url.text }
}

extension ProbeOptions {
    /// A URL as traces show it: redacted unless `--no-redact`.
    func shown(_ url: ProbeURL) -> String {
        redact ? Redaction.url(url.text, secretNames) : url.text
    }
}

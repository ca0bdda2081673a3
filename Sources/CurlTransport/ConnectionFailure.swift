// How a connection attempt failed, read from the errno the kernel gave: the one classification
// the doctor, `probe`, `resolve` and the console share, so "refused" is only ever a refusal.

import FoundationEssentials
import FoundationGaps

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a connection (TCP, or a UDP exchange) did not happen, told apart by who said no: the far
/// side (a refusal, a reset), nobody (silence), or this machine before anything left it (a local
/// firewall, a missing route).
public enum ConnectionFailure: Sendable, Equatable, Hashable {
    /// ECONNREFUSED: the far side answered no (a TCP RST, an ICMP port unreachable): nothing
    /// listens on that port there, or a firewall there rejects the connection.
    case refused
    /// ECONNRESET (EPIPE on a send after it): the far side, or something on the path, broke an
    /// open connection.
    case reset
    /// Nothing came back within the wait: the packets are dropped on the way, or the address is silent.
    case timedOut(seconds: Double)
    /// EPERM, EACCES at once on connect or send: a firewall on this machine stopped the packet
    /// before it left (an nftables or iptables rule, a security policy).
    case localFilter(errno: Int32)
    /// ENETUNREACH: this machine's routing table has no route to that network.
    case noRoute
    /// EHOSTUNREACH: no way to the host (no neighbour answered, or a router on the way said so).
    case hostUnreachable
    /// Any other errno, in the system's words.
    case other(errno: Int32)

    /// The failure an errno from connect(2), send(2) or recv(2) names.
    public init(errno code: Int32) {
        switch code {
        case ECONNREFUSED: self = .refused
        case ECONNRESET: self = .reset
        case EPERM, EACCES: self = .localFilter(errno: code)
        case ENETUNREACH: self = .noRoute
        case EHOSTUNREACH: self = .hostUnreachable
        case ETIMEDOUT: self = .timedOut(seconds: 0)
        default: self = .other(errno: code)
        }
    }

    /// Whether the failure came from this machine at once (a local filter or a missing route):
    /// nothing left, so nothing was waited for.
    public var isLocal: Bool {
        switch self {
        case .localFilter, .noRoute: true
        default: false
        }
    }

    /// The end of a sentence that starts with the target ("127.0.0.2:443 ..."), saying what was seen.
    public var clause: String {
        switch self {
        case .refused: "refused the connection"
        case .reset: "reset the connection"
        case .timedOut(let seconds):
            seconds > 0
                ? "sent nothing back within \(Self.format(seconds)) s (the packets are dropped on the way, or the address is silent)"
                : "sent nothing back before the system gave up (ETIMEDOUT)"
        case .localFilter, .noRoute: "was never reached: " + reason
        case .hostUnreachable:
            "is unreachable (EHOSTUNREACH: \(Self.words(EHOSTUNREACH)); no route to the host here or on the way)"
        case .other(let code): "could not be reached (\(Self.words(code)))"
        }
    }

    /// Why, without a subject: for a local failure what on this machine stopped the packet, for
    /// the others the clause itself.
    public var reason: String {
        switch self {
        case .localFilter(let code):
            "a firewall on this machine stopped the packet before it left (\(Self.name(code)): \(Self.words(code)))"
        case .noRoute: "this machine has no route to that network (ENETUNREACH: \(Self.words(ENETUNREACH)))"
        default: clause
        }
    }

    /// The errno's symbolic name where the sentence names one.
    static func name(_ code: Int32) -> String {
        switch code {
        case EPERM: "EPERM"
        case EACCES: "EACCES"
        default: "errno \(code)"
        }
    }

    static func words(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(cFormat: "%.1f", seconds)
    }
}

extension CurlError {
    /// How the connection failed, when this failure is one of connecting or of a broken
    /// connection with an errno; nil for a time-out (its errno may be left over from an earlier
    /// call), a certificate, or an HTTP-level failure.
    public var connection: ConnectionFailure? {
        switch kind {
        case .connect where osErrno != 0: ConnectionFailure(errno: Int32(osErrno))
        case .tls where Self.brokenByFarSide(osErrno), .transfer where Self.brokenByFarSide(osErrno): .reset
        default: nil
        }
    }

    /// ECONNRESET, or EPIPE: a reset that lands before libcurl's first send leaves the errno of
    /// the send after it (curl 7.88, a TLS handshake: "Send failure: Connection reset by peer"
    /// under CURLE_SSL_CONNECT_ERROR with errno EPIPE; seen on a slow machine, `make tsan`).
    private static func brokenByFarSide(_ osErrno: Int) -> Bool {
        osErrno == Int(ECONNRESET) || osErrno == Int(EPIPE)
    }
}

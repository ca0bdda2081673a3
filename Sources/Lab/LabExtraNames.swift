// Names a lab serves beyond its bundled zone, each with an origin of its own: the certificate,
// the addresses and the behaviour a caller (the audit's traps) arranges to catch one mistake.
import Crypto
import FoundationEssentials
import FoundationGaps

/// A name the lab answers (HTTPDNS in every format, `/ip`, its DNS server) and serves at an origin
/// of its own, on a free port, whose handshakes and requests the ledger records under the name.
public struct LabExtraName: Sendable {
    /// What HTTPDNS and the DNS server answer for the name (its `origin` is ignored).
    public var record: LabZoneRecord
    /// The certificate the origin presents.
    public var certificate: LabExtraCertificate
    /// What the origin does beyond answering.
    public var behaviour: LabExtraBehaviour
    /// Where the origin listens, on one port; empty: the lab's listen address.
    public var addresses: [String]
    /// Whether HTTPDNS fails for the name in every format until its origin answers a request, as a
    /// service failing for one name and recovering.
    public var failsHTTPDNS: Bool
    /// With `failsHTTPDNS`: how long each failing answer is held before it comes (HTTP 504), so a
    /// client that waits less times out; 0 answers HTTP 500 at once.
    public var failureDelay: Double

    public init(
        record: LabZoneRecord, certificate: LabExtraCertificate = .trusted, behaviour: LabExtraBehaviour = .answer,
        addresses: [String] = [], failsHTTPDNS: Bool = false, failureDelay: Double = 0
    ) {
        self.failureDelay = failureDelay
        self.record = record
        self.certificate = certificate
        self.behaviour = behaviour
        self.addresses = addresses
        self.failsHTTPDNS = failsHTTPDNS
    }

    /// The body `LabExtraBehaviour.servesBody` hands out at `/body`: `size` bytes of numbered
    /// lines ending in CR LF (a client that strips line ends, as `curl -d @file` does, loses some).
    public static func body(size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + 64)
        var line = 0
        while bytes.count < size {
            bytes += Array("ipdirect audit body line \(line)\r\n".utf8)
            line += 1
        }
        return Array(bytes.prefix(size))
    }

    /// Lowercase hex SHA-256, as `LabOriginRequest.bodySHA256` holds it.
    public static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(cFormat: "%02x", $0) }.joined()
    }
}

/// The certificate an extra name's origin presents.
public enum LabExtraCertificate: Sendable, Equatable {
    /// From the lab CA, for the name.
    case trusted
    /// From the lab CA, for another name only.
    case otherName(String)
    /// From a CA nobody trusts, for the name.
    case untrusted
    /// From the lab CA, for the name, expired a month ago.
    case expired
    /// From the lab CA: for the name when the client's SNI asks for it, else another site's
    /// certificate (`otherName`), as a shared-IP origin (CDN) answers a client without SNI.
    case bySNI(otherName: String)
}

/// What an extra name's origin does beyond naming itself.
public enum LabExtraBehaviour: Sendable, Equatable {
    /// Answers every request with its line.
    case answer
    /// Answers 302 to another extra name's URL, the same path.
    case redirect(to: String)
    /// Hands out `LabExtraName.body(size:)` at `GET /body`; every request's body digest is recorded.
    case servesBody(size: Int)
    /// Sets a cookie (`name=value; Path=/`) on its first answer; every request's Cookie is recorded.
    case setsCookie(String)
}

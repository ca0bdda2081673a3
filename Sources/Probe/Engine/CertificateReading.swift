// Turns the DER chain the shim's TLS hook kept into summaries a person reads: subject,
// names, issuer, validity and SHA-256 fingerprint, parsed with swift-certificates.
import Crypto
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution
import SwiftASN1
import TerminalText
import X509

/// Reads the certificates a handshake presented, for the probe and the doctor alike.
public enum CertificateReading {
    /// Summaries already made, by DER: a batch meets the same few certificates hundreds of
    /// times, and parsing one again is not the work. Bounded; cleared when full.
    private static let known = Locked([[UInt8]: CertificateSummary]())
    private static let knownLimit = 512

    /// Summarises one DER certificate; a certificate that does not parse still gets its
    /// fingerprint, so the trace shows that something was presented.
    public static func summary(_ der: [UInt8]) -> CertificateSummary {
        if let summary = known.withLock({ $0[der] }) { return summary }
        let summary = parse(der)
        known.withLock { table in
            if table.count >= knownLimit { table.removeAll(keepingCapacity: true) }
            table[der] = summary
        }
        return summary
    }

    private static func parse(_ der: [UInt8]) -> CertificateSummary {
        let fingerprint = hex(Array(SHA256.hash(data: der)), separator: ":")
        guard let certificate = try? Certificate(derEncoded: der) else {
            return CertificateSummary(
                subject: "(unparsable certificate)", subjectAlternativeNames: [], issuer: "",
                notBefore: Date(timeIntervalSince1970: 0), notAfter: Date(timeIntervalSince1970: 0),
                sha256: fingerprint)
        }
        var names: [String] = []
        if let san = try? certificate.extensions.subjectAlternativeNames {
            for name in san {
                switch name {
                // The server's words, cleaned where they enter like its headers.
                case .dnsName(let dns): names.append(TerminalText.escaped(dns))
                case .ipAddress(let octets): names.append(ipText(Array(octets.bytes)))
                default: continue
                }
            }
        }
        return CertificateSummary(
            subject: TerminalText.escaped(certificate.subject.description), subjectAlternativeNames: names,
            issuer: TerminalText.escaped(certificate.issuer.description), notBefore: certificate.notValidBefore,
            notAfter: certificate.notValidAfter, sha256: fingerprint)
    }

    /// The TLS side of a trace: the chain summarised, the verify result and OpenSSL's words for it.
    static func report(_ tls: TLSObservation) -> CertificateReport {
        CertificateReport(
            chain: tls.chain.map(summary), verifyResult: tls.verifyError, verifyMessage: tls.verifyMessage)
    }

    /// The names a certificate is for: its DNS names, else its common name.
    public static func names(of summary: CertificateSummary) -> [String] {
        if !summary.subjectAlternativeNames.isEmpty { return summary.subjectAlternativeNames }
        let parts = summary.subject.split(separator: ",").map { $0.trimmedSpaces }
        return parts.filter { $0.hasPrefix("CN=") }.map { String($0.dropFirst(3)) }
    }

    /// Lowercase hex, two digits a byte (String(format:) is slow on this path).
    static func hex(_ bytes: [UInt8], separator: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3)
        for (index, byte) in bytes.enumerated() {
            if index > 0 { out.append(contentsOf: separator.utf8) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func ipText(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return hex(bytes, separator: "") }
        var groups: [String] = []
        for i in stride(from: 0, to: 16, by: 2) {
            groups.append(String(UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]), radix: 16))
        }
        return groups.joined(separator: ":")
    }
}

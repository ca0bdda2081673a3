// Reads a finished exchange into an outcome and the sentence a person reads ("certificate is
// for default.lab.test, not sni-a.lab.test; no SNI was sent"), never a bare curl code.
import CCurl
import Foundation

enum OutcomeReading {
    /// The outcome of one exchange and, unless it is `ok`, why.
    ///
    /// - Parameters:
    ///   - record: what the transport saw.
    ///   - target: where the exchange went, for the sentence ("127.0.0.1:443").
    ///   - checkedName: the name the certificate had to match, nil for http.
    ///   - sni: the SNI sent, nil when none.
    ///   - timeout: the per-request timeout, seconds.
    ///   - usesTLS: whether the exchange was https.
    static func read(
        _ record: TransferRecord, target: String, checkedName: String?, sni: String?, timeout: Double,
        usesTLS: Bool
    ) -> (Outcome, String?) {
        if let tls = record.tls, tls.verifyError != 0 {
            return certificateFailure(tls, checkedName: checkedName, sni: sni)
        }
        if !record.succeeded {
            return transportFailure(record, target: target, sni: sni, timeout: timeout, usesTLS: usesTLS)
        }
        if record.status >= 400 {
            return (.httpStatus, "the server answered \(statusText(record))")
        }
        return (.ok, nil)
    }

    /// "421 Misdirected Request", from the status line as received.
    static func statusText(_ record: TransferRecord) -> String {
        guard let line = record.statusLine else { return String(record.status) }
        let parts = line.split(separator: " ", maxSplits: 2)
        return parts.count == 3 ? "\(parts[1]) \(parts[2])" : String(record.status)
    }

    private static func certificateFailure(
        _ tls: TLSObservation, checkedName: String?, sni: String?
    ) -> (
        Outcome, String?
    ) {
        let chain = tls.chain.map(CertificateReading.summary)
        let depth = min(max(tls.errorDepth, 0), max(chain.count - 1, 0))
        let culprit = chain.isEmpty ? nil : chain[depth]
        let leafNames = chain.first.map { CertificateReading.names(of: $0).joined(separator: ", ") } ?? "?"
        let sniText = sni.map { "SNI \($0) was sent" } ?? "no SNI was sent"
        let subject =
            depth == 0 ? "certificate for \(leafNames)" : "a certificate in the chain (\(culprit?.subject ?? "?"))"
        switch tls.verifyError {
        case 62:  // X509_V_ERR_HOSTNAME_MISMATCH
            return (.certNameMismatch, "certificate is for \(leafNames), not \(checkedName ?? "?"); \(sniText)")
        case 10:  // X509_V_ERR_CERT_HAS_EXPIRED
            let when = culprit.map { " on \(day($0.notAfter))" } ?? ""
            return (.certExpired, "\(subject) expired\(when)")
        case 9:  // X509_V_ERR_CERT_NOT_YET_VALID
            let when = culprit.map { " until \(day($0.notBefore))" } ?? ""
            return (.certExpired, "\(subject) is not valid\(when)")
        case 18:  // X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
            return (.certSelfSigned, "certificate for \(leafNames) is self-signed, not issued by a trusted CA")
        case 2, 19, 20, 21, 27:  // unknown issuer, self-signed root in chain, untrusted
            let issuer = chain.last?.issuer ?? "an unknown issuer"
            return (
                .certUntrusted,
                "certificate for \(leafNames) is issued by \(issuer), which is not a trusted CA (--cacert adds one)"
            )
        default:
            return (
                .tlsFailed,
                "certificate check failed: \(CertificateReading.verifyMessage(tls.verifyError)) (\(subject))"
            )
        }
    }

    private static func transportFailure(
        _ record: TransferRecord, target: String, sni: String?, timeout: Double, usesTLS: Bool
    ) -> (Outcome, String?) {
        let code = CURLcode(UInt32(record.curlCode))
        let detail = record.curlMessage
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return (.dnsFailed, "could not resolve the name: \(detail)")
        case CURLE_COULDNT_CONNECT:
            let reason = record.osErrno != 0 ? String(cString: strerror(Int32(record.osErrno))) : detail
            return (.connectFailed, "could not connect to \(target): \(reason)")
        case CURLE_OPERATION_TIMEDOUT:
            let seconds = String(format: "%g", timeout)
            if record.connectUs == 0 {
                return (.timeout, "no connection to \(target) within \(seconds) s")
            }
            if usesTLS && record.appConnectUs == 0 {
                return (.timeout, "the TLS handshake with \(target) did not finish within \(seconds) s")
            }
            return (.timeout, "no complete answer from \(target) within \(seconds) s (connected, request sent)")
        case CURLE_PEER_FAILED_VERIFICATION:
            if detail.contains("subject name") || detail.contains("does not match") {
                return (.certNameMismatch, "\(detail); \(sni.map { "SNI \($0) was sent" } ?? "no SNI was sent")")
            }
            return (.tlsFailed, "the certificate was refused: \(detail)")
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_USE_SSL_FAILED:
            return (.tlsFailed, "the TLS handshake with \(target) failed: \(detail)")
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            if usesTLS && record.appConnectUs == 0 && record.connectUs > 0 {
                return (.tlsFailed, "the connection to \(target) broke during the TLS handshake: \(detail)")
            }
            return (.connectFailed, "the connection to \(target) broke: \(detail)")
        default:
            return (.connectFailed, "the request to \(target) failed: \(detail)")
        }
    }

    private static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }
}

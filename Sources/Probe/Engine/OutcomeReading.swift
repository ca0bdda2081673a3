// Reads a finished exchange into an outcome and the sentence a person reads ("certificate is
// for default.lab.test, not sni-a.lab.test; no SNI was sent"), never a bare curl code.
import CurlTransport
import Foundation
import TerminalText

enum OutcomeReading {
    /// The outcome of one exchange and, unless it is `ok`, why.
    ///
    /// - Parameters:
    ///   - record: what the transport saw.
    ///   - target: where the exchange went, for the sentence ("127.0.0.1:443").
    ///   - checkedName: the name the certificate had to match, nil for http.
    ///   - sni: the SNI sent, nil when none.
    ///   - timeout: the per-request timeout.
    ///   - usesTLS: whether the exchange was https.
    static func read(
        _ record: TransferRecord, target: String, checkedName: String?, sni: String?, timeout: Duration,
        usesTLS: Bool
    ) -> (Outcome, String?) {
        if let tls = record.tls, let problem = tls.problem {
            return certificateFailure(tls, problem, checkedName: checkedName, sni: sni)
        }
        if let failure = record.failure {
            return transportFailure(failure, record, target: target, sni: sni, timeout: timeout, usesTLS: usesTLS)
        }
        if record.status >= 400 {
            return (.httpStatus, "the server answered \(statusText(record))")
        }
        return (.ok, nil)
    }

    /// What this process ran out of when the exchange could not even open its socket; nil when
    /// the exchange was made (whatever became of it).
    ///
    /// libcurl reports a failed `socket()` as CURLE_COULDNT_CONNECT with no errno, where a real
    /// connect failure carries one (ECONNREFUSED, EHOSTUNREACH, ...).
    static func shortage(_ record: TransferRecord) -> ResourceShortage? {
        guard let failure = record.failure, failure.kind == .connect else { return nil }
        if failure.osErrno != 0 { return ResourceShortage(errno: Int32(failure.osErrno)) }
        return ResourceShortage.now()
    }

    /// "421 Misdirected Request", from the status line as received; the reason phrase is the
    /// server's, cleaned here where it enters.
    static func statusText(_ record: TransferRecord) -> String {
        guard let line = record.statusLine else { return String(record.status) }
        let parts = line.split(separator: " ", maxSplits: 2)
        return parts.count == 3
            ? "\(record.status) \(TerminalText.escaped(String(parts[2]), cutAt: reasonLimit))" : String(record.status)
    }

    /// The most characters of a reason phrase kept ("Misdirected Request" and its kind are short).
    static let reasonLimit = 200

    private static func certificateFailure(
        _ tls: TLSObservation, _ problem: CertificateProblem, checkedName: String?, sni: String?
    ) -> (Outcome, String?) {
        let chain = tls.chain.map(CertificateReading.summary)
        let depth = min(max(tls.errorDepth, 0), max(chain.count - 1, 0))
        let culprit = chain.isEmpty ? nil : chain[depth]
        let leafNames = chain.first.map { CertificateReading.names(of: $0).joined(separator: ", ") } ?? "?"
        let sniText = sni.map { "SNI \($0) was sent" } ?? "no SNI was sent"
        let subject =
            depth == 0 ? "certificate for \(leafNames)" : "a certificate in the chain (\(culprit?.subject ?? "?"))"
        switch problem {
        case .hostnameMismatch:
            return (.certNameMismatch, "certificate is for \(leafNames), not \(checkedName ?? "?"); \(sniText)")
        case .expired:
            let when = culprit.map { " on \(day($0.notAfter))" } ?? ""
            return (.certExpired, "\(subject) expired\(when)")
        case .notYetValid:
            let when = culprit.map { " until \(day($0.notBefore))" } ?? ""
            return (.certExpired, "\(subject) is not valid\(when)")
        case .selfSigned:
            return (.certSelfSigned, "certificate for \(leafNames) is self-signed, not issued by a trusted CA")
        case .untrustedIssuer:
            let issuer = chain.last?.issuer ?? "an unknown issuer"
            return (
                .certUntrusted,
                "certificate for \(leafNames) is issued by \(issuer), which is not a trusted CA (--cacert adds one)"
            )
        case .other:
            return (.tlsFailed, "certificate check failed: \(tls.verifyMessage) (\(subject))")
        }
    }

    private static func transportFailure(
        _ failure: CurlError, _ record: TransferRecord, target: String, sni: String?, timeout: Duration,
        usesTLS: Bool
    ) -> (Outcome, String?) {
        let detail = failure.message
        switch failure.kind {
        case .nameResolution:
            return (.dnsFailed, "could not resolve the name: \(detail)")
        case .connect:
            let reason = failure.osErrno != 0 ? String(cString: strerror(Int32(failure.osErrno))) : detail
            return (.connectFailed, "could not connect to \(target): \(reason)")
        case .timeout:
            let seconds = String(format: "%g", timeout.inSeconds)
            if record.connectUs == 0 {
                return (.timeout, "no connection to \(target) within \(seconds) s")
            }
            if usesTLS && record.appConnectUs == 0 {
                return (.timeout, "the TLS handshake with \(target) did not finish within \(seconds) s")
            }
            return (.timeout, "no complete answer from \(target) within \(seconds) s (connected, request sent)")
        case .certificate:
            if detail.contains("subject name") || detail.contains("does not match") {
                return (.certNameMismatch, "\(detail); \(sni.map { "SNI \($0) was sent" } ?? "no SNI was sent")")
            }
            return (.tlsFailed, "the certificate was refused: \(detail)")
        case .tls:
            return (.tlsFailed, "the TLS handshake with \(target) failed: \(detail)")
        case .transfer:
            if usesTLS && record.appConnectUs == 0 && record.connectUs > 0 {
                return (.tlsFailed, "the connection to \(target) broke during the TLS handshake: \(detail)")
            }
            return (.connectFailed, "the connection to \(target) broke: \(detail)")
        case .outOfMemory where record.connectUs > 0:
            // libcurl's buffer for one header line stops at 100 KB (CURL_MAX_HTTP_HEADER) and says
            // "Out of memory" when a server sends more.
            return (
                .connectFailed,
                "the server at \(target) sent a response header larger than libcurl accepts (100 KB a line): "
                    + "the answer was not read"
            )
        case .badURL, .tooLarge, .outOfMemory, .other:
            return (.connectFailed, "the request to \(target) failed: \(detail)")
        }
    }

    private static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }
}

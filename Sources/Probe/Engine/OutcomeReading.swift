// Reads a finished exchange into an outcome and the sentence a person reads ("certificate is
// for default.lab.test, not sni-a.lab.test; no SNI was sent"), never a bare curl code.
import CurlTransport
import FoundationEssentials
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
    ) -> (Outcome, AttemptFailure?) {
        if let tls = record.tls, let problem = tls.problem {
            return certificateFailure(tls, problem, checkedName: checkedName, sni: sni)
        }
        if let failure = record.failure {
            return transportFailure(failure, record, target: target, sni: sni, timeout: timeout, usesTLS: usesTLS)
        }
        if record.status >= 400 {
            return (.httpStatus, .httpStatus(record.status, reason: reasonPhrase(record)))
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

    /// "Misdirected Request", from the status line as received, cleaned here where it enters;
    /// nil when the line has none.
    static func reasonPhrase(_ record: TransferRecord) -> String? {
        guard let line = record.statusLine else { return nil }
        let parts = line.split(separator: " ", maxSplits: 2)
        return parts.count == 3 ? TerminalText.escaped(String(parts[2]), cutAt: reasonLimit) : nil
    }

    /// The most characters of a reason phrase kept ("Misdirected Request" and its kind are short).
    static let reasonLimit = 200

    private static func certificateFailure(
        _ tls: TLSObservation, _ problem: CertificateProblem, checkedName: String?, sni: String?
    ) -> (Outcome, AttemptFailure) {
        let chain = tls.chain.map(CertificateReading.summary)
        let depth = min(max(tls.errorDepth, 0), max(chain.count - 1, 0))
        let culprit = chain.isEmpty ? nil : chain[depth]
        let presented = chain.first.map(CertificateReading.names)
        let certificate: AttemptFailure.ChainCertificate =
            if depth > 0, let culprit { .inChain(subject: culprit.subject) } else { .leaf(names: presented) }
        switch problem {
        case .hostnameMismatch:
            return (.certNameMismatch, .certificateNameMismatch(presented: presented, checked: checkedName, sni: sni))
        case .expired:
            return (.certExpired, .certificateExpired(certificate, on: culprit?.notAfter))
        case .notYetValid:
            return (.certExpired, .certificateNotYetValid(certificate, until: culprit?.notBefore))
        case .selfSigned:
            return (.certSelfSigned, .certificateSelfSigned(presented: presented))
        case .untrustedIssuer:
            return (.certUntrusted, .certificateUntrusted(presented: presented, issuer: chain.last?.issuer))
        case .other:
            return (.tlsFailed, .certificateCheckFailed(verifyMessage: tls.verifyMessage, certificate))
        }
    }

    private static func transportFailure(
        _ failure: CurlError, _ record: TransferRecord, target: String, sni: String?, timeout: Duration,
        usesTLS: Bool
    ) -> (Outcome, AttemptFailure) {
        let detail = failure.message
        switch failure.kind {
        case .nameResolution:
            return (.dnsFailed, .nameNotResolved(detail: detail))
        case .connect where failure.osErrno == Int(ECONNREFUSED):
            return (.connectFailed, .connectionRefused(target: target))
        case .connect:
            return (.connectFailed, .connectFailed(target: target, errno: Int32(failure.osErrno), detail: detail))
        case .timeout:
            if record.connectUs == 0 { return (.timeout, .connectTimedOut(target: target, after: timeout)) }
            if usesTLS && record.appConnectUs == 0 {
                return (.timeout, .handshakeTimedOut(target: target, after: timeout))
            }
            return (.timeout, .answerTimedOut(target: target, after: timeout))
        case .certificate where failure.refusesHostName:
            return (.certNameMismatch, .certificateNameRefused(detail: detail, sni: sni))
        case .certificate:
            return (.tlsFailed, .certificateRefused(detail: detail))
        case .tls:
            return (.tlsFailed, .handshakeFailed(target: target, detail: detail))
        case .transfer:
            if usesTLS && record.appConnectUs == 0 && record.connectUs > 0 {
                return (.tlsFailed, .brokeDuringHandshake(target: target, detail: detail))
            }
            return (.connectFailed, .connectionBroke(target: target, detail: detail))
        case .outOfMemory where record.connectUs > 0:
            // libcurl's buffer for one header line stops at 100 KB (CURL_MAX_HTTP_HEADER) and says
            // "Out of memory" when a server sends more.
            return (.responseTooLarge, .responseHeaderTooLarge(target: target))
        case .badURL, .tooLarge, .outOfMemory, .other:
            return (.connectFailed, .requestFailed(target: target, detail: detail))
        }
    }
}

// libcurl and OpenSSL failures as typed values, classified here and nowhere else: the CURLcode
// with curl's message and errno, and what the in-handshake certificate check saw.
internal import CCurl

/// A libcurl exchange or call that failed.
public struct CurlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The raw `CURLcode`.
    public let code: Int
    /// libcurl's detailed message from `CURLOPT_ERRORBUFFER`, or its generic text.
    public let message: String
    /// `CURLINFO_OS_ERRNO`, 0 when none.
    public let osErrno: Int
    /// What kind of failure this is, for deciding what to tell the user.
    public let kind: Kind
    /// Set when the in-handshake certificate check refused the server: what the check saw.
    public let refusedCertificate: TLSObservation?

    init(code: CURLcode, message: String, osErrno: Int = 0, refusedCertificate: TLSObservation? = nil) {
        self.code = Int(code.rawValue)
        self.message = message
        self.osErrno = osErrno
        self.kind = Kind(code)
        self.refusedCertificate = refusedCertificate
    }

    init(_ code: CURLcode, detail: String?, osErrno: Int = 0, refusedCertificate: TLSObservation? = nil) {
        let generic = curl_easy_strerror(code).map { String(cString: $0) } ?? "curl error \(code.rawValue)"
        let detail = detail?.trimmingTrailingNewlines ?? ""
        self.init(
            code: code, message: detail.isEmpty ? generic : detail, osErrno: osErrno,
            refusedCertificate: refusedCertificate)
    }

    /// Broad classes of libcurl failure.
    public enum Kind: String, Sendable {
        case timeout, nameResolution, connect
        /// The peer's certificate was refused (libcurl's own check or the in-handshake one).
        case certificate
        /// The TLS handshake or TLS set-up failed for another reason (cipher, CA file, ...).
        case tls
        /// The connection broke after it was made (nothing received, send or receive failed).
        case transfer
        case badURL, tooLarge
        /// libcurl's CURLE_OUT_OF_MEMORY: during a transfer, a buffer past its limit (a response
        /// header line over 100 KB) rather than memory running out.
        case outOfMemory
        case other

        init(_ code: CURLcode) {
            switch code {
            case CURLE_OPERATION_TIMEDOUT: self = .timeout
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: self = .nameResolution
            case CURLE_COULDNT_CONNECT: self = .connect
            case CURLE_PEER_FAILED_VERIFICATION: self = .certificate
            case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
                CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_USE_SSL_FAILED:
                self = .tls
            case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: self = .transfer
            case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: self = .badURL
            case CURLE_FILESIZE_EXCEEDED, CURLE_WRITE_ERROR: self = .tooLarge
            case CURLE_OUT_OF_MEMORY: self = .outOfMemory
            default: self = .other
            }
        }
    }

    /// Whether libcurl's own check of the name refused the certificate. libcurl says so only in
    /// words ("no alternative certificate subject name matches", "subject name ... does not
    /// match"), under the code every certificate refusal gets; they are read here, once.
    public var refusesHostName: Bool {
        kind == .certificate && (message.contains("subject name") || message.contains("does not match"))
    }

    public var description: String { message }
}

/// What an OpenSSL verify result means, as the probe and the resolver tell a person.
public enum CertificateProblem: Sendable, Equatable {
    /// The certificate is not for the name that was checked.
    case hostnameMismatch
    case expired
    case notYetValid
    /// A lone self-signed certificate.
    case selfSigned
    /// Issued by a CA the trust store does not hold.
    case untrustedIssuer
    /// Any other verify failure; `TLSObservation.verifyMessage` has OpenSSL's words.
    case other

    /// The problem behind an OpenSSL verify result; nil for success.
    ///
    /// - Parameter verifyError: `X509_V_OK` or an `X509_V_ERR_*` value.
    public init?(verifyError: Int) {
        switch verifyError {
        case ccurl_x509_v_ok: return nil
        case ccurl_x509_v_err_hostname_mismatch: self = .hostnameMismatch
        case ccurl_x509_v_err_cert_has_expired: self = .expired
        case ccurl_x509_v_err_cert_not_yet_valid: self = .notYetValid
        case ccurl_x509_v_err_depth_zero_self_signed_cert: self = .selfSigned
        case ccurl_x509_v_err_unable_to_get_issuer_cert, ccurl_x509_v_err_self_signed_cert_in_chain,
            ccurl_x509_v_err_unable_to_get_issuer_cert_locally, ccurl_x509_v_err_unable_to_verify_leaf_signature,
            ccurl_x509_v_err_cert_untrusted:
            self = .untrustedIssuer
        default: self = .other
        }
    }

    /// OpenSSL's words for a verify result ("ok", "hostname mismatch", ...).
    public static func message(verifyError: Int) -> String {
        if verifyError == ccurl_x509_v_ok { return "ok" }
        guard let text = ccurl_verify_error_string(verifyError) else { return "verify error \(verifyError)" }
        return String(cString: text)
    }
}

/// The certificate stage of a handshake as the shim's hook recorded it.
public struct TLSObservation: Sendable, Equatable {
    /// OpenSSL's verify result: `X509_V_OK` (0) or an `X509_V_ERR_*` value.
    public var verifyError: Int
    /// Depth in the chain at which `verifyError` was raised (0 = the server's own certificate).
    public var errorDepth: Int
    /// The chain the server presented, DER, leaf first.
    public var chain: [[UInt8]]
    /// The SNI OpenSSL put in the ClientHello, nil when none.
    public var sni: String?

    public init(verifyError: Int, errorDepth: Int, chain: [[UInt8]], sni: String?) {
        self.verifyError = verifyError
        self.errorDepth = errorDepth
        self.chain = chain
        self.sni = sni
    }

    /// What the verify result means; nil when the chain and name verified.
    public var problem: CertificateProblem? { CertificateProblem(verifyError: verifyError) }

    /// OpenSSL's words for the verify result.
    public var verifyMessage: String { CertificateProblem.message(verifyError: verifyError) }
}

extension String {
    var trimmingTrailingNewlines: String {
        var s = self
        while let last = s.last, last == "\n" || last == "\r" || last == "\r\n" { s.removeLast() }
        return s
    }
}

// libcurl failures as values: the CURLcode, curl's own message, and the errno behind it.
// Front ends turn these into sentences; nobody shows a user "error 60".
import CCurl

/// A libcurl call that failed.
public struct CurlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The raw `CURLcode`.
    public let code: Int
    /// libcurl's detailed message from `CURLOPT_ERRORBUFFER`, or its generic text.
    public let message: String
    /// `CURLINFO_OS_ERRNO`, 0 when none.
    public let osErrno: Int

    public init(code: Int, message: String, osErrno: Int = 0) {
        self.code = code
        self.message = message
        self.osErrno = osErrno
    }

    init(_ code: CURLcode, detail: String? = nil, osErrno: Int = 0) {
        let generic = curl_easy_strerror(code).map { String(cString: $0) } ?? "curl error \(code.rawValue)"
        let detail = detail?.trimmingTrailingNewlines ?? ""
        self.init(code: Int(code.rawValue), message: detail.isEmpty ? generic : detail, osErrno: osErrno)
    }

    /// What kind of failure this is, for deciding what to tell the user.
    public var kind: Kind {
        switch CURLcode(UInt32(code)) {
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .nameResolution
        case CURLE_COULDNT_CONNECT: .connect
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM: .certificate
        case CURLE_SSL_CONNECT_ERROR: .tls
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: .transfer
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: .badURL
        case CURLE_FILESIZE_EXCEEDED, CURLE_WRITE_ERROR: .tooLarge
        default: .other
        }
    }

    /// Broad classes of libcurl failure.
    public enum Kind: String, Sendable {
        case timeout, nameResolution, connect, certificate, tls, transfer, badURL, tooLarge, other
    }

    public var description: String { message }
}

extension String {
    var trimmingTrailingNewlines: String {
        var s = self
        while let last = s.last, last == "\n" || last == "\r" || last == "\r\n" { s.removeLast() }
        return s
    }
}

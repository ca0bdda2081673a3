// Process-wide libcurl set-up and the facts of the linked libcurl.
// curl_global_init is not thread-safe, so it runs once, behind a Swift lazy global.
internal import CCurl

/// The linked libcurl, initialised once for the whole process.
public enum Curl {
    private static let initialised: Bool = {
        curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()

    /// Initialises libcurl once; every handle constructor calls it first.
    ///
    /// - Returns: whether `curl_global_init` succeeded.
    @discardableResult
    public static func initialise() -> Bool { initialised }

    /// The libcurl version string, for example `7.88.1`.
    public static var version: String {
        initialise()
        guard let info = ccurl_version_info(), let text = info.pointee.version else { return "?" }
        return String(cString: text)
    }

    /// The TLS library under libcurl, for example `OpenSSL/3.0.19`.
    public static var tlsVersion: String {
        initialise()
        guard let info = ccurl_version_info(), let text = info.pointee.ssl_version else { return "none" }
        return String(cString: text)
    }

    /// Whether libcurl runs on OpenSSL, which the in-handshake name check needs.
    public static var tlsCheckAvailable: Bool { ccurl_tls_backend_is_openssl() == 1 }
}

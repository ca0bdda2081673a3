// libcurl's URL API (`curl_url`) in Swift: parse, read and change parts, resolve a relative
// `Location`, so URLs are read exactly as the libcurl that requests them reads them.
internal import CCurl

/// Why libcurl refused a URL or a part of one.
public struct CurlURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libcurl's `CURLUcode`.
    public let code: Int
    /// What is wrong, in words ("malformed input", "bad port number", ...).
    public let message: String

    /// A refusal in other words than libcurl's own for `code`.
    init(_ code: CURLUcode, message: String) {
        self.code = Int(code.rawValue)
        self.message = message
    }

    /// A C string ends at its first NUL, so libcurl would read only what comes before it:
    /// text holding one is refused before it is handed over.
    static func refusingNUL(_ text: String?) throws(CurlURLError) {
        guard let position = text?.nulBytePosition else { return }
        throw CurlURLError(CURLUE_MALFORMED_INPUT, message: "a NUL byte at byte \(position)")
    }

    init(_ code: CURLUcode) {
        self.code = Int(code.rawValue)
        switch code {
        case CURLUE_MALFORMED_INPUT: message = "malformed input"
        case CURLUE_BAD_PORT_NUMBER: message = "bad port number"
        case CURLUE_UNSUPPORTED_SCHEME: message = "unsupported scheme"
        case CURLUE_NO_HOST: message = "no host"
        case CURLUE_BAD_HOSTNAME: message = "bad host name"
        case CURLUE_BAD_IPV6: message = "bad IPv6 address"
        case CURLUE_OUT_OF_MEMORY: message = "libcurl is out of memory"
        default: message = "libcurl URL error \(code.rawValue)"
        }
    }

    public var description: String { message }
}

/// One parsed URL held by libcurl (a `CURLU` handle). Not Sendable: a handle belongs to the
/// code that made it; share the URL as text.
public final class CurlURL {
    /// The parts of a URL that can be read and set.
    public enum Part: Sendable {
        case url, scheme, host, port, path, query, fragment

        var curl: CURLUPart {
            switch self {
            case .url: CURLUPART_URL
            case .scheme: CURLUPART_SCHEME
            case .host: CURLUPART_HOST
            case .port: CURLUPART_PORT
            case .path: CURLUPART_PATH
            case .query: CURLUPART_QUERY
            case .fragment: CURLUPART_FRAGMENT
            }
        }
    }

    private let handle: OpaquePointer

    /// Parses a URL.
    ///
    /// - Parameters:
    ///   - text: the URL.
    ///   - guessingScheme: when true, a URL without a scheme gets libcurl's default (https).
    /// - Throws: `CurlURLError` when libcurl cannot parse it.
    public init(_ text: String, guessingScheme: Bool = false) throws(CurlURLError) {
        Curl.initialise()
        try CurlURLError.refusingNUL(text)
        guard let handle = curl_url() else { throw CurlURLError(CURLUE_OUT_OF_MEMORY) }
        self.handle = handle
        let code = curl_url_set(handle, CURLUPART_URL, text, guessingScheme ? UInt32(CURLU_DEFAULT_SCHEME) : 0)
        guard code == CURLUE_OK else { throw CurlURLError(code) }
    }

    deinit { curl_url_cleanup(handle) }

    /// A part as libcurl renders it; nil when the URL has none.
    public subscript(_ part: Part) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard curl_url_get(handle, part.curl, &value, 0) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }

    /// Sets a part; nil removes it.
    ///
    /// - Throws: `CurlURLError` when libcurl refuses the value.
    public func set(_ part: Part, _ value: String?) throws(CurlURLError) {
        try CurlURLError.refusingNUL(value)
        let code = curl_url_set(handle, part.curl, value, 0)
        guard code == CURLUE_OK else { throw CurlURLError(code) }
    }

    /// Moves this URL to `reference` (an absolute URL or one relative to this one), as a
    /// client follows a `Location` header.
    ///
    /// - Throws: `CurlURLError` when the reference cannot be resolved.
    public func resolve(_ reference: String) throws(CurlURLError) {
        try set(.url, reference)
    }

    /// The whole URL as libcurl renders it.
    public var text: String? { self[.url] }
}

extension String {
    /// Where the first NUL byte is, counted from 1; nil when there is none. A C string ends at
    /// its first NUL, so text holding one is refused before libcurl is given it.
    var nulBytePosition: Int? {
        guard let at = utf8.firstIndex(of: 0) else { return nil }
        return utf8.distance(from: utf8.startIndex, to: at) + 1
    }
}

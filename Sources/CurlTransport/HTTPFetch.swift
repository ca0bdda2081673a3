// A single blocking HTTP exchange over one easy handle: what the HTTPDNS providers and the
// lab's tests need. The probe engine drives many handles at once through its own multi loop.
import CCurl

/// An HTTP request for `HTTPFetch.perform`.
public struct HTTPRequest: Sendable {
    public var url: String
    public var method: String
    /// Header lines as `Name: value`.
    public var headers: [String]
    public var body: [UInt8]?
    /// Whole-exchange timeout in seconds.
    public var timeout: Double
    /// Extra PEM file of CAs to trust (`CURLOPT_CAINFO`), as the lab's CA.
    public var caFile: String?
    /// `CURLOPT_RESOLVE` pins, `host:port:address`.
    public var resolve: [String]
    /// When set, the certificate must match this name, checked inside the handshake;
    /// libcurl's own name check (against the URL's host) is then off.
    public var checkCertificateName: String?
    /// Verify the peer at all. Only the lab's own self-tests turn this off.
    public var verifyPeer: Bool
    /// Bodies longer than this fail with `CurlError.Kind.tooLarge`.
    public var maxBodyBytes: Int
    /// Never use a proxy from the environment.
    public var bypassProxy: Bool

    public init(
        url: String, method: String = "GET", headers: [String] = [], body: [UInt8]? = nil,
        timeout: Double = 2, caFile: String? = nil, resolve: [String] = [],
        checkCertificateName: String? = nil, verifyPeer: Bool = true,
        maxBodyBytes: Int = 1 << 20, bypassProxy: Bool = true
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.caFile = caFile
        self.resolve = resolve
        self.checkCertificateName = checkCertificateName
        self.verifyPeer = verifyPeer
        self.maxBodyBytes = maxBodyBytes
        self.bypassProxy = bypassProxy
    }
}

/// What came back.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Response headers of the final response, in order, names as sent.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Total time in seconds, from libcurl.
    public var totalTime: Double
    /// The address libcurl connected to.
    public var remoteIP: String
    public var remotePort: Int
    /// The certificate chain the server presented (DER, leaf first), when TLS was used.
    public var peerChain: [[UInt8]]

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The first header with this name, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A TLS handshake the in-handshake check refused.
public struct CertificateCheckFailure: Error, Sendable {
    public let curl: CurlError
    /// OpenSSL's verify error code (X509_V_ERR_*).
    public let verifyError: Int
    /// OpenSSL's text for it, e.g. "hostname mismatch".
    public let verifyMessage: String
    public let peerChain: [[UInt8]]
}

/// Blocking single requests through libcurl.
public enum HTTPFetch {
    /// Performs one request on the calling thread.
    ///
    /// - Parameter request: what to send.
    /// - Returns: the response, whatever its status.
    /// - Throws: `CurlError` for transport failures; `CertificateCheckFailure` when the
    ///   certificate check refused the server.
    public static func perform(_ request: HTTPRequest) throws -> HTTPResponse {
        let easy = try EasyHandle()
        let sink = ResponseSink(limit: request.maxBodyBytes)
        let box = Unmanaged.passRetained(sink)
        defer { box.release() }

        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_TIMEOUT_MS, Int(request.timeout * 1000))
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(request.timeout * 1000))
        if request.bypassProxy { try easy.set(CURLOPT_NOPROXY, "*") }
        try easy.set(CURLOPT_HTTPHEADER, list: request.headers)
        if !request.resolve.isEmpty { try easy.set(CURLOPT_RESOLVE, list: request.resolve) }
        if let caFile = request.caFile { try easy.set(CURLOPT_CAINFO, caFile) }
        try easy.set(CURLOPT_SSL_VERIFYPEER, request.verifyPeer)
        try easy.set(CURLOPT_SSL_VERIFYHOST, request.verifyPeer && request.checkCertificateName == nil ? 2 : 0)
        try easy.set(CURLOPT_SSL_SESSIONID_CACHE, false)
        switch request.method {
        case "GET": break
        case "HEAD": try easy.set(CURLOPT_NOBODY, true)
        default: try easy.set(CURLOPT_CUSTOMREQUEST, request.method)
        }
        if let body = request.body {
            try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count))
            try body.withUnsafeBufferPointer { buffer throws(CurlError) in
                try easy.set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
            }
        }
        try easy.set(CURLOPT_WRITEDATA, pointer: box.toOpaque())
        try easy.set(CURLOPT_HEADERDATA, pointer: box.toOpaque())
        _ = ccurl_easy_setopt_write_function(easy.raw, CURLOPT_WRITEFUNCTION, ResponseSink.writeBody)
        _ = ccurl_easy_setopt_write_function(easy.raw, CURLOPT_HEADERFUNCTION, ResponseSink.writeHeader)

        let check = ccurl_tls_check_new(request.checkCertificateName)
        defer { ccurl_tls_check_free(check) }
        if let check {
            let code = ccurl_easy_install_tls_check(easy.raw, check)
            if code != CURLE_OK, request.checkCertificateName != nil { throw easy.error(code) }
        }

        let code = curl_easy_perform(easy.raw)
        let chain = check.map(TLSCheckReading.chain) ?? []
        if code != CURLE_OK {
            if sink.overflowed {
                throw CurlError(
                    code: Int(CURLE_FILESIZE_EXCEEDED.rawValue),
                    message: "response body is larger than \(request.maxBodyBytes) bytes")
            }
            if let check, check.pointee.ran == 1, check.pointee.verify_error != 0 {
                throw CertificateCheckFailure(
                    curl: easy.error(code), verifyError: check.pointee.verify_error,
                    verifyMessage: String(cString: ccurl_verify_error_string(check.pointee.verify_error)),
                    peerChain: chain)
            }
            throw easy.error(code)
        }
        return HTTPResponse(
            status: easy.long(CURLINFO_RESPONSE_CODE), headers: sink.headers, body: sink.body,
            totalTime: easy.double(CURLINFO_TOTAL_TIME), remoteIP: easy.string(CURLINFO_PRIMARY_IP) ?? "",
            remotePort: easy.long(CURLINFO_PRIMARY_PORT), peerChain: chain)
    }
}

/// Reads what the shim's TLS hook recorded.
public enum TLSCheckReading {
    /// The presented chain, leaf first, as DER byte arrays.
    public static func chain(_ check: UnsafeMutablePointer<ccurl_tls_check>) -> [[UInt8]] {
        let count = Int(check.pointee.chain_count)
        return withUnsafeBytes(of: check.pointee.chain) { raw in
            let ders = raw.bindMemory(to: ccurl_der.self)
            return (0..<count).compactMap { i in
                guard let bytes = ders[i].bytes else { return nil }
                return Array(UnsafeBufferPointer(start: bytes, count: ders[i].length))
            }
        }
    }
}

/// Collects one response's headers and body from libcurl's callbacks.
final class ResponseSink {
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []
    var overflowed = false
    let limit: Int

    init(limit: Int) { self.limit = limit }

    static let writeBody: curl_write_callback = { data, size, count, user in
        let sink = Unmanaged<ResponseSink>.fromOpaque(user!).takeUnretainedValue()
        let length = size * count
        guard sink.body.count + length <= sink.limit else {
            sink.overflowed = true
            return 0
        }
        if let data {
            data.withMemoryRebound(to: UInt8.self, capacity: length) {
                sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
            }
        }
        return length
    }

    static let writeHeader: curl_write_callback = { data, size, count, user in
        let sink = Unmanaged<ResponseSink>.fromOpaque(user!).takeUnretainedValue()
        let length = size * count
        guard let data else { return length }
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
            .trimmingTrailingNewlines
        if line.hasPrefix("HTTP/") {
            sink.headers.removeAll()  // a new response (after 100 Continue or a redirect)
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            sink.headers.append((name, String(value)))
        }
        return length
    }
}

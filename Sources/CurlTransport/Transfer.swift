// The values a transfer is described and answered with: what to send (`TransferSpec`) and what
// happened (`TransferRecord`), plain Sendable values on both sides of the loop thread.
internal import CCurl
import FoundationEssentials

/// An HTTP header as sent or received.
public struct HeaderField: Sendable, Codable, Equatable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value`; nil for anything else.
    public init?(line: String) {
        var line = line
        guard let field = line.withUTF8({ HeaderField(bytes: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = field
    }

    /// Parses `Name: value` from UTF-8 bytes (a line in libcurl's buffer, with no line end): the
    /// name up to the first colon, which must hold no space; the value without surrounding spaces
    /// and tabs. Nil for anything else. Works on bytes because the transfer loop runs it for every
    /// header of every request.
    public init?(bytes: UnsafeRawBufferPointer) {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0,
            !bytes[..<colon].contains(UInt8(ascii: " "))
        else { return nil }
        var start = colon + 1
        var end = bytes.count
        while start < end && (bytes[start] == 0x20 || bytes[start] == 0x09) { start += 1 }
        while end > start && (bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09) { end -= 1 }
        self.init(
            name: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<colon]), as: UTF8.self),
            value: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
    }
}

/// One line of curl's own verbose log, with its time since the transfer started.
public struct CurlLogLine: Sendable, Codable, Equatable, Hashable {
    /// Which of libcurl's debug streams a line came from; the raw values are the JSON's.
    public enum Kind: String, Sendable, Codable, Hashable {
        /// libcurl's informational text ("Trying 127.0.0.1:443...").
        case info
        case headerIn = "header-in"
        case headerOut = "header-out"
        case ssl
    }

    /// Milliseconds since the transfer started.
    public var atMs: Double
    public var kind: Kind
    public var text: String

    public init(atMs: Double, kind: Kind, text: String) {
        self.atMs = atMs
        self.kind = kind
        self.text = text
    }
}

/// curl's verbose log of one transfer as the loop thread took it in: the bytes of every line in
/// one buffer, and where each line is. The loop thread is the probe's bottleneck, so it only
/// copies bytes; whoever reads the record makes the `CurlLogLine`s.
public struct CurlLog: Sendable {
    private var bytes: [UInt8] = []
    private var entries: [(end: Int, kind: CurlLogLine.Kind, atMs: Double)] = []

    public init() {}

    /// How many lines the log holds.
    public var count: Int { entries.count }

    /// Appends one line (already trimmed).
    mutating func append(_ line: UnsafeRawBufferPointer, kind: CurlLogLine.Kind, atMs: Double) {
        bytes.append(contentsOf: line)
        entries.append((bytes.count, kind, atMs))
    }

    /// The lines, in order.
    public var lines: [CurlLogLine] {
        var start = 0
        return bytes.withUnsafeBufferPointer { buffer in
            entries.map { entry in
                let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<entry.end]), as: UTF8.self)
                start = entry.end
                return CurlLogLine(atMs: entry.atMs, kind: entry.kind, text: text)
            }
        }
    }
}

/// How much of a response body a transfer keeps.
public enum BodyLimit: Sendable, Equatable {
    /// Keep the first `n` bytes and count the rest (a probe's preview).
    case keepFirst(Int)
    /// Keep everything up to `n` bytes; a longer body fails the transfer (`CurlError.Kind.tooLarge`).
    case failBeyond(Int)
}

/// One HTTP exchange the loop performs, described as plain values.
public struct TransferSpec: Sendable {
    public var url: String
    public var method: String
    public var headers: [HeaderField]
    public var body: [UInt8]?
    /// Whole-exchange timeout; the connect timeout is the same.
    public var timeout: Duration
    /// PEM file of the CAs to trust instead of the system's (`CURLOPT_CAINFO`); `CABundle`
    /// builds one that holds the system's too.
    public var caFile: String?
    /// `CURLOPT_RESOLVE` entries, `host:port:address`.
    public var resolve: [String]
    /// The name the certificate must match, checked inside the handshake by the shim's hook.
    public var checkName: String?
    /// libcurl's own name check against the URL's host (off for an IP in the URL).
    public var verifyHost: Bool
    /// Never use a proxy from the environment.
    public var bypassProxy: Bool
    /// A new connection and a full handshake, never a reused one, so connect and TLS are measured.
    public var freshConnection: Bool
    /// How much of the response body to keep.
    public var bodyLimit: BodyLimit
    /// Record curl's verbose log and the request head as sent (a probe's trace).
    public var trace: Bool

    public init(
        url: String, method: String = "GET", headers: [HeaderField] = [], body: [UInt8]? = nil,
        timeout: Duration = .seconds(2), caFile: String? = nil, resolve: [String] = [], checkName: String? = nil,
        verifyHost: Bool = true, bypassProxy: Bool = true, freshConnection: Bool = true,
        bodyLimit: BodyLimit = .keepFirst(16 * 1024), trace: Bool = false
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.caFile = caFile
        self.resolve = resolve
        self.checkName = checkName
        self.verifyHost = verifyHost
        self.bypassProxy = bypassProxy
        self.freshConnection = freshConnection
        self.bodyLimit = bodyLimit
        self.trace = trace
    }
}

/// What came back from one exchange, read on the loop thread and handed over as values.
public struct TransferRecord: Sendable {
    public var startedAt: Date
    /// Why the exchange failed, classified; nil when it completed (whatever the status).
    public var failure: CurlError?
    public var status: Int
    public var httpVersion: String?
    public var remoteIP: String?
    public var remotePort: Int?
    /// The request line as libcurl sent it (traced transfers only).
    public var requestLine: String?
    /// The request headers as libcurl sent them (traced transfers only).
    public var requestHeaders: [HeaderField]
    public var requestBodyBytes: Int
    public var statusLine: String?
    /// Headers of the final response, in order, names as sent.
    public var responseHeaders: [HeaderField]
    public var responseBytes: Int
    public var body: [UInt8]
    /// Microseconds from the start, curl's cumulative `*_TIME_T` values (0 when not reached).
    public var nameLookupUs: Int64
    public var connectUs: Int64
    public var appConnectUs: Int64
    public var preTransferUs: Int64
    public var startTransferUs: Int64
    public var totalUs: Int64
    /// curl's verbose log (traced transfers only).
    public var log: CurlLog
    /// What the TLS hook saw; nil when no handshake reached the certificate.
    public var tls: TLSObservation?
    /// The TLS version the handshake agreed, as OpenSSL names it (`TLSv1.3`); nil unless a
    /// handshake completed. Read from OpenSSL, so untraced transfers have it too.
    public var tlsVersion: String? = nil
    /// Microseconds from the start to the moment the TLS handshake began, the TCP connection
    /// made (0 when none began): the connect time of a handshake that failed, which libcurl 7.88
    /// leaves at 0 in `connectUs` (it stamps that only once TLS is done too).
    public var tlsStartUs: Int64 = 0

    /// Whether the exchange completed (any HTTP status).
    public var succeeded: Bool { failure == nil }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The first response header with this name, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return responseHeaders.first { $0.name.lowercased() == wanted }?.value
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (no Foundation, so cheap in hot paths).
    public var trimmedSpaces: String {
        let text = String(self)
        let utf8 = text.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
        while end > start {
            let before = utf8.index(before: end)
            guard utf8[before] == 0x20 || utf8[before] == 0x09 else { break }
            end = before
        }
        return String(text[start..<end])
    }
}

extension TransferRecord {
    /// The shim's stamp `ns` (CLOCK_MONOTONIC, DispatchTime's clock on Linux) as microseconds
    /// from libcurl's start of the transfer, the epoch of its other times. Not from `configure`:
    /// under load libcurl takes a transfer up a while after it was added (a test saw 0.2 s), and
    /// a connect time counted from before that came out longer than the whole transfer. libcurl
    /// started `totalUs` before it finished, which is now or a moment earlier, so the figure errs
    /// early by that moment, never late; it is kept within the transfer, and 0 means no stamp.
    static func sinceCurlStart(_ ns: UInt64, totalUs: Int64, now: UInt64) -> Int64 {
        guard ns > 0 else { return 0 }
        let total = max(totalUs, 0)
        let start = now - min(now, UInt64(total) * 1000)
        let us = ns > start ? Int64((ns - start) / 1000) : 0
        // At least 1: a handshake did begin, even where the reading lag puts its stamp first.
        return max(1, min(us, total))
    }
}

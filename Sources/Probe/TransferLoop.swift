// The probe's transport: one libcurl multi handle driven by one owner thread, fed through a
// locked queue. Every easy handle is created, run and read on that thread only.
import CCurl
import CurlTransport
import Foundation

/// One HTTP exchange the loop performs, described as plain values.
struct TransferSpec: Sendable {
    var url: String
    var method: String
    var headers: [HeaderField]
    var body: [UInt8]?
    /// Whole-exchange timeout, seconds.
    var timeout: Double
    var caFile: String?
    /// `CURLOPT_RESOLVE` entries.
    var resolve: [String] = []
    /// The name the certificate must match, checked inside the handshake by the shim's hook.
    var checkName: String?
    /// libcurl's own name check against the URL's host (off for an IP in the URL).
    var verifyHost: Bool
    /// Never use a proxy from the environment.
    var bypassProxy: Bool = true
    /// How much of the response body to keep.
    var bodyCap: Int = 16 * 1024
}

/// What came back from one exchange, read on the loop thread and handed over as values.
struct TransferRecord: Sendable {
    var startedAt: Date
    var curlCode: Int
    var curlMessage: String
    var osErrno: Int
    var status: Int
    var httpVersion: String?
    var remoteIP: String?
    var remotePort: Int?
    /// The request line and headers as libcurl sent them.
    var requestLine: String?
    var requestHeaders: [HeaderField]
    var requestBodyBytes: Int
    var statusLine: String?
    var responseHeaders: [HeaderField]
    var responseBytes: Int
    var body: [UInt8]
    /// Microseconds from the start, curl's cumulative `*_TIME_T` values (0 when not reached).
    var nameLookupUs: Int64
    var connectUs: Int64
    var appConnectUs: Int64
    var preTransferUs: Int64
    var startTransferUs: Int64
    var totalUs: Int64
    var log: [CurlLogLine]
    /// What the TLS hook saw; nil when no handshake reached the certificate.
    var tls: TLSObservation?

    var succeeded: Bool { curlCode == Int(CURLE_OK.rawValue) }
}

/// The certificate stage of a handshake as the shim's hook recorded it.
struct TLSObservation: Sendable {
    var verifyError: Int
    var errorDepth: Int
    var chain: [[UInt8]]
    /// The SNI OpenSSL put in the ClientHello, nil when none.
    var sni: String?
}

/// The multi-handle loop. Safe to share: the only state touched from outside is the
/// incoming queue, behind a lock; everything else belongs to the loop thread.
final class TransferLoop: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let maxActive: Int
    private let lock = NSLock()
    private var incoming: [Transfer] = []
    private var stopping = false

    // Owned by the loop thread.
    private var waiting: [Transfer] = []
    private var waitingHead = 0
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]

    /// Starts the owner thread.
    ///
    /// - Parameter maxActive: how many exchanges may run at once; the rest wait their turn,
    ///   and their timeout starts only when they begin.
    init(maxActive: Int) {
        Curl.initialise()
        multi = curl_multi_init()!
        self.maxActive = max(1, maxActive)
        let thread = Thread { [self] in run() }
        thread.name = "ipdirect.probe.curl-multi"
        thread.start()
    }

    /// Asks the thread to finish once nothing is running; called when the engine goes away.
    func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
        curl_multi_wakeup(multi)
    }

    /// Performs one exchange on the loop thread.
    ///
    /// - Parameter spec: what to send.
    /// - Returns: what happened, failures included.
    func perform(_ spec: TransferSpec) async -> TransferRecord {
        await withCheckedContinuation { continuation in
            lock.lock()
            incoming.append(Transfer(spec: spec, continuation: continuation))
            lock.unlock()
            curl_multi_wakeup(multi)
        }
    }

    private func run() {
        while true {
            lock.lock()
            let arrived = incoming
            incoming.removeAll(keepingCapacity: true)
            let finishing = stopping
            lock.unlock()
            waiting.append(contentsOf: arrived)
            if finishing && active.isEmpty && waitingHead == waiting.count { break }
            startWaiting()

            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            readFinished()
            startWaiting()
            if !active.isEmpty || waitingHead < waiting.count {
                curl_multi_perform(multi, &running)
                readFinished()
            }
            var ready: Int32 = 0
            curl_multi_poll(multi, nil, 0, active.isEmpty ? 1000 : 100, &ready)
        }
        curl_multi_cleanup(multi)
    }

    private func startWaiting() {
        while active.count < maxActive && waitingHead < waiting.count {
            let transfer = waiting[waitingHead]
            waitingHead += 1
            if let failure = transfer.configure() {
                transfer.finish(code: failure)
                continue
            }
            active[transfer.easy.raw] = transfer
            curl_multi_add_handle(multi, transfer.easy.raw)
        }
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
        }
    }

    private func readFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(multi, easy)
            if let transfer = active.removeValue(forKey: easy) { transfer.finish(code: code) }
        }
    }
}

/// One exchange while it runs: the easy handle and what its callbacks collect.
/// Lives on the loop thread only.
private final class Transfer {
    let spec: TransferSpec
    let continuation: CheckedContinuation<TransferRecord, Never>
    let easy: EasyHandle
    private var check: UnsafeMutablePointer<ccurl_tls_check>?
    private var unmanaged: Unmanaged<Transfer>?
    private var startedAt = Date()
    private var startUptime: UInt64 = 0

    var requestLine: String?
    var requestHeaders: [HeaderField] = []
    var statusLine: String?
    var responseHeaders: [HeaderField] = []
    var body: [UInt8] = []
    var responseBytes = 0
    var log: [CurlLogLine] = []

    init(spec: TransferSpec, continuation: CheckedContinuation<TransferRecord, Never>) {
        self.spec = spec
        self.continuation = continuation
        // Allocation failure of an easy handle leaves nothing sensible to do but crash.
        self.easy = try! EasyHandle()
    }

    deinit {
        if let check { ccurl_tls_check_free(check) }
    }

    /// Sets every option; returns a failure code instead of throwing so the loop stays simple.
    func configure() -> CURLcode? {
        startedAt = Date()
        startUptime = DispatchTime.now().uptimeNanoseconds
        do {
            try easy.set(CURLOPT_URL, spec.url)
            let timeout = max(1, Int(spec.timeout * 1000))
            try easy.set(CURLOPT_TIMEOUT_MS, timeout)
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, timeout)
            // A fresh connection every time, so connect and TLS are measured, never skipped.
            try easy.set(CURLOPT_FRESH_CONNECT, true)
            try easy.set(CURLOPT_FORBID_REUSE, true)
            try easy.set(CURLOPT_SSL_SESSIONID_CACHE, false)
            try easy.set(CURLOPT_FOLLOWLOCATION, false)
            if spec.bypassProxy { try easy.set(CURLOPT_NOPROXY, "*") }
            if !spec.resolve.isEmpty { try easy.set(CURLOPT_RESOLVE, list: spec.resolve) }
            if let caFile = spec.caFile { try easy.set(CURLOPT_CAINFO, caFile) }
            try easy.set(CURLOPT_SSL_VERIFYPEER, true)
            try easy.set(CURLOPT_SSL_VERIFYHOST, spec.verifyHost ? 2 : 0)
            // "Expect:" keeps libcurl from waiting for a 100 Continue some servers never send.
            var lines = spec.headers.map { "\($0.name): \($0.value)" }
            if spec.body != nil { lines.append("Expect:") }
            try easy.set(CURLOPT_HTTPHEADER, list: lines)
            switch spec.method {
            case "GET": break
            case "HEAD": try easy.set(CURLOPT_NOBODY, true)
            case "POST" where spec.body != nil: break
            default: try easy.set(CURLOPT_CUSTOMREQUEST, spec.method)
            }
            if let body = spec.body {
                try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count))
                try body.withUnsafeBufferPointer { buffer throws(CurlError) in
                    // COPYPOSTFIELDS copies, so the body outlives this closure.
                    let empty: [UInt8] = [0]
                    try empty.withUnsafeBufferPointer { fallback throws(CurlError) in
                        let base = buffer.baseAddress ?? fallback.baseAddress
                        try easy.set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: base))
                    }
                }
            }
            let box = Unmanaged.passRetained(self)
            unmanaged = box
            try easy.set(CURLOPT_WRITEDATA, pointer: box.toOpaque())
            try easy.set(CURLOPT_HEADERDATA, pointer: box.toOpaque())
            try easy.set(CURLOPT_DEBUGDATA, pointer: box.toOpaque())
            _ = ccurl_easy_setopt_write_function(easy.raw, CURLOPT_WRITEFUNCTION, Transfer.writeBody)
            _ = ccurl_easy_setopt_write_function(easy.raw, CURLOPT_HEADERFUNCTION, Transfer.writeHeader)
            _ = ccurl_easy_setopt_debug_function(easy.raw, Transfer.debugLine)
            try easy.set(CURLOPT_VERBOSE, true)
            if spec.url.lowercased().hasPrefix("https:") {
                check = ccurl_tls_check_new(spec.checkName)
                if let check {
                    let code = ccurl_easy_install_tls_check(easy.raw, check)
                    if code != CURLE_OK && spec.checkName != nil { return code }
                }
            }
        } catch {
            return CURLcode(UInt32(error.code))
        }
        return nil
    }

    /// Reads the handle and resumes the waiting task.
    func finish(code: CURLcode) {
        defer {
            unmanaged?.release()
            unmanaged = nil
        }
        let failure = code == CURLE_OK ? nil : easy.error(code)
        var tls: TLSObservation?
        if let check, check.pointee.ran == 1 {
            let sni: String? =
                check.pointee.sni_sent == 1
                ? withUnsafeBytes(of: check.pointee.sni) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                } : nil
            tls = TLSObservation(
                verifyError: check.pointee.verify_error, errorDepth: Int(check.pointee.error_depth),
                chain: TLSCheckReading.chain(check), sni: sni)
        }
        let remoteIP = easy.string(CURLINFO_PRIMARY_IP).flatMap { $0.isEmpty ? nil : $0 }
        let record = TransferRecord(
            startedAt: startedAt, curlCode: Int(code.rawValue), curlMessage: failure?.message ?? "",
            osErrno: failure?.osErrno ?? 0, status: easy.long(CURLINFO_RESPONSE_CODE),
            httpVersion: Transfer.versionText(easy.long(CURLINFO_HTTP_VERSION)), remoteIP: remoteIP,
            remotePort: remoteIP == nil ? nil : easy.long(CURLINFO_PRIMARY_PORT), requestLine: requestLine,
            requestHeaders: requestHeaders, requestBodyBytes: Int(easy.offset(CURLINFO_SIZE_UPLOAD_T)),
            statusLine: statusLine, responseHeaders: responseHeaders, responseBytes: responseBytes, body: body,
            nameLookupUs: easy.offset(CURLINFO_NAMELOOKUP_TIME_T), connectUs: easy.offset(CURLINFO_CONNECT_TIME_T),
            appConnectUs: easy.offset(CURLINFO_APPCONNECT_TIME_T),
            preTransferUs: easy.offset(CURLINFO_PRETRANSFER_TIME_T),
            startTransferUs: easy.offset(CURLINFO_STARTTRANSFER_TIME_T), totalUs: easy.offset(CURLINFO_TOTAL_TIME_T),
            log: log, tls: tls)
        continuation.resume(returning: record)
    }

    private var elapsedMs: Double {
        Double(DispatchTime.now().uptimeNanoseconds - startUptime) / 1_000_000
    }

    private static func versionText(_ version: Int) -> String? {
        // CURL_HTTP_VERSION_1_0, _1_1, _2_0 and _3.
        switch version {
        case 1: "HTTP/1.0"
        case 2: "HTTP/1.1"
        case 3: "HTTP/2"
        case 30: "HTTP/3"
        default: nil
        }
    }

    private static let logLimit = 400

    static let writeBody: curl_write_callback = { data, size, count, user in
        let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        let length = size * count
        transfer.responseBytes += length
        let room = transfer.spec.bodyCap - transfer.body.count
        if room > 0, let data {
            data.withMemoryRebound(to: UInt8.self, capacity: length) {
                transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(room, length)))
            }
        }
        return length
    }

    static let writeHeader: curl_write_callback = { data, size, count, user in
        let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        let length = size * count
        guard let data else { return length }
        let line = LineBytes.text(UnsafeRawBufferPointer(start: data, count: length))
        if line.hasPrefix("HTTP/") {
            // A new response: after a 100 Continue only the final one counts.
            transfer.statusLine = line
            transfer.responseHeaders.removeAll()
        } else if let field = HeaderField(line: line) {
            transfer.responseHeaders.append(field)
        }
        return length
    }

    static let debugLine: curl_debug_callback = { _, type, data, size, user in
        guard let user, let data else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
        let kind: String
        switch type {
        case CURLINFO_TEXT: kind = "info"
        case CURLINFO_HEADER_IN: kind = "header-in"
        case CURLINFO_HEADER_OUT: kind = "header-out"
        default: return 0  // data and raw TLS records are not kept
        }
        let at = transfer.elapsedMs
        // libcurl hands the request head over in one piece: its first line is the request line.
        var first = type == CURLINFO_HEADER_OUT
        LineBytes.forEachLine(UnsafeRawBufferPointer(start: data, count: size)) { line in
            if first {
                first = false
                transfer.requestLine = line
                transfer.requestHeaders.removeAll()
            } else if type == CURLINFO_HEADER_OUT, let field = HeaderField(line: line) {
                transfer.requestHeaders.append(field)
            }
            if transfer.log.count < logLimit { transfer.log.append(CurlLogLine(atMs: at, kind: kind, text: line)) }
        }
        return 0
    }
}

/// Lines out of libcurl's buffers, split and trimmed on bytes: these callbacks run for every
/// header and log line of every request, so they stay clear of Foundation's string bridging.
enum LineBytes {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

    /// The buffer as one line, without surrounding white space and line ends.
    static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        var start = 0
        var end = bytes.count
        while start < end && isSpace(bytes[start]) { start += 1 }
        while end > start && isSpace(bytes[end - 1]) { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// Calls `body` with each non-empty trimmed line of the buffer.
    static func forEachLine(_ bytes: UnsafeRawBufferPointer, _ body: (String) -> Void) {
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            let line = text(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            if !line.isEmpty { body(line) }
            start = end + 1
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (no Foundation, so cheap in hot paths).
    var trimmedSpaces: String {
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

extension HeaderField {
    /// Parses `Name: value`; nil for anything else.
    init?(line: String) {
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { return nil }
        let name = String(line[..<colon])
        guard !name.contains(" ") else { return nil }
        let value = line[line.index(after: colon)...].trimmedSpaces
        self.init(name: name, value: value)
    }
}

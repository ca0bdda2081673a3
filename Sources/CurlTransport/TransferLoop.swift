// The one place that drives libcurl's multi API: one multi handle per loop, driven by one owner
// thread and fed through a locked queue. Easy handles are created, run, read and reused there only.
internal import CCurl
import Dispatch
import FoundationEssentials
import FoundationGaps

/// A libcurl multi loop. Safe to share: the only state touched from outside is the incoming
/// queue, behind a lock; the multi handle and every easy handle belong to the loop thread.
public final class TransferLoop: @unchecked Sendable {
    /// The process-wide loop for one-off requests (HTTPDNS queries, the lab's checks). Its limit
    /// is wide: every resolver in the process shares it, a queued query's resolver deadline is
    /// already running, and queries held by a slow or silent endpoint must not make quick ones
    /// behind them miss theirs.
    public static let shared = TransferLoop(maxActive: 256, name: "ipdirect.curl-shared")

    private let multi: UnsafeMutableRawPointer
    private let maxActive: Int
    private let queue = Locked(Queue())
    /// Where the loop thread hands each record to the task awaiting it (FoundationGaps' HandOff
    /// says why under a lock); its tasks waiting are the exchanges not yet answered.
    private let handOff = HandOff()

    /// Exchanges handed to this loop and not yet answered (waiting or under way): what a caller
    /// spreading exchanges over several loops compares.
    public var unfinished: Int { handOff.waiting }

    /// What other threads hand the loop thread.
    private struct Queue {
        var incoming: [Transfer] = []
        var stopping = false
        /// Set by the loop thread just before it cleans the multi handle up: from then on nobody
        /// may wake it.
        var closed = false
    }

    // Owned by the loop thread.
    /// Transfers not yet started, oldest at `waitingHead` (the slots before it are spent).
    private var waiting: [Transfer] = []
    private var waitingHead = 0
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var idleHandles: [EasyHandle] = []

    /// Starts the owner thread.
    ///
    /// - Parameters:
    ///   - maxActive: how many exchanges may run at once; the rest wait their turn, and their
    ///     timeout starts only when they begin.
    ///   - name: the owner thread's name, as a debugger shows it.
    public init(maxActive: Int, name: String = "ipdirect.curl-multi") {
        Curl.initialise()
        guard let multi = curl_multi_init() else {
            fatalError("libcurl could not allocate a multi handle (out of memory)")
        }
        self.multi = multi
        self.maxActive = max(1, maxActive)
        detachThread(named: name) { [self] in run() }
    }

    /// Asks the thread to finish once nothing is running or waiting; transfers submitted after
    /// it has finished fail at once.
    public func stop() {
        queue.withLock { queue in
            queue.stopping = true
            if !queue.closed { curl_multi_wakeup(multi) }
        }
    }

    /// Performs one exchange on the loop thread.
    ///
    /// - Parameter spec: what to send.
    /// - Returns: what happened, failures included.
    public func perform(_ spec: TransferSpec) async -> TransferRecord {
        await handOff.value { delivery in
            let transfer = Transfer(spec: spec, delivery: delivery, departures: TransferDepartures.current)
            let queued = queue.withLock { queue in
                guard !queue.closed else { return false }
                queue.incoming.append(transfer)
                curl_multi_wakeup(multi)
                return true
            }
            if !queued {
                transfer.fail(CurlError(code: CURLE_FAILED_INIT, message: "the transfer loop has stopped"))
            }
        }
    }

    /// Performs one exchange and throws when it failed.
    ///
    /// - Parameter spec: what to send.
    /// - Returns: the record of a completed exchange (any HTTP status).
    /// - Throws: `CurlError`, with `refusedCertificate` set when the in-handshake check refused.
    public func fetch(_ spec: TransferSpec) async throws(CurlError) -> TransferRecord {
        let record = await perform(spec)
        if let failure = record.failure { throw failure }
        return record
    }

    private func run() {
        while true {
            let finished = queue.withLock { queue in
                if queue.stopping && queue.incoming.isEmpty && active.isEmpty && waitingHead == waiting.count {
                    queue.closed = true
                    return true
                }
                waiting.append(contentsOf: queue.incoming)
                queue.incoming.removeAll(keepingCapacity: true)
                return false
            }
            if finished { break }
            startWaiting()

            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            readFinished()
            if startWaiting() {
                curl_multi_perform(multi, &running)
                readFinished()
            }
            var ready: Int32 = 0
            curl_multi_poll(multi, nil, 0, active.isEmpty ? 1000 : 100, &ready)
        }
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
    }

    /// Starts waiting transfers up to the limit; returns whether any started.
    @discardableResult
    private func startWaiting() -> Bool {
        var started = false
        while active.count < maxActive && waitingHead < waiting.count {
            let transfer = waiting[waitingHead]
            waitingHead += 1
            let easy: EasyHandle
            if let idle = idleHandles.popLast() {
                easy = idle
            } else {
                do throws(CurlError) {
                    easy = try EasyHandle()
                } catch {
                    transfer.fail(error)
                    continue
                }
            }
            if let failure = transfer.configure(easy) {
                transfer.finish(code: failure)
                recycle(easy)
                continue
            }
            active[easy.raw] = transfer
            curl_multi_add_handle(multi, easy.raw)
            // From here on libcurl may send: what a caller that gave up reads to tell whether
            // the far side was ever asked.
            transfer.departures?.started()
            started = true
        }
        // Started transfers leave the queue. Emptying it only once it drains is not enough: a
        // batch keeps more transfers waiting than may run, so under load the queue never drains
        // and would keep every transfer it ever held, with its log and certificates (issue 13:
        // about 7 KB a URL, from the point a 100,000-URL run fell behind).
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
        } else if waitingHead >= 64 && waitingHead * 2 >= waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
        return started
    }

    private func readFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let raw = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(multi, raw)
            if let transfer = active.removeValue(forKey: raw) {
                transfer.finish(code: code)
                if let easy = transfer.easy { recycle(easy) }
            }
        }
    }

    /// Keeps a finished handle for the next transfer (reset to defaults), up to the limit.
    private func recycle(_ easy: EasyHandle) {
        guard idleHandles.count < maxActive else { return }
        easy.reset()
        idleHandles.append(easy)
    }
}

/// One exchange while it runs: the easy handle and what its callbacks collect.
/// Created by the submitting task, then lives on the loop thread only.
private final class Transfer {
    let spec: TransferSpec
    /// The waiting task, resumed through the loop's hand-off.
    private let delivery: HandOff.Delivery<TransferRecord>
    /// The submitting task's departures, marked when the loop starts the transfer.
    let departures: TransferDepartures?
    private(set) var easy: EasyHandle?
    private var check: UnsafeMutablePointer<ccurl_tls_check>?
    private var unmanaged: Unmanaged<Transfer>?
    private var startedAt = Date()
    private var startUptime: UInt64 = 0
    private let bodyCap: Int
    private var overflowed = false

    var requestLine: String?
    var requestHeaders: [HeaderField] = []
    var statusLine: String?
    var responseHeaders: [HeaderField] = []
    var body: [UInt8] = []
    var responseBytes = 0
    var log = CurlLog()

    init(spec: TransferSpec, delivery: HandOff.Delivery<TransferRecord>, departures: TransferDepartures?) {
        self.spec = spec
        self.delivery = delivery
        self.departures = departures
        switch spec.bodyLimit {
        case .keepFirst(let count), .failBeyond(let count): bodyCap = count
        }
    }

    deinit {
        if let check { ccurl_tls_check_free(check) }
    }

    /// Sets every option on `easy`; returns a failure code instead of throwing so the loop stays simple.
    func configure(_ easy: EasyHandle) -> CURLcode? {
        self.easy = easy
        startedAt = Date()
        startUptime = DispatchTime.now().uptimeNanoseconds
        do throws(CurlError) {
            try easy.set(CURLOPT_URL, spec.url)
            let timeout = max(1, Int(spec.timeout.inSeconds * 1000))
            try easy.set(CURLOPT_TIMEOUT_MS, timeout)
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, timeout)
            if spec.freshConnection {
                try easy.set(CURLOPT_FRESH_CONNECT, true)
                try easy.set(CURLOPT_FORBID_REUSE, true)
            }
            try easy.set(CURLOPT_SSL_SESSIONID_CACHE, false)
            // libcurl's receive buffer, held by each transfer under way: 4 KB instead of 16 still
            // takes most answers a probe or resolver reads in one piece, and a larger answer comes
            // in more reads (issue 34: /probe's peak memory).
            try easy.set(CURLOPT_BUFFERSIZE, Self.receiveBuffer)
            if spec.bypassProxy { try easy.set(CURLOPT_NOPROXY, "*") }
            if !spec.resolve.isEmpty { try easy.set(CURLOPT_RESOLVE, list: spec.resolve) }
            if let caFile = spec.caFile { try easy.set(CURLOPT_CAINFO, caFile) }
            try easy.set(CURLOPT_SSL_VERIFYHOST, spec.verifyHost ? 2 : 0)
            var lines = spec.headers.map { "\($0.name): \($0.value)" }
            // "Expect:" keeps libcurl from waiting for a 100 Continue some servers never send,
            // unless the caller asked for one.
            if spec.body != nil && !spec.headers.contains(where: { $0.name.lowercased() == "expect" }) {
                lines.append("Expect:")
            }
            if !lines.isEmpty { try easy.set(CURLOPT_HTTPHEADER, list: lines) }
            // libcurl copies an HTTPS request into an upload buffer before sending it (OpenSSL
            // wants the same bytes at the same address on a retry) and holds that buffer until
            // the transfer ends: 64 KB by default, under every transfer waiting for its answer
            // (issue 34). The smallest holds a request this small in one piece; a larger request
            // keeps the default, so its head still goes out, and is traced, in one piece.
            let requestBytes =
                spec.url.utf8.count + lines.reduce(0) { $0 + $1.utf8.count + 2 } + (spec.body?.count ?? 0)
            if requestBytes <= Self.smallRequestBytes {
                try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, Self.smallUploadBuffer)
            }
            switch spec.method {
            case "GET": break
            case "HEAD": try easy.set(CURLOPT_NOBODY, true)
            case "POST" where spec.body != nil: break
            default: try easy.set(CURLOPT_CUSTOMREQUEST, spec.method)
            }
            if let body = spec.body {
                try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count))
                // COPYPOSTFIELDS copies, so the body outlives this closure; an empty body still
                // needs a valid pointer.
                let bytes = body.isEmpty ? [0] : body
                try bytes.withUnsafeBufferPointer { buffer throws(CurlError) in
                    try easy.set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
                }
            }
            let box = Unmanaged.passRetained(self)
            unmanaged = box
            try easy.set(CURLOPT_WRITEDATA, pointer: box.toOpaque())
            try easy.set(CURLOPT_HEADERDATA, pointer: box.toOpaque())
            _ = ccurl_easy_setopt_write_function(easy.raw, CURLOPT_WRITEFUNCTION, Transfer.writeBody)
            _ = ccurl_easy_setopt_write_function(easy.raw, CURLOPT_HEADERFUNCTION, Transfer.writeHeader)
            if spec.trace {
                try easy.set(CURLOPT_DEBUGDATA, pointer: box.toOpaque())
                _ = ccurl_easy_setopt_debug_function(easy.raw, Transfer.debugLine)
                try easy.set(CURLOPT_VERBOSE, true)
            }
            let scheme = spec.url.utf8.prefix(6).map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
            if scheme.elementsEqual("https:".utf8) {
                // No check object (out of memory) means no name check: fail the transfer, never run it unchecked.
                guard let made = ccurl_tls_check_new(spec.checkName) else { return CURLE_OUT_OF_MEMORY }
                check = made
                let code = ccurl_easy_install_tls_check(easy.raw, made)
                if code != CURLE_OK && spec.checkName != nil { return code }
                // The hook hands the handshake a trust store parsed once, so libcurl is told to
                // load nothing: it would parse the whole CA bundle again for every connection.
                let trust = CABundle.libcurlDefaults
                if code == CURLE_OK && ccurl_tls_check_use_trust(made, spec.caFile ?? trust.file, trust.directory) == 1
                {
                    try easy.clear(CURLOPT_CAINFO)
                    try easy.clear(CURLOPT_CAPATH)
                }
            }
        } catch {
            return CURLcode(UInt32(error.code))
        }
        return nil
    }

    /// Resumes the waiting task with a failure that happened before libcurl ran.
    func fail(_ error: CurlError) {
        resume(record(failure: error))
    }

    /// Hands `record` to the waiting task (see TransferLoop.handOff).
    private func resume(_ record: TransferRecord) {
        delivery.deliver(record)
    }

    /// Reads the handle and resumes the waiting task.
    func finish(code: CURLcode) {
        defer {
            unmanaged?.release()
            unmanaged = nil
        }
        guard let easy else { return fail(CurlError(code, detail: nil)) }
        var tls: TLSObservation?
        if let check, check.pointee.ran == 1 {
            let sni: String? =
                check.pointee.sni_sent == 1
                ? withUnsafeBytes(of: check.pointee.sni) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                } : nil
            tls = TLSObservation(
                verifyError: check.pointee.verify_error, errorDepth: Int(check.pointee.error_depth),
                chain: Self.chain(check), sni: sni)
        }
        var failure: CurlError?
        if code != CURLE_OK {
            if overflowed {
                failure = CurlError(
                    code: CURLE_FILESIZE_EXCEEDED, message: "response body is larger than \(bodyCap) bytes")
            } else {
                let refused = tls.flatMap { $0.problem == nil ? nil : $0 }
                failure = easy.error(code, refusedCertificate: refused)
            }
        }
        var record = record(failure: failure)
        record.tls = tls
        let totalUs = easy.offset(CURLINFO_TOTAL_TIME_T)
        if let check {
            record.tlsVersion = check.pointee.version.map { String(cString: $0) }
            record.tlsStartUs = TransferRecord.sinceCurlStart(
                check.pointee.started_ns, totalUs: totalUs, now: DispatchTime.now().uptimeNanoseconds)
        }
        let remoteIP = easy.string(CURLINFO_PRIMARY_IP).flatMap { $0.isEmpty ? nil : $0 }
        record.remoteIP = remoteIP
        record.remotePort = remoteIP == nil ? nil : easy.long(CURLINFO_PRIMARY_PORT)
        record.status = easy.long(CURLINFO_RESPONSE_CODE)
        record.httpVersion = Self.versionText(easy.long(CURLINFO_HTTP_VERSION))
        record.requestBodyBytes = Int(easy.offset(CURLINFO_SIZE_UPLOAD_T))
        record.nameLookupUs = easy.offset(CURLINFO_NAMELOOKUP_TIME_T)
        record.connectUs = easy.offset(CURLINFO_CONNECT_TIME_T)
        record.appConnectUs = easy.offset(CURLINFO_APPCONNECT_TIME_T)
        record.preTransferUs = easy.offset(CURLINFO_PRETRANSFER_TIME_T)
        record.startTransferUs = easy.offset(CURLINFO_STARTTRANSFER_TIME_T)
        record.totalUs = totalUs
        resume(record)
    }

    private func record(failure: CurlError?) -> TransferRecord {
        TransferRecord(
            startedAt: startedAt, failure: failure, status: 0, httpVersion: nil, remoteIP: nil, remotePort: nil,
            requestLine: requestLine, requestHeaders: requestHeaders, requestBodyBytes: 0, statusLine: statusLine,
            responseHeaders: responseHeaders, responseBytes: responseBytes, body: body, nameLookupUs: 0,
            connectUs: 0, appConnectUs: 0, preTransferUs: 0, startTransferUs: 0, totalUs: 0, log: log, tls: nil)
    }

    /// The presented chain, leaf first, as DER byte arrays.
    private static func chain(_ check: UnsafeMutablePointer<ccurl_tls_check>) -> [[UInt8]] {
        let count = Int(check.pointee.chain_count)
        return withUnsafeBytes(of: check.pointee.chain) { raw in
            let ders = raw.bindMemory(to: ccurl_der.self)
            return (0..<count).compactMap { i in
                guard let bytes = ders[i].bytes else { return nil }
                return Array(UnsafeBufferPointer(start: bytes, count: ders[i].length))
            }
        }
    }

    private var elapsedMs: Double {
        Double(DispatchTime.now().uptimeNanoseconds - startUptime) / 1_000_000
    }

    private static func versionText(_ version: Int) -> String? {
        switch version {
        case CURL_HTTP_VERSION_1_0: "HTTP/1.0"
        case CURL_HTTP_VERSION_1_1: "HTTP/1.1"
        case CURL_HTTP_VERSION_2_0: "HTTP/2"
        case CURL_HTTP_VERSION_3: "HTTP/3"
        default: nil
        }
    }

    private static let logLimit = 400
    /// libcurl's receive buffer (`CURLOPT_BUFFERSIZE`; 16 KB by default).
    private static let receiveBuffer = 4 * 1024
    /// libcurl's smallest upload buffer (`CURLOPT_UPLOAD_BUFFERSIZE`, 16 KB).
    private static let smallUploadBuffer = 16 * 1024
    /// A request whose URL, headers and body come to at most this fits the small upload buffer
    /// with room for the header lines libcurl adds itself (Host, User-Agent, Accept).
    private static let smallRequestBytes = 8 * 1024

    static let writeBody: curl_write_callback = { data, size, count, user in
        // Never nil: `user` is the transfer set as CURLOPT_WRITEDATA; 0 would fail the transfer.
        guard let user else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
        let length = size * count
        transfer.responseBytes += length
        let room = transfer.bodyCap - transfer.body.count
        if case .failBeyond = transfer.spec.bodyLimit, length > room {
            transfer.overflowed = true
            return 0
        }
        if room > 0, let data {
            data.withMemoryRebound(to: UInt8.self, capacity: length) {
                transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(room, length)))
            }
        }
        return length
    }

    static let writeHeader: curl_write_callback = { data, size, count, user in
        // Never nil: `user` is the transfer set as CURLOPT_HEADERDATA; 0 would fail the transfer.
        guard let user else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
        let length = size * count
        guard let data else { return length }
        let line = LineBytes.trimmed(UnsafeRawBufferPointer(start: data, count: length))
        if line.starts(with: "HTTP/".utf8) {
            // A new response: after a 100 Continue only the final one counts.
            transfer.statusLine = String(decoding: line, as: UTF8.self)
            transfer.responseHeaders.removeAll()
        } else if let field = HeaderField(bytes: line) {
            transfer.responseHeaders.append(field)
        }
        return length
    }

    static let debugLine: curl_debug_callback = { _, type, data, size, user in
        guard let user, let data else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
        let kind: CurlLogLine.Kind
        switch type {
        case CURLINFO_TEXT: kind = .info
        case CURLINFO_HEADER_IN: kind = .headerIn
        case CURLINFO_HEADER_OUT: kind = .headerOut
        default: return 0  // data and raw TLS records are not kept
        }
        let at = transfer.elapsedMs
        // libcurl hands the request head over in one piece: its first line is the request line.
        var first = type == CURLINFO_HEADER_OUT
        LineBytes.forEachLine(UnsafeRawBufferPointer(start: data, count: size)) { line in
            if type == CURLINFO_HEADER_OUT {
                if first {
                    first = false
                    transfer.requestLine = String(decoding: line, as: UTF8.self)
                    transfer.requestHeaders.removeAll()
                } else if let field = HeaderField(bytes: line) {
                    transfer.requestHeaders.append(field)
                }
            }
            if transfer.log.count < logLimit { transfer.log.append(line, kind: kind, atMs: at) }
        }
        return 0
    }
}

/// Lines out of libcurl's buffers, split and trimmed on bytes: these callbacks run for every
/// header and log line of every request, so they stay clear of Foundation's string bridging.
enum LineBytes {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

    /// The buffer without surrounding white space and line ends.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end && isSpace(bytes[start]) { start += 1 }
        while end > start && isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// Calls `body` with the bytes of each non-empty trimmed line of the buffer.
    static func forEachLine(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            let line = trimmed(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            if !line.isEmpty { body(line) }
            start = end + 1
        }
    }
}

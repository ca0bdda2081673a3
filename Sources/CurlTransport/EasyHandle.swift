// One libcurl easy handle, owned by the transfer loop's thread and never shared between threads
// (the type is deliberately not Sendable). It keeps alive everything libcurl points into.
internal import CCurl

/// A libcurl easy handle with typed option setters and info getters.
final class EasyHandle {
    /// The raw `CURL *`, for the multi driver and the shim; never leaves this module.
    let raw: UnsafeMutableRawPointer
    private var lists: [CURLoption: UnsafeMutablePointer<curl_slist>] = [:]
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// Creates a handle with the error buffer attached and signals off (we own no SIGALRM).
    ///
    /// - Throws: `CurlError` when libcurl cannot allocate a handle.
    init() throws(CurlError) {
        Curl.initialise()
        guard let raw = curl_easy_init() else {
            throw CurlError(code: CURLE_OUT_OF_MEMORY, message: "libcurl could not create a handle")
        }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        setDefaults()
    }

    /// Every option back to libcurl's default, then ours, so the handle can serve another transfer.
    func reset() {
        // Each list is unhooked from libcurl before it is freed. curl_easy_reset forgets the
        // options but not libcurl's own pointer to a CURLOPT_RESOLVE list that was not read to
        // its end: 7.88 keeps it when it refuses an entry (a host name over 255 bytes), and the
        // handle's next transfer without pins then walked the freed list (issue 20: a 300-byte
        // label and a second URL, Bus error or SIGSEGV in libcurl about half the runs). Setting
        // the option to NULL clears that pointer too.
        for option in lists.keys { _ = ccurl_easy_setopt_ptr(raw, option, nil) }
        curl_easy_reset(raw)
        for list in lists.values { curl_slist_free_all(list) }
        lists.removeAll(keepingCapacity: true)
        errorBuffer[0] = 0
        setDefaults()
    }

    private func setDefaults() {
        _ = ccurl_easy_setopt_ptr(raw, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = ccurl_easy_setopt_long(raw, CURLOPT_NOSIGNAL, 1)
    }

    deinit {
        curl_easy_cleanup(raw)
        for list in lists.values { curl_slist_free_all(list) }
        errorBuffer.deallocate()
    }

    /// The detailed message libcurl left for the last failure, if any.
    var lastErrorMessage: String { String(cString: errorBuffer) }

    /// Turns a `CURLcode` into a `CurlError` carrying libcurl's detailed message.
    func error(_ code: CURLcode, refusedCertificate: TLSObservation? = nil) -> CurlError {
        var osErrno = 0
        _ = ccurl_easy_getinfo_long(raw, CURLINFO_OS_ERRNO, &osErrno)
        return CurlError(code, detail: lastErrorMessage, osErrno: osErrno, refusedCertificate: refusedCertificate)
    }

    private func check(_ code: CURLcode) throws(CurlError) {
        if code != CURLE_OK { throw error(code) }
    }

    // MARK: Options

    func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
        try check(ccurl_easy_setopt_long(raw, option, value))
    }

    func set(_ option: CURLoption, _ value: Bool) throws(CurlError) {
        try check(ccurl_easy_setopt_long(raw, option, value ? 1 : 0))
    }

    func set(_ option: CURLoption, offset value: Int64) throws(CurlError) {
        try check(ccurl_easy_setopt_off(raw, option, curl_off_t(value)))
    }

    /// Sets a string option; libcurl keeps its own copy.
    func set(_ option: CURLoption, _ value: String) throws(CurlError) {
        try refuseNUL(value)
        try check(ccurl_easy_setopt_string(raw, option, value))
    }

    /// Refuses text libcurl would cut at a NUL byte (a URL `https://a.example/\0...` requested
    /// as `https://a.example/`).
    private func refuseNUL(_ value: String) throws(CurlError) {
        guard let position = value.nulBytePosition else { return }
        throw CurlError(code: CURLE_BAD_FUNCTION_ARGUMENT, message: "the text holds a NUL byte (at byte \(position))")
    }

    /// Clears a string option, compiled-in default included (`CURLOPT_CAPATH` set to NULL).
    func clear(_ option: CURLoption) throws(CurlError) {
        try check(ccurl_easy_setopt_string(raw, option, nil))
    }

    /// Sets a list option (`CURLOPT_HTTPHEADER`, `CURLOPT_RESOLVE`, ...), replacing any
    /// earlier list for the same option; the handle keeps the list alive.
    func set(_ option: CURLoption, list values: [String]) throws(CurlError) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for value in values {
            do throws(CurlError) {
                try refuseNUL(value)
            } catch {
                curl_slist_free_all(list)
                throw error
            }
            list = curl_slist_append(list, value)
        }
        let code = ccurl_easy_setopt_ptr(raw, option, list)
        guard code == CURLE_OK else {
            // A refused list may still be libcurl's (see reset()): unhook it before freeing it.
            _ = ccurl_easy_setopt_ptr(raw, option, nil)
            curl_slist_free_all(list)
            throw error(code)
        }
        if let old = lists[option] { curl_slist_free_all(old) }
        lists[option] = list
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlError) {
        try check(ccurl_easy_setopt_ptr(raw, option, value))
    }

    // MARK: Info

    func long(_ info: CURLINFO) -> Int {
        var value = 0
        _ = ccurl_easy_getinfo_long(raw, info, &value)
        return value
    }

    func offset(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = ccurl_easy_getinfo_off(raw, info, &value)
        return Int64(value)
    }

    func double(_ info: CURLINFO) -> Double {
        var value = 0.0
        _ = ccurl_easy_getinfo_double(raw, info, &value)
        return value
    }

    func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard ccurl_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

extension CURLoption: @retroactive Hashable {}

// URLs as the probe uses them: parsed and rewritten with libcurl's URL API (`CurlURL`), so
// only the authority's host ever changes and path, query and port stay exactly as written.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution

/// Why a URL cannot be probed, in words a person reads.
public struct ProbeURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text as the user gave it.
    public let url: String
    /// What is wrong with it.
    public let reason: String

    public init(url: String, reason: String) {
        self.url = url
        self.reason = reason
    }

    /// The URL as the error quotes it: cut when long (`InputQuote`).
    public var quotedURL: String { InputQuote.quoted(url) }

    public var description: String { "\(quotedURL): \(reason)" }
}

/// An http or https URL the probe can request, its host in ASCII form.
///
/// The value keeps the URL as text; every operation parses it again with `CurlURL`, since a
/// libcurl URL handle is not safe to share between threads.
public struct ProbeURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as libcurl renders it, with the host in its ASCII (punycode) form.
    public let text: String
    /// `http` or `https`.
    public let scheme: String
    /// The host without brackets, ASCII, lowercased: what SNI, `Host` and the certificate use.
    public let host: String
    /// The port connected to (the scheme's default when none is written).
    public let port: Int
    /// Whether the URL names a port other than the scheme's default.
    public let hasExplicitPort: Bool
    /// The host when it is an IP address (`https://127.0.0.1/`): parsed once, here.
    public let literalHost: IPAddress?

    /// Parses a URL; one without a scheme means https.
    ///
    /// - Parameter input: what the user typed.
    /// - Returns: the parsed URL.
    /// - Throws: `ProbeURLError` for anything but a well-formed http or https URL with a host.
    public static func parse(_ input: String) throws(ProbeURLError) -> ProbeURL {
        let trimmed = input.trimmedSpaces
        guard !trimmed.isEmpty else { throw ProbeURLError(url: input, reason: "the URL is empty") }
        let url: CurlURL
        do {
            url = try CurlURL(trimmed, guessingScheme: true)
        } catch {
            throw ProbeURLError(url: input, reason: "not a valid URL (\(error.message))")
        }
        guard let scheme = url[.scheme]?.lowercased(), scheme == "http" || scheme == "https" else {
            throw ProbeURLError(url: input, reason: "only http and https URLs can be probed")
        }
        guard let typed = url[.host], !typed.isEmpty else {
            throw ProbeURLError(url: input, reason: "the URL has no host")
        }
        // DNS, SNI and certificates carry the ASCII form of an internationalised name. libcurl
        // 7.88's CURLU_PUNYCODE converts through the locale's charset (idn2_lookup_ul), which
        // fails in the C locale a tool usually runs in, so the conversion is done here.
        var host: String
        switch IDNA.convert(typed) {
        case .success(let ascii): host = ascii
        case .failure(let problem): throw ProbeURLError(url: input, reason: problem.description)
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // One trailing dot names the same host (DNS's absolute form): the probe uses the name
        // without it, so the HTTPDNS query, cache key, SNI, certificate check and Host agree.
        if host.hasSuffix("."), !host.hasSuffix("..") { host.removeLast() }
        guard !host.isEmpty else { throw ProbeURLError(url: input, reason: "the URL has no host") }
        try? url.set(.host, IPLiteral.authorityForm(host))
        try? url.set(.fragment, nil)
        let defaultPort = scheme == "https" ? 443 : 80
        let written = url[.port].flatMap { Int($0) }
        guard let text = url.text else {
            throw ProbeURLError(url: input, reason: "libcurl could not render the URL")
        }
        return ProbeURL(
            text: text, scheme: scheme, host: host.lowercased(), port: written ?? defaultPort,
            hasExplicitPort: written != nil && written != defaultPort)
    }

    private init(text: String, scheme: String, host: String, port: Int, hasExplicitPort: Bool) {
        self.text = text
        self.scheme = scheme
        self.host = host
        self.port = port
        self.hasExplicitPort = hasExplicitPort
        literalHost = IPAddress(host)
    }

    public var description: String { text }

    /// Whether the URL is https.
    public var isHTTPS: Bool { scheme == "https" }

    /// Whether the host is already an IP address.
    public var hostIsIPLiteral: Bool { literalHost != nil }

    /// The `Host` header value: the name, with the port when it is not the scheme's default.
    public var hostHeader: String {
        let name = IPLiteral.authorityForm(host)
        return hasExplicitPort ? "\(name):\(port)" : name
    }

    /// The `CURLOPT_RESOLVE` entry pinning this URL's host and port to an address.
    public func resolvePin(to ip: IPAddress) -> String {
        "\(host):\(port):\(ip.authorityForm)"
    }

    /// The same URL with the authority's host replaced by an IP (bracketed when IPv6).
    /// Path, query and port stay as they are, even when they contain the host name.
    ///
    /// - Parameter ip: the address.
    /// - Returns: the rewritten URL as text.
    /// - Throws: `ProbeURLError` when the address cannot be put in the URL. Never the URL
    ///   unchanged instead: a "direct" request to the host name would silently use system DNS.
    public func replacingHost(with ip: IPAddress) throws(ProbeURLError) -> String {
        do {
            let url = try CurlURL(text)
            try url.set(.host, ip.authorityForm)
            guard let rewritten = url.text else {
                throw ProbeURLError(url: text, reason: "libcurl could not render the URL with \(ip) as its host")
            }
            return rewritten
        } catch let error as ProbeURLError {
            throw error
        } catch {
            throw ProbeURLError(url: text, reason: "cannot put \(ip) in the URL as its host (\(error))")
        }
    }

    /// Resolves a `Location` value (absolute or relative) against this URL.
    ///
    /// - Parameter location: the header value.
    /// - Returns: the URL to go to next.
    /// - Throws: `ProbeURLError` when the result is not an http or https URL.
    public func resolving(_ location: String) throws(ProbeURLError) -> ProbeURL {
        let url: CurlURL
        do {
            url = try CurlURL(text)
        } catch {
            throw ProbeURLError(url: location, reason: "cannot resolve against \(text)")
        }
        do {
            try url.resolve(location)
        } catch {
            throw ProbeURLError(url: location, reason: "not a valid redirect target (\(error.message))")
        }
        guard let next = url.text else {
            throw ProbeURLError(url: location, reason: "not a valid redirect target (libcurl could not render it)")
        }
        return try ProbeURL.parse(next)
    }

    /// The path and query as written (`/a/b?x=1`), for moving a URL onto another base.
    public var pathAndQuery: String {
        guard let url = try? CurlURL(text) else { return "/" }
        let path = url[.path] ?? "/"
        return url[.query].map { "\(path)?\($0)" } ?? path
    }

    /// The query as name/value pairs, for HAR's `queryString`.
    public var queryItems: [HeaderField] {
        guard let query = (try? CurlURL(text))?[.query] else { return [] }
        return QueryString.pairs(query[...]).filter { !$0.name.isEmpty || $0.value != nil }.map { pair in
            HeaderField(name: Self.percentDecoded(pair.name), value: pair.value.map(Self.percentDecoded) ?? "")
        }
    }

    /// Percent-decoded, or as written when that fails. Text without a `%` is already decoded:
    /// Foundation is not asked (every probed URL's query passes here for redaction).
    private static func percentDecoded(_ text: Substring) -> String {
        let written = String(text)
        guard text.utf8.contains(UInt8(ascii: "%")) else { return written }
        return written.percentDecoded ?? written
    }

    /// Where the `://` after a URL's scheme is, found on bytes (Foundation's `range(of:)` was
    /// a percent of a probe's CPU, asked for every hop's redaction and reproduce command).
    static func schemeSeparator(in text: String) -> Range<String.Index>? {
        let utf8 = text.utf8
        var start = utf8.startIndex
        while let colon = utf8[start...].firstIndex(of: UInt8(ascii: ":")) {
            if utf8[colon...].starts(with: "://".utf8) { return colon..<utf8.index(colon, offsetBy: 3) }
            start = utf8.index(after: colon)
        }
        return nil
    }
}

/// Internationalised host names to their ASCII form: each label lowercased, composed (NFC)
/// and Punycode-encoded (RFC 3492) with the `xn--` prefix. This is IDNA's core; the full
/// UTS 46 mapping table is not applied.
public enum IDNA {
    /// Why a host name has no ASCII form, as the end of a sentence about the URL.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// DNS allows at most this many octets in one label.
    static let maxLabelOctets = 63
    /// And this many in a whole name written as text, without its trailing dot (255 on the wire).
    static let maxNameOctets = 253

    /// The ASCII form of a host name; nil when a label cannot be encoded.
    public static func ascii(_ host: String) -> String? {
        try? convert(host).get()
    }

    /// The ASCII form of a host name, or why there is none: a label that cannot be encoded, or
    /// a name longer than DNS allows (no resolver can answer for it, and libcurl refuses to pin
    /// a name over 255 bytes, so it is refused here, before any resolution).
    public static func convert(_ host: String) -> Result<String, Problem> {
        let ascii: String
        if host.unicodeScalars.contains(where: { !$0.isASCII }) {
            switch encoded(host) {
            case .success(let name): ascii = name
            case .failure(let problem): return .failure(problem)
            }
        } else {
            ascii = host
        }
        if let problem = lengthProblem(ascii) { return .failure(problem) }
        return .success(ascii)
    }

    /// Why an ASCII name is longer than DNS allows; nil when it is not.
    static func lengthProblem(_ name: String) -> Problem? {
        let written = name.hasSuffix(".") ? name.utf8.dropLast() : name.utf8[...]
        for label in written.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        where label.count > maxLabelOctets {
            return Problem(
                description:
                    "the host name label '\(String(decoding: label.prefix(20), as: UTF8.self))…' is \(label.count) bytes, longer than \(maxLabelOctets) (the most DNS allows in one label); check the name"
            )
        }
        guard written.count <= maxNameOctets else {
            return Problem(
                description:
                    "the host name is \(written.count) bytes, longer than \(maxNameOctets) (the most DNS allows in a name); check the name"
            )
        }
        return nil
    }

    /// Each label not in ASCII punycode-encoded.
    private static func encoded(_ host: String) -> Result<String, Problem> {
        let labels = host.canonicallyComposed.lowercased()
            .split(separator: ".", omittingEmptySubsequences: false)
        var out: [String] = []
        for label in labels {
            if label.unicodeScalars.allSatisfy(\.isASCII) {
                out.append(String(label))
                continue
            }
            // Every code point takes at least one octet after "xn--", and encoding is quadratic
            // in the label's length: a label that cannot fit is refused before the work.
            guard "xn--".utf8.count + label.unicodeScalars.count <= maxLabelOctets,
                let encoded = punycode(String(label)), "xn--".utf8.count + encoded.utf8.count <= maxLabelOctets
            else {
                return .failure(
                    Problem(
                        description:
                            "the host name label '\(label.prefix(20))…' is longer than \(maxLabelOctets) octets in its ASCII (punycode) form, more than DNS allows; check the name"
                    ))
            }
            out.append("xn--" + encoded)
        }
        return .success(out.joined(separator: "."))
    }

    /// RFC 3492 encoding of one label.
    static func punycode(_ label: String) -> String? {
        let base = 36
        let tMin = 1
        let tMax = 26
        let points = label.unicodeScalars.map { Int($0.value) }
        var output = points.filter { $0 < 0x80 }.map { Character(Unicode.Scalar(UInt8($0))) }
        let basic = output.count
        var handled = basic
        if basic > 0 { output.append("-") }
        var n = 128
        var delta = 0
        var bias = 72
        func digit(_ d: Int) -> Character {
            Character(Unicode.Scalar(UInt8(d < 26 ? 97 + d : 22 + d)))
        }
        func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
            var delta = first ? delta / 700 : delta / 2
            delta += delta / count
            var k = 0
            while delta > ((base - tMin) * tMax) / 2 {
                delta /= base - tMin
                k += base
            }
            return k + (base - tMin + 1) * delta / (delta + 38)
        }
        while handled < points.count {
            guard let next = points.filter({ $0 >= n }).min() else { return nil }
            let (step, overflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow else { return nil }
            delta += step
            n = next
            for point in points {
                if point < n { delta += 1 }
                guard point == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, handled + 1, handled == basic)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(output)
    }
}

// The proxy variables curl honours (http_proxy, HTTPS_PROXY, ALL_PROXY, NO_PROXY, both cases), read
// the way curl reads them, so the doctor can say which request a proxy would carry.

import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe

/// The proxy settings of an environment, as curl applies them to a URL.
struct ProxyVariables: Sendable, Equatable {
    /// A proxy variable that is set, with its value (a URL that may hold a password).
    struct Setting: Sendable, Equatable {
        var name: String
        var value: String

        /// `NAME=value` with any password in the value hidden, also in curl's scheme-less form
        /// (`user:password@proxy:3128`, which curl reads as http).
        var shown: String { "\(name)=\(ProxyVariables.hidingPassword(value))" }
    }

    /// A proxy value with everything between the user's `:` and the last `@` hidden.
    ///
    /// curl reads a proxy as `[scheme://][user[:password]@]host[:port]`, and a password written
    /// unescaped may hold any of `#`, `/`, `?`, `@`, `:` or `://` (curl then misreads or refuses
    /// it, but it is still the password): a URL parser that ends the authority at `/` or `#`
    /// shows the rest. So the user information here runs to the last `@` of the whole value,
    /// after the scheme (letters, digits, `+-.` before `://` at the start), and a proxy that
    /// has a path with an `@` (nobody's) hides too much rather than too little.
    static func hidingPassword(_ value: String) -> String {
        var rest = value[...]
        if let separator = value.firstRange(of: "://"),
            let first = value.first, first.isASCII && first.isLetter,
            value[..<separator.lowerBound].allSatisfy({
                $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0))
            })
        {
            rest = value[separator.upperBound...]
        }
        guard let at = rest.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else { return value }
        return String(value[...colon]) + Redaction.marker + String(value[at...])
    }

    /// Every proxy and no-proxy variable that is set and not empty, in the order curl looks.
    var settings: [Setting]
    /// The NO_PROXY entries (lowercase, blanks and leading dots trimmed).
    var noProxy: [String]

    /// The variables curl reads, in the order it prefers them: for a scheme, the lowercase
    /// `scheme_proxy`, then (except for http, which curl refuses uppercase since httpoxy) the
    /// uppercase one; then `all_proxy`, `ALL_PROXY`.
    static func names(forScheme scheme: String) -> [String] {
        let lower = scheme.lowercased() + "_proxy"
        return (scheme.lowercased() == "http" ? [lower] : [lower, lower.uppercased()]) + ["all_proxy", "ALL_PROXY"]
    }

    static let noProxyNames = ["no_proxy", "NO_PROXY"]

    init(_ environment: [String: String]) {
        let names =
            ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] + Self.noProxyNames
        settings = names.compactMap { name in
            guard let value = environment[name]?.trimmingWhitespace(), !value.isEmpty else {
                return nil
            }
            return Setting(name: name, value: value)
        }
        // curl takes no_proxy, then NO_PROXY: the first that is set.
        let list = Self.noProxyNames.lazy.compactMap { environment[$0] }.first ?? ""
        noProxy = list.split(whereSeparator: { $0 == "," || $0 == " " }).map {
            var entry = $0.trimmingWhitespace().lowercased()
            while entry.hasPrefix(".") { entry.removeFirst() }
            return entry
        }.filter { !$0.isEmpty }
    }

    /// The proxy variable curl would send a request for `host` over `scheme` through; nil when
    /// none is set for the scheme or NO_PROXY covers the host.
    func proxy(scheme: String, host: String) -> Setting? {
        guard !bypasses(host) else { return nil }
        for name in Self.names(forScheme: scheme) {
            if let setting = settings.first(where: { $0.name == name }) { return setting }
        }
        return nil
    }

    /// Whether NO_PROXY covers `host` as curl matches it: `*` covers every host; an entry covers
    /// the host itself and every name under it (`example.com` and `.example.com` both cover
    /// `api.example.com`); an address range (`10.0.0.0/8`) covers the addresses inside it.
    func bypasses(_ host: String) -> Bool {
        let name = host.lowercased().trimming(charactersIn: "[].")
        return noProxy.contains { entry in
            if entry == "*" || entry == name { return true }
            if let address = IPAddress(name) { return Self.range(entry, contains: address) }
            return name.hasSuffix("." + entry)
        }
    }

    /// Whether `entry`, a `address/bits` range, holds `address`.
    private static func range(_ entry: String, contains address: IPAddress) -> Bool {
        let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2, let base = IPAddress(parts[0]), base.family == address.family,
            let bits = Int(parts[1]), bits >= 0, bits <= (address.family == .v4 ? 32 : 128)
        else { return false }
        let (a, b) = (IPBytes.of(base), IPBytes.of(address))
        for bit in 0..<bits where (a[bit / 8] ^ b[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 { return false }
        return true
    }
}

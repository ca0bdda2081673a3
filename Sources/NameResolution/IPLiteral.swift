// Validation of IP literals: every address an HTTPDNS service returns is untrusted input
// and must parse as IPv4 or IPv6 before it reaches a URL, CURLOPT_RESOLVE or the cache.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IP address literal that `inet_pton` accepted.
public enum IPLiteral {
    /// The family `text` parses as, or nil when it is not an IP literal at all.
    ///
    /// Zone suffixes (`fe80::1%eth0`), brackets, ports, spaces and anything else
    /// `inet_pton` refuses are refused here too.
    public static func family(of text: String) -> IPFamily? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return .v4 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return .v6 }
        return nil
    }

    /// Whether `text` is an IP literal of exactly this family.
    public static func isValid(_ text: String, family: IPFamily) -> Bool {
        Self.family(of: text) == family
    }

    /// Splits untrusted strings into the addresses of `family` and everything else.
    ///
    /// An address of the other family counts as junk too: a service that puts an IPv6
    /// address in its IPv4 list is not to be trusted with either.
    ///
    /// - Returns: the valid addresses (duplicates dropped, order kept) and the rejected strings.
    public static func screen(_ candidates: [String], family: IPFamily) -> (valid: [String], rejected: [String]) {
        var valid: [String] = []
        var rejected: [String] = []
        for raw in candidates {
            let text = raw.trimmingCharacters(in: .whitespaces)
            if isValid(text, family: family) {
                if !valid.contains(text) { valid.append(text) }
            } else {
                rejected.append(raw)
            }
        }
        return (valid, rejected)
    }

    /// A short, printable rendering of a rejected string for messages (no control bytes, capped).
    static func quoted(_ junk: String) -> String {
        let printable = junk.unicodeScalars.map { $0.properties.isWhitespace || $0.value >= 0x20 ? String($0) : "?" }
            .joined()
        let capped = printable.count > 60 ? String(printable.prefix(60)) + "..." : printable
        return "'\(capped)'"
    }
}

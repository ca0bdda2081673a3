// Validation of IP literals: every address an HTTPDNS service returns is untrusted input
// and must parse as IPv4 or IPv6 before it reaches a URL, CURLOPT_RESOLVE or the cache.
import FoundationEssentials
import FoundationGaps

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// IP address literals: the one check for "is this text an IP address" in the tree.
///
/// Strict, because the text comes from servers under test: a literal is made of address
/// characters only (hex digits, `.`, `:`) and round-trips through `inet_pton` and
/// `inet_ntop` (case aside). So `"1.2.3.4\u{0}junk"`, which `inet_pton` alone accepts because
/// it stops at the NUL, is refused, and so are zone suffixes, brackets, ports, spaces and
/// non-canonical spellings such as `0:0:0:0:0:0:0:1`.
public enum IPLiteral {
    /// `text` as an address, or nil when it is not an IP literal at all: the one parser every
    /// address from outside goes through (`IPAddress.init?(_:)` is this).
    static func parse(_ text: String) -> IPAddress? {
        guard !text.isEmpty, text.utf8.count <= 45, text.utf8.allSatisfy(isAddressByte) else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return canonical(text, family: AF_INET, address: v4, length: INET_ADDRSTRLEN).map {
                IPAddress(checked: $0, family: .v4)
            }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return canonical(text, family: AF_INET6, address: v6, length: INET6_ADDRSTRLEN).map {
                IPAddress(checked: $0, family: .v6)
            }
        }
        return nil
    }

    /// The family `text` parses as, or nil when it is not an IP literal at all.
    public static func family(of text: String) -> IPFamily? { parse(text)?.family }

    /// A host as a URL's authority or a `host:port` writes it: an IPv6 literal in brackets
    /// (`[::1]`), a name or an IPv4 literal as it is; text already in brackets is left alone.
    public static func authorityForm(_ host: String) -> String {
        host.utf8.contains(UInt8(ascii: ":")) && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// `host:port` with the host in its authority form: `127.0.0.1:53`, `[::1]:53`.
    public static func hostPort(_ host: String, port: Int) -> String { "\(authorityForm(host)):\(port)" }

    /// Reads what `hostPort` writes, the port optional: `host`, `host:port`, `[v6]`, `[v6]:port`,
    /// and a bare IPv6 literal (more than one colon) as all host. The host comes without
    /// brackets; the port as written (nil when there is none), for the caller to range-check.
    /// nil when a bracket is left open or something other than `:port` follows it.
    public static func splitHostPort(_ text: String) -> (host: String, port: String?)? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":") else { return nil }
            return (host, String(rest.dropFirst()))
        }
        guard let colon = text.firstIndex(of: ":"), text.lastIndex(of: ":") == colon else { return (text, nil) }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// Whether `text` is a link-local address (169.254.0.0/16, fe80::/10, or the IPv4 range
    /// carried in IPv6: `reachedAddress`) or a cloud metadata address outside those (Alibaba Cloud's
    /// 100.100.100.200, AWS's fd00:ec2::254): where a redirect could lead a prober to a host's
    /// instance credentials. Any spelling `inet_pton` reads counts, a zone (`%eth0`) ignored;
    /// false for text that is not an address.
    public static func isLinkLocalOrMetadata(_ text: String) -> Bool {
        let address = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard !address.isEmpty, address.utf8.count <= 45, address.utf8.allSatisfy(isAddressByte) else { return false }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(address), &v4) == 1 {
            return isLinkLocalOrMetadata(v4: withUnsafeBytes(of: v4) { Array($0) })
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(address), &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return true }
        let reached = reachedAddress(bytes)
        if reached.count == 4 { return isLinkLocalOrMetadata(v4: reached) }
        return bytes == [0xFD, 0x00, 0x0E, 0xC2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54]
    }

    /// The address 4 or 16 bytes reach: an IPv6 address carrying an IPv4 one that the kernel may
    /// carry over IPv4 is that IPv4 address (`::ffff:a.b.c.d` mapped, which a dual-stack socket
    /// sends to a.b.c.d, and, to be safe, `::ffff:0:a.b.c.d` translated and `::a.b.c.d`
    /// compatible, but `::` and `::1`); anything else, NAT64's 64:ff9b::/96 included (routed as
    /// IPv6, to a translator), is itself. Every check of where an address leads asks this one rule.
    public static func reachedAddress(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count == 16, bytes[0..<8].allSatisfy({ $0 == 0 }) else { return bytes }
        let v4 = Array(bytes[12...])
        switch Array(bytes[8..<12]) {
        case [0, 0, 0xFF, 0xFF], [0xFF, 0xFF, 0, 0]: return v4
        case [0, 0, 0, 0] where v4 != [0, 0, 0, 0] && v4 != [0, 0, 0, 1]: return v4
        default: return bytes
        }
    }

    private static func isLinkLocalOrMetadata(v4 bytes: [UInt8]) -> Bool {
        (bytes[0] == 169 && bytes[1] == 254) || bytes == [100, 100, 100, 200]
    }

    /// Hex digits, `.` and `:`: the only bytes an address literal has.
    private static func isAddressByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: "."), UInt8(ascii: ":"):
            true
        default: false
        }
    }

    /// The text `inet_ntop` writes for 4 or 16 address bytes; "" for any other count.
    public static func text(ofBytes bytes: [UInt8]) -> String {
        guard bytes.count == 4 || bytes.count == 16 else { return "" }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard bytes.withUnsafeBytes({ inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }) != nil
        else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What `inet_ntop` writes for the parsed address, when that is `text` (ignoring case):
    /// the canonical text, else nil.
    private static func canonical<Address>(
        _ text: String, family: Int32, address: Address, length: Int32
    ) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(length))
        let written = withUnsafeBytes(of: address) { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(length))
        }
        guard written != nil else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let canonical = String(decoding: bytes, as: UTF8.self)
        return canonical.lowercased() == text.lowercased() ? canonical : nil
    }

    /// Splits untrusted strings into the addresses of `family` and everything else.
    ///
    /// An address of the other family counts as junk too: a service that puts an IPv6
    /// address in its IPv4 list is not to be trusted with either. Blanks around an address are
    /// forgiven; an address written twice (in any case) is kept once.
    ///
    /// - Returns: the valid addresses (duplicates dropped, order kept) and the rejected strings.
    public static func screen(_ candidates: [String], family: IPFamily) -> (valid: [IPAddress], rejected: [String]) {
        var valid: [IPAddress] = []
        var rejected: [String] = []
        valid.reserveCapacity(candidates.count)
        for raw in candidates {
            // Most lists are clean: the trimmed copy is made only for text that does not parse as it is.
            if let address = parse(raw) ?? parse(raw.trimmingWhitespace()), address.family == family {
                if !valid.contains(address) { valid.append(address) }
            } else {
                rejected.append(raw)
            }
        }
        return (valid, rejected)
    }
}

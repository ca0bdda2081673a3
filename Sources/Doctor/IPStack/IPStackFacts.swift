// What the IP stack check reads off this machine: its addresses (getifaddrs), its default routes
// (/proc/net/route, /proc/net/ipv6_route), the SDKs' stack detection, and RFC 7050's NAT64 prefix.

import FoundationEssentials
import NameResolution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One address configured on an interface.
struct InterfaceAddress: Sendable, Equatable {
    var interface: String
    var address: IPAddress

    /// Loopback (127/8, ::1) and link-local (169.254/16, fe80::/10) addresses reach nothing beyond
    /// this machine's link: the stack a client sees is the other addresses.
    var isGlobal: Bool {
        let bytes = IPBytes.of(address)
        switch address.family {
        case .v4: return bytes[0] != 127 && !(bytes[0] == 169 && bytes[1] == 254)
        case .v6: return bytes != IPBytes.loopbackV6 && !(bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80)
        }
    }

    /// Every address of every interface that is up.
    static func all() -> [InterfaceAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var found: [InterfaceAddress] = []
        var node = list
        while let entry = node {
            defer { node = entry.pointee.ifa_next }
            guard let socket = entry.pointee.ifa_addr, entry.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            let family = Int32(socket.pointee.sa_family)
            let text: String?
            if family == AF_INET {
                text = socket.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    IPBytes.text(withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) })
                }
            } else if family == AF_INET6 {
                text = socket.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    IPBytes.text(withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) })
                }
            } else {
                continue
            }
            guard let address = text.flatMap(IPAddress.init) else { continue }
            found.append(InterfaceAddress(interface: String(cString: entry.pointee.ifa_name), address: address))
        }
        return found
    }
}

/// A default route of the kernel's table.
struct DefaultRoute: Sendable, Equatable {
    var family: IPFamily
    var interface: String
    /// The next hop; nil for a route straight onto the link.
    var gateway: IPAddress?

    /// The default routes of `/proc/net/route`'s text: destination and mask 0, up.
    static func ipv4(routeTable text: String) -> [DefaultRoute] {
        text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000",
                let flags = Int(fields[3], radix: 16), flags & routeUp != 0,
                let gateway = UInt32(fields[2], radix: 16)
            else { return nil }
            // The kernel writes the address in host order, which is little-endian here.
            let bytes = withUnsafeBytes(of: gateway.littleEndian) { Array($0) }
            return DefaultRoute(
                family: .v4, interface: fields[0],
                gateway: gateway == 0 ? nil : IPBytes.text(bytes).flatMap(IPAddress.init))
        }
    }

    /// The default routes of `/proc/net/ipv6_route`'s text: `::/0`, up, not a reject route (the
    /// kernel keeps an unreachable `::/0` on `lo` on every machine).
    static func ipv6(routeTable text: String) -> [DefaultRoute] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard fields.count >= 10, fields[0] == String(repeating: "0", count: 32), fields[1] == "00",
                let flags = Int(fields[8], radix: 16), flags & routeUp != 0, flags & routeReject == 0
            else { return nil }
            let hop = IPBytes.parseHex(fields[4])
            let gateway = hop.flatMap { $0.allSatisfy { $0 == 0 } ? nil : IPBytes.text($0) }.flatMap(IPAddress.init)
            return DefaultRoute(family: .v6, interface: fields[9], gateway: gateway)
        }
    }

    /// `RTF_UP` and `RTF_REJECT` (linux/route.h).
    private static let routeUp = 0x0001
    private static let routeReject = 0x0200

    /// This machine's default routes, both families; a table that cannot be read gives none.
    static func all() -> [DefaultRoute] {
        let v4 = (try? TextFile.contents(of: "/proc/net/route")).map(ipv4(routeTable:)) ?? []
        let v6 = (try? TextFile.contents(of: "/proc/net/ipv6_route")).map(ipv6(routeTable:)) ?? []
        return v4 + v6
    }

    var sentence: String {
        "via " + (gateway.map { "\($0) on \(interface)" } ?? interface)
    }
}

/// What the Alibaba SDKs' IP stack detection decides, done their way: a UDP socket connected to
/// a public address of each family (8.8.8.8 and 2000::), which sends nothing and fails at once
/// where the family has no route (iOS `HttpdnsIpStackDetector`, the C SDK's `net_stack_detector`).
enum SDKStackDetection: String, Sendable {
    case dual, ipv4Only = "IPv4-only", ipv6Only = "IPv6-only", unknown

    /// The addresses the SDKs connect to.
    static let probeV4 = "8.8.8.8"
    static let probeV6 = "2000::"

    static func detect() -> SDKStackDetection {
        switch (connects(probeV4), connects(probeV6)) {
        case (true, true): return .dual
        case (true, false): return .ipv4Only
        case (false, true): return .ipv6Only
        case (false, false): return .unknown
        }
    }

    /// The query type the SDKs then send with the automatic type (iOS 3.x
    /// `determineLegitQueryIpType`): A and AAAA for dual and IPv6-only, A alone otherwise.
    var asksAAAA: Bool { self == .dual || self == .ipv6Only }

    /// `q=4` or `q=4,6`, as the v2 API writes it.
    var queryType: String { asksAAAA ? "4,6" : "4" }

    /// Whether a UDP socket connects to `text` (port 80, as the SDKs use); no packet is sent.
    static func connects(_ text: String) -> Bool {
        IPAddress(text).map { UDPRoute.connects(to: $0, port: 80) } ?? false
    }
}

/// A NAT64 prefix found the RFC 7050 way: the AAAA answer for `ipv4only.arpa` holds one of the
/// well-known IPv4 addresses (192.0.0.170, 192.0.0.171) at a position RFC 6052 allows.
struct NAT64Prefix: Sendable, Equatable, CustomStringConvertible {
    /// The prefix's bytes, zero past `length`.
    var bytes: [UInt8]
    /// 32, 40, 48, 56, 64 or 96 bits.
    var length: Int

    /// RFC 7050's discovery name.
    static let discoveryName = "ipv4only.arpa"
    private static let wellKnown: [[UInt8]] = [[192, 0, 0, 170], [192, 0, 0, 171]]

    /// The byte positions of the embedded IPv4 address for each prefix length (RFC 6052 2.2:
    /// bits 64 to 71, byte 8, are always skipped).
    private static let positions: [(length: Int, at: [Int])] = [
        (96, [12, 13, 14, 15]), (64, [9, 10, 11, 12]), (56, [7, 9, 10, 11]), (48, [6, 7, 9, 10]),
        (40, [5, 6, 7, 9]), (32, [4, 5, 6, 7]),
    ]

    /// The prefix an answer of `ipv4only.arpa` reveals; nil when no address holds a well-known one.
    static func derive(from answers: [IPAddress]) -> NAT64Prefix? {
        for address in answers where address.family == .v6 {
            let bytes = IPBytes.of(address)
            for (length, at) in positions where wellKnown.contains(at.map { bytes[$0] }) {
                var prefix = [UInt8](repeating: 0, count: 16)
                for index in 0..<(length / 8) { prefix[index] = bytes[index] }
                return NAT64Prefix(bytes: prefix, length: length)
            }
        }
        return nil
    }

    /// `v4` as a client behind this NAT64 reaches it: embedded in the prefix (RFC 6052 2.2).
    func synthesize(_ v4: IPAddress) -> IPAddress? {
        guard v4.family == .v4, let at = Self.positions.first(where: { $0.length == length })?.at else { return nil }
        var out = bytes
        for (index, byte) in zip(at, IPBytes.of(v4)) { out[index] = byte }
        return IPBytes.text(out).flatMap(IPAddress.init)
    }

    var description: String { (IPBytes.text(bytes) ?? "?") + "/\(length)" }
}

/// Addresses as bytes and back, through inet_pton and inet_ntop.
enum IPBytes {
    static let loopbackV6: [UInt8] = Array(repeating: 0, count: 15) + [1]

    /// The address's 4 or 16 bytes.
    static func of(_ address: IPAddress) -> [UInt8] {
        if address.family == .v4 {
            var raw = in_addr()
            _ = inet_pton(AF_INET, address.text, &raw)
            return withUnsafeBytes(of: raw) { Array($0) }
        }
        var raw = in6_addr()
        _ = inet_pton(AF_INET6, address.text, &raw)
        return withUnsafeBytes(of: raw) { Array($0) }
    }

    /// The text of 4 or 16 address bytes; nil for any other count.
    static func text(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes {
            inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, $0.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// 32 hex digits (as /proc writes an IPv6 address) as 16 bytes.
    static func parseHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 32 else { return nil }
        var out: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            out.append(byte)
        }
        return out
    }
}

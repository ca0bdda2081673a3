// What `/probe` may reach (`--probe-allow`): address ranges and host globs, checked against the
// target's name and every address resolution gives, so an HTTPDNS answer cannot lead elsewhere.
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The targets `/probe` may probe. Empty allows any name and address except the link-local and
/// cloud metadata ones, which only an entry naming that very address allows.
///
/// Otherwise a name is allowed when a glob matches it (any name when only ranges are given: its
/// addresses decide); an address the requester wrote (a literal target, a redirect's literal
/// `Location`, `dns_server=`) only when a range holds it, so globs alone allow no literal; an
/// address resolution answered for an allowed name when a range holds it, or, with globs alone,
/// because the glob allowed the name.
public struct ProbeAllowList: Sendable, Equatable {
    /// An address range: the network's bytes and how many leading bits count.
    struct Range: Sendable, Equatable {
        var bytes: [UInt8]
        var bits: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            for index in 0..<bytes.count {
                let take = min(max(bits - index * 8, 0), 8)
                let mask: UInt8 = take == 0 ? 0 : ~UInt8(0) << (8 - take)
                if address[index] & mask != bytes[index] & mask { return false }
            }
            return true
        }
    }

    private(set) var ranges: [Range] = []
    private(set) var globs: [String] = []
    /// Addresses written out whole (`169.254.169.254`, `fd00:ec2::254/128`): only these open a
    /// metadata address.
    private(set) var named: [[UInt8]] = []

    /// No entries: anything but the link-local and metadata addresses.
    public init() {}

    /// Reads `--probe-allow` entries: `10.0.0.0/8`, `2001:db8::/32`, `127.0.0.1`, `*.example.com`,
    /// `api.example.com`.
    ///
    /// - Throws: `AgentSettingError` naming an entry that is none of these.
    public init(parsing entries: [String]) throws(AgentSettingError) {
        for entry in entries.flatMap({ $0.split(separator: ",") }).map({ $0.trimmingWhitespace() })
        where !entry.isEmpty {
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            if let bytes = Self.bytes(String(parts[0])) {
                let bits = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
                guard let bits, (0...(bytes.count * 8)).contains(bits) else {
                    throw AgentSettingError(
                        .probeAllow, value: entry, ": the prefix length must be 0 to \(bytes.count * 8)")
                }
                // ::ffff:10.0.0.0/104 names 10.0.0.0/8: addresses of that form are judged as IPv4.
                let reached = Self.reached(bytes)
                let range =
                    reached.count < bytes.count && bits >= 96
                    ? Range(bytes: reached, bits: bits - 96) : Range(bytes: bytes, bits: bits)
                ranges.append(range)
                if range.bits == range.bytes.count * 8 { named.append(range.bytes) }
            } else if parts.count == 1,
                entry.unicodeScalars.allSatisfy({
                    $0.isASCII
                        && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                            || "*.-_".unicodeScalars.contains($0))
                })
            {
                globs.append(entry.lowercased())
            } else {
                throw AgentSettingError(
                    .probeAllow, value: entry,
                    ": give an address range (10.0.0.0/8, 2001:db8::/32), an address or a host glob (*.example.com)")
            }
        }
    }

    /// Whether anything is allowed beyond the default.
    public var isEmpty: Bool { ranges.isEmpty && globs.isEmpty }

    /// The allow-list as the agent's answers and log name it (a flag: only a flag gives it).
    private static let setting = Setting.probeAllow.named(.configuration)

    /// Why `/probe` may not probe `host`, a name or an address literal the requester wrote (a
    /// target, a redirect's `Location`, `dns_server=`); nil when it may.
    public func refusal(host: String) -> String? {
        if let written = Self.bytes(host) {
            let bytes = Self.reached(written)
            if let reason = metadataRefusal(address: host, bytes: bytes) { return reason }
            if isEmpty || ranges.contains(where: { $0.contains(bytes) }) { return nil }
            // A glob allows names: an address written out is not the answer for any of them.
            return ranges.isEmpty
                ? "\(Self.shown(host, bytes)) is an address, and \(Self.setting) gives only names (\(globs.joined(separator: ", "))); an address range would allow it"
                : "\(Self.shown(host, bytes)) is outside the address ranges \(Self.setting) allows"
        }
        guard !isEmpty else { return nil }
        let name = host.lowercased()
        // A name is allowed by a glob; with only ranges given, by the addresses it resolves to.
        if globs.isEmpty || globs.contains(where: { fnmatch($0, name, 0) == 0 }) { return nil }
        return "\(name) is not among the names \(Self.setting) allows"
    }

    /// Why `/probe` may not connect to `address`, which resolving an allowed name answered; nil
    /// when it may.
    public func refusal(address: String) -> String? {
        guard let written = Self.bytes(address) else { return "\(address) is not an address" }
        let bytes = Self.reached(written)
        if let reason = metadataRefusal(address: address, bytes: bytes) { return reason }
        // With globs alone the name's glob allowed it; ranges, when given, hold every answer.
        if ranges.isEmpty || ranges.contains(where: { $0.contains(bytes) }) { return nil }
        return "\(Self.shown(address, bytes)) is outside the address ranges \(Self.setting) allows"
    }

    /// `bytes` being what `address` reaches.
    private func metadataRefusal(address: String, bytes: [UInt8]) -> String? {
        let reached = Self.text(bytes)
        guard IPLiteral.isLinkLocalOrMetadata(reached), !named.contains(bytes) else { return nil }
        return
            "\(Self.shown(address, bytes)) is a link-local or cloud metadata address; \(Setting.probeAllow.named(.configuration, value: reached)) would allow it"
    }

    /// The address bytes reach (`IPLiteral.reachedAddress`: an IPv6 address carrying an IPv4
    /// one is judged as that IPv4 address).
    static func reached(_ bytes: [UInt8]) -> [UInt8] { IPLiteral.reachedAddress(bytes) }

    /// `address` as written, with the IPv4 address it reaches when that differs.
    private static func shown(_ address: String, _ reached: [UInt8]) -> String {
        reached.count == 4 && bytes(address)?.count == 16 ? "\(address) (which reaches \(text(reached)))" : address
    }

    /// The text `inet_ntop` writes for 4 or 16 bytes.
    private static func text(_ bytes: [UInt8]) -> String { IPLiteral.text(ofBytes: bytes) }

    /// `resolve` refusing a name this list refuses (a redirect's new host), and with every address
    /// it refuses taken out of both answers; an answer left with none fails with the reason, so no
    /// attempt is made to a refused address.
    public func guarding(_ resolve: @escaping HostResolver) -> HostResolver {
        let list = self
        return { host in
            if let refused = list.refused(host) { return refused }
            return list.screened(await resolve(host))
        }
    }

    /// The resolution of a host the list refuses; nil when it may be resolved. Not async (nor
    /// `screened`), so what they build lives on the thread's stack for the moment they run, not in
    /// the async frame every probe under way holds (issue 34: /probe's peak memory).
    @inline(never)
    private func refused(_ host: String) -> HostResolution? {
        guard let reason = refusal(host: host) else { return nil }
        return HostResolution(
            host: host, system: SystemAnswer(error: .reported("refused: \(reason)")),
            httpdns: HTTPDNSAnswer(provider: "probe-allow", error: .reported("refused: \(reason)")))
    }

    /// `resolution` with the addresses the list refuses taken out of both columns.
    @inline(never)
    private func screened(_ resolution: HostResolution) -> HostResolution {
        var resolution = resolution
        let system = screen(resolution.system.ipv4 + resolution.system.ipv6)
        let httpdns = screen(resolution.httpdns.ipv4 + resolution.httpdns.ipv6)
        resolution.system.ipv4 = resolution.system.ipv4.filter(system.kept.contains)
        resolution.system.ipv6 = resolution.system.ipv6.filter(system.kept.contains)
        if system.kept.isEmpty, let reason = system.refused.first {
            resolution.system.error = resolution.system.error ?? .reported("refused: \(reason)")
        }
        resolution.httpdns.ipv4 = resolution.httpdns.ipv4.filter(httpdns.kept.contains)
        resolution.httpdns.ipv6 = resolution.httpdns.ipv6.filter(httpdns.kept.contains)
        if httpdns.kept.isEmpty, let reason = httpdns.refused.first {
            resolution.httpdns.error = resolution.httpdns.error ?? .reported("refused: \(reason)")
        }
        return HostResolution(host: resolution.host, system: resolution.system, httpdns: resolution.httpdns)
    }

    private func screen(_ addresses: [IPAddress]) -> (kept: [IPAddress], refused: [String]) {
        var kept: [IPAddress] = []
        var refused: [String] = []
        for address in addresses {
            if let reason = refusal(address: address.text) { refused.append(reason) } else { kept.append(address) }
        }
        return (kept, refused)
    }

    /// The bytes of an address literal (4 or 16), nil for anything else.
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }
}

extension ProbeAllowList: DestinationPolicy {
    /// Why `/probe` may not connect to `address`; nil when it may.
    public func refusal(address: IPAddress) -> String? { refusal(address: address.text) }
}

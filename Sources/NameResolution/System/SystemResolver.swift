// System DNS through getaddrinfo, which can block for seconds: each lookup runs on a thread
// of its own (a parked one when idle), and the caller gets an answer at the timeout either way.
import CurlTransport
import Dispatch
import FoundationEssentials
import FoundationGaps

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The operating system's resolver (getaddrinfo), timed and bounded by a timeout.
public struct SystemResolver: Sendable {
    /// The DNS server asked in getaddrinfo's place (`--dns-server`); nil keeps getaddrinfo.
    public let dnsServer: DNSServer?
    /// Bounds the lookups running at once (shared by copies of this value).
    let lookups = ResolutionGate(limit: ResolutionGate.systemLookupLimit)

    public init(dnsServer: DNSServer? = nil) { self.dnsServer = dnsServer }

    /// Resolves `host` for `families`.
    ///
    /// - Parameter timeout: past it the answer is a timeout error and the lookup's
    ///   thread is abandoned (its result is dropped when it finally returns).
    /// - Returns: the addresses found, the time taken, or the reason in words.
    public func resolve(_ host: String, families: Set<IPFamily>, timeout: Duration) async -> SystemAnswer {
        if let dnsServer {
            var resolver = DNSServerResolver(server: dnsServer)
            resolver.gate = lookups
            return await resolver.resolve(host, families: families, timeout: timeout)
        }
        let started = DispatchTime.now()
        let answer =
            await Deadline.first(within: timeout) { done in
                // A place at the gate first: a batch of names must not start a thread each at once.
                Task { [lookups] in
                    await lookups.enter()
                    // A parked thread when one is idle: the agent's `/probe` looks a name up per request.
                    ParkedThreads.shared.run(named: "ipdirect.getaddrinfo") {
                        done(Self.lookup(host, families: families))
                        lookups.leave()
                    }
                }
            }
            ?? SystemAnswer(error: .systemDNS(.timedOut(seconds: timeout.inSeconds, lookups: lookups.limit)))
        var timed = answer
        timed.ms = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6
        return timed
    }

    /// The blocking lookup itself.
    static func lookup(_ host: String, families: Set<IPFamily>) -> SystemAnswer {
        if families.isEmpty { return SystemAnswer(error: .noFamilyAsked) }
        var hints = addrinfo()
        hints.ai_family = families == [.v4] ? AF_INET : families == [.v6] ? AF_INET6 : AF_UNSPEC
        #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
        #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else { return SystemAnswer(error: .systemDNS(failure(status, host: host))) }
        var v4: [IPAddress] = []
        var v6: [IPAddress] = []
        var node = list
        while let info = node {
            // getaddrinfo's text goes through the one parser too: an address with a zone
            // (`fe80::1%eth0`) is not a literal a URL or a pin can carry, and is left out.
            if let address = info.pointee.ai_addr,
                let ip = numericHost(address, length: info.pointee.ai_addrlen).flatMap(IPAddress.init)
            {
                if ip.family == .v4, !v4.contains(ip) { v4.append(ip) }
                if ip.family == .v6, !v6.contains(ip) { v6.append(ip) }
            }
            node = info.pointee.ai_next
        }
        if v4.isEmpty, v6.isEmpty { return SystemAnswer(error: .systemDNS(.noAddress(host: host))) }
        return SystemAnswer(ipv4: families.contains(.v4) ? v4 : [], ipv6: families.contains(.v6) ? v6 : [])
    }

    static func numericHost(_ address: UnsafeMutablePointer<sockaddr>, length: socklen_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return nil
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func failure(_ status: Int32, host: String) -> SystemDNSFailure {
        switch status {
        case EAI_NONAME: return .noSuchName(host: host)
        case EAI_AGAIN: return .temporary(host: host)
        case EAI_FAIL: return .serverFailed(host: host)
        default:
            #if !canImport(Darwin)
                // glibc's EAI_NODATA (-5) and EAI_ADDRFAMILY (-9) need _GNU_SOURCE to be visible.
                if status == -5 || status == -9 { return .noAddressOfFamily(host: host) }
            #endif
            return .other(message: String(cString: gai_strerror(status)), host: host)
        }
    }
}

/// Whether this machine could reach the IPv6 internet, for the `auto` family.
public enum IPv6Route {
    /// True when a UDP socket can be connected to a global IPv6 address. connect() on UDP
    /// only consults the routing table; no packet leaves the machine.
    public static func available() -> Bool { cached }

    private static let cached: Bool = UDPRoute.connects(to: "2001:4860:4860::8888", port: 53)
}

/// Whether the routing table has a way to an address: a UDP socket's connect(2) consults it and
/// sends nothing. The `auto` family asks it of an IPv6 address; the doctor asks what the SDKs'
/// stack detection asks.
public enum UDPRoute {
    /// Whether a fresh UDP socket connects to `address`:`port`; false when no socket can be made.
    public static func connects(to address: IPAddress, port: UInt16) -> Bool {
        if address.family == .v4 {
            var target = sockaddr_in()
            target.sin_family = sa_family_t(AF_INET)
            target.sin_port = port.bigEndian
            guard inet_pton(AF_INET, address.text, &target.sin_addr) == 1 else { return false }
            return connects(AF_INET, to: &target)
        }
        var target = sockaddr_in6()
        target.sin6_family = sa_family_t(AF_INET6)
        target.sin6_port = port.bigEndian
        guard inet_pton(AF_INET6, address.text, &target.sin6_addr) == 1 else { return false }
        return connects(AF_INET6, to: &target)
    }

    /// connect(2) of a fresh UDP socket of `family` to `target`, a sockaddr_in or sockaddr_in6.
    private static func connects<Address>(_ family: Int32, to target: inout Address) -> Bool {
        #if canImport(Darwin)
            let fd = socket(family, SOCK_DGRAM, 0)
        #else
            let fd = socket(family, Int32(SOCK_DGRAM.rawValue), 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<Address>.size)) == 0
            }
        }
    }
}

extension AddressFamily {
    /// The concrete families to ask for; `auto` consults this machine's IPv6 route.
    public func concrete(ipv6Route: Bool = IPv6Route.available()) -> Set<IPFamily> {
        switch self {
        case .v4: return [.v4]
        case .v6: return [.v6]
        case .both: return [.v4, .v6]
        case .auto: return ipv6Route ? [.v4, .v6] : [.v4]
        }
    }
}

// A chosen DNS server asked directly, as `dig @server` would: c-ares over UDP (TCP when the reply
// is truncated), or TCP only, with its own timeout, in place of getaddrinfo for the "system" column.
import CCAres
import CurlTransport
import Dispatch
import FoundationEssentials
import FoundationGaps
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A DNS server by address and port (`--dns-server HOST[:PORT]`, `dns_server` in the file).
public struct DNSServer: Sendable, Hashable, CustomStringConvertible {
    public var address: IPAddress
    public var port: Int

    public init(address: IPAddress, port: Int = 53) {
        self.address = address
        self.port = port
    }

    /// `127.0.0.1:5353`, `[::1]:53`.
    public var description: String { address.hostPort(port) }

    /// Reads `1.2.3.4`, `1.2.3.4:5353`, `::1` or `[::1]:5353`.
    ///
    /// - Parameter setting: how the reader gave the text, leading the error (`--dns-server`, a file's key).
    /// - Throws: `ConfigurationError` saying what form is expected.
    public static func parse(_ text: String, setting: String = "the DNS server") throws(ConfigurationError) -> DNSServer
    {
        let trimmed = text.trimmingWhitespace()
        func bad(_ why: String) -> ConfigurationError {
            .io(
                "\(setting): '\(trimmed)' \(why); give an IP address and optional port, like 223.5.5.5, 127.0.0.1:5353 or [::1]:53"
            )
        }
        guard let (host, portText) = IPLiteral.splitHostPort(trimmed) else { throw bad("cannot be read") }
        var port = 53
        if let portText {
            guard let value = Int(portText) else { throw bad("has no usable port") }
            port = value
        }
        guard (1...65535).contains(port) else { throw bad("has a port outside 1-65535") }
        guard let address = IPAddress(host) else { throw bad("is not an IP address") }
        return DNSServer(address: address, port: port)
    }
}

/// Which resolver answered the "system" column (`system.resolver` in JSON).
public enum SystemResolverKind: Sendable, Hashable, CustomStringConvertible, Codable {
    /// The operating system's resolver (getaddrinfo, /etc/resolv.conf and friends).
    case getaddrinfo
    /// A chosen DNS server, asked directly.
    case dns(DNSServer)

    /// `getaddrinfo` or `dns 127.0.0.1:5353`.
    public var description: String {
        switch self {
        case .getaddrinfo: return "getaddrinfo"
        case .dns(let server): return "dns \(server)"
        }
    }

    /// The words a person reads for the column's resolver: "system DNS" or "DNS server 127.0.0.1:5353".
    public var label: String {
        switch self {
        case .getaddrinfo: return "system DNS"
        case .dns(let server): return "DNS server \(server)"
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        if text == "getaddrinfo" {
            self = .getaddrinfo
        } else if text.hasPrefix("dns "), let server = try? DNSServer.parse(String(text.dropFirst(4))) {
            self = .dns(server)
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "unknown system resolver '\(text)'"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// How queries travel to a DNS server.
public enum DNSTransport: String, Sendable, CaseIterable {
    /// UDP, and TCP after a truncated reply: what every stub resolver does.
    case udp
    /// TCP only (c-ares `ARES_FLAG_USEVC`), as `dig +tcp`: where UDP 53 is filtered, the way left.
    case tcp
}

/// Asks one DNS server for A and AAAA records through a c-ares channel of its own.
public struct DNSServerResolver: Sendable {
    public let server: DNSServer
    public let transport: DNSTransport
    /// Bounds the lookups running at once, when this asks on behalf of a `SystemResolver`.
    var gate: ResolutionGate?

    public init(server: DNSServer, transport: DNSTransport = .udp) {
        self.server = server
        self.transport = transport
    }

    /// Resolves `host` for `families` at the server.
    ///
    /// - Parameter timeout: for the whole lookup (UDP, and TCP after a truncated reply).
    /// - Returns: the addresses, or the reason in words naming the server and what to check.
    public func resolve(_ host: String, families: Set<IPFamily>, timeout: Duration) async -> SystemAnswer {
        let started = DispatchTime.now()
        let server = server
        let transport = transport
        let gate = gate
        // Bounded like getaddrinfo: a batch of names waits its turn instead of a thread and socket each.
        await gate?.enter()
        // c-ares blocks in poll(); a thread of its own keeps it off the cooperative pool.
        var answer = await onThreadOfItsOwn(named: "ipdirect.c-ares") {
            defer { gate?.leave() }
            return Self.lookup(host, families: families, server: server, transport: transport, timeout: timeout)
        }
        answer.ms = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6
        answer.resolver = .dns(server)
        return answer
    }

    /// What one family's query came to.
    final class Outcome: @unchecked Sendable {
        var status: Int32?
        var reply: [UInt8] = []
    }

    static let libraryReady: Bool = ares_library_init(ARES_LIB_INIT_ALL) == ARES_SUCCESS

    /// The blocking lookup: one channel, both families' queries, a poll loop until both end.
    static func lookup(
        _ host: String, families: Set<IPFamily>, server: DNSServer, transport: DNSTransport = .udp, timeout: Duration
    ) -> SystemAnswer {
        func failed(_ failure: DNSServerFailure) -> SystemAnswer { SystemAnswer(error: .dnsServer(server, failure)) }
        guard libraryReady else { return failed(.libraryFailed) }
        if families.isEmpty { return SystemAnswer(error: .noFamilyAsked) }
        let settings = ChannelSettings(
            server: server, transport: transport, timeoutMs: Int32(max(1, (timeout.inSeconds * 1000).rounded())))
        let channel: ares_channel
        if let kept = channels.take(settings) {
            channel = kept
        } else {
            switch settings.channel() {
            case .success(let made): channel = made
            case .failure(let failure): return failed(failure.failure)
            }
        }
        // Kept for the next lookup only when every query ended in a reply (see ChannelShelf).
        var reusable = false
        defer {
            if reusable { channels.keep(channel, settings) } else { ares_destroy(channel) }
        }

        let ordered = IPFamily.allCases.filter(families.contains)
        var outcomes: [(family: IPFamily, outcome: Outcome)] = []
        for family in ordered {
            let outcome = Outcome()
            outcomes.append((family, outcome))
            let query: [UInt8]
            do {
                query = try DNSMessage.query(host, family: family, id: UInt16.random(in: 1...UInt16.max))
            } catch {
                return failed(.unaskable(host: host, clause: error.clause))
            }
            let box = Unmanaged.passRetained(outcome).toOpaque()
            ares_send(
                channel, query, Int32(query.count),
                { arg, status, _, reply, length in
                    // Never nil: `arg` is the box passed to ares_send just below.
                    guard let arg else { return }
                    let outcome = Unmanaged<Outcome>.fromOpaque(arg).takeRetainedValue()
                    outcome.status = status
                    if let reply, length > 0 {
                        outcome.reply = Array(UnsafeBufferPointer(start: reply, count: Int(length)))
                    }
                }, box)
        }
        drive(channel, until: Date().addingTimeInterval(timeout.inSeconds + 1)) {
            outcomes.allSatisfy { $0.outcome.status != nil }
        }
        reusable = outcomes.allSatisfy { $0.outcome.status == ARES_SUCCESS }

        var raw: [IPFamily: [String]] = [:]
        // What a DNS engineer looks at first, as the HTTPDNS column has it: TTL and CNAME chain.
        var ttls: [Int] = []
        var chain: [String] = []
        var problems: [String] = []
        var missing = 0
        // Queries no reply came for at all (timed out, refused): the path, not the server's answer.
        var unanswered = 0
        // What this machine did to a query that never left (a local firewall, no route).
        var stoppedHere: ConnectionFailure?
        for (family, outcome) in outcomes {
            switch outcome.status ?? ARES_ETIMEOUT {
            case ARES_SUCCESS:
                do {
                    // A full 64 KB reply holds fewer addresses than the parser keeps: nothing is cut.
                    let read = try DNSMessage.addresses(in: outcome.reply, host: host, family: family, id: nil)
                    raw[family] = read.raw
                    if let ttl = read.ttl { ttls.append(ttl) }
                    if chain.isEmpty { chain = read.aliases }
                } catch .noData {
                    missing += 1
                    raw[family] = []
                } catch .rcode(.nameError) {
                    return failed(.noSuchName(host: host))
                } catch .rcode(let rcode) {
                    problems.append("answered \(rcode) for \(host): \(rcode.meaning)")
                } catch {
                    problems.append(
                        "its reply for \(host) \(error.clause): the server, or something on the way, mangles DNS")
                }
            case ARES_ECONNREFUSED:
                // c-ares says "refused" for any socket error: the kernel tells a refusal from a
                // local firewall or a missing route, which fail at once and never reach the server.
                unanswered += 1
                let query = (try? DNSMessage.query(host, family: family, id: UInt16.random(in: 1...UInt16.max))) ?? []
                let how = DNSSendCheck.failure(server: server, transport: transport, query: query) ?? .refused
                if how != .refused { stoppedHere = how }
                problems.append(refusalSentence(how, host: host, server: server))
            case let status:
                if [ARES_ETIMEOUT, ARES_ECANCELLED].contains(status) { unanswered += 1 }
                problems.append(sentence(status, host: host, server: server, timeout: timeout))
            }
        }
        if raw.isEmpty || (!problems.isEmpty && raw.values.allSatisfy(\.isEmpty)) {
            let unique = problems.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            if let stoppedHere, unanswered == ordered.count {
                return failed(.stoppedHere(how: stoppedHere, problems: unique))
            }
            return failed(unanswered == ordered.count ? .unanswered(problems: unique) : .noAnswer(problems: unique))
        }
        // The one IP-literal check every address from outside goes through.
        let v4 = IPLiteral.screen(raw[.v4] ?? [], family: .v4)
        let v6 = IPLiteral.screen(raw[.v6] ?? [], family: .v6)
        let rejected = v4.rejected + v6.rejected
        if !rejected.isEmpty {
            return failed(.notAddresses(Array(rejected.prefix(3))))
        }
        if v4.valid.isEmpty, v6.valid.isEmpty {
            return failed(.noData(host: host, families: Set(ordered)))
        }
        return SystemAnswer(ipv4: v4.valid, ipv6: v6.valid, ttl: ttls.min(), cname: chain.isEmpty ? nil : chain)
    }

    /// The channels lookups hand back for the next one (see ChannelShelf).
    static let channels = ChannelShelf(limit: ResolutionGate.systemLookupLimit)

    /// What a c-ares channel is set up with: lookups with the same settings may share one, in turn.
    struct ChannelSettings: Hashable {
        var server: DNSServer
        var transport: DNSTransport
        var timeoutMs: Int32

        /// Why a channel could not be made, as the lookup reports it.
        struct Refusal: Error {
            var failure: DNSServerFailure
        }

        /// A new channel asking only `server`, over `transport`, one try within `timeoutMs`.
        func channel() -> Result<ares_channel, Refusal> {
            var options = ares_options()
            // NOCHECKRESP: without it c-ares hides SERVFAIL, NOTIMP and REFUSED replies behind
            // ARES_ECONNREFUSED, as if nothing listened; the reply's RCODE is read and named here instead.
            // EDNS: replies up to the offered size are taken over UDP (without it c-ares goes to TCP past
            // 512 bytes), and a FORMERR without OPT is asked once more without EDNS, as dig does.
            options.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_NOCHECKRESP | ARES_FLAG_EDNS
            if transport == .tcp { options.flags |= ARES_FLAG_USEVC }
            options.ednspsz = DNSMessage.ednsPayloadSize
            options.timeout = timeoutMs
            options.tries = 1
            var channel: ares_channel?
            let mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_EDNSPSZ
            guard ares_init_options(&channel, &options, mask) == ARES_SUCCESS, let channel else {
                return .failure(Refusal(failure: .channelFailed))
            }
            var node = ares_addr_port_node()
            node.udp_port = Int32(server.port)
            node.tcp_port = Int32(server.port)
            if server.address.family == .v4 {
                node.family = AF_INET
                _ = inet_pton(AF_INET, server.address.text, &node.addr.addr4)
            } else {
                node.family = AF_INET6
                _ = inet_pton(AF_INET6, server.address.text, &node.addr.addr6)
            }
            guard ares_set_servers_ports(channel, &node) == ARES_SUCCESS else {
                ares_destroy(channel)
                return .failure(Refusal(failure: .addressRefused))
            }
            return .success(channel)
        }
    }

    /// Idle c-ares channels, lent to one lookup at a time. Setting a channel up (c-ares reads
    /// resolv.conf and its friends and seeds its ids) cost as much as the lookup itself, and the
    /// agent's `/probe` asks the same server for every request. A channel comes back only when
    /// every query of its lookup ended in a reply: one that timed out, was refused or cancelled is
    /// destroyed, so no lookup inherits another's trouble. With no query left c-ares has closed the
    /// channel's sockets (no STAYOPEN), so an idle channel holds none, and the next lookup's
    /// queries go out from fresh sockets as a new channel's would.
    final class ChannelShelf: @unchecked Sendable {
        /// A channel is only ever used by the thread it is lent to; this box carries it across.
        private struct Idle: @unchecked Sendable {
            var settings: ChannelSettings
            var channel: ares_channel
        }
        private let idle = Locked([Idle]())
        private let limit: Int

        init(limit: Int) { self.limit = limit }

        /// An idle channel set up with `settings`, now the caller's; nil when there is none.
        func take(_ settings: ChannelSettings) -> ares_channel? {
            idle.withLock { idle in
                guard let index = idle.lastIndex(where: { $0.settings == settings }) else { return nil }
                return idle.remove(at: index).channel
            }
        }

        /// Takes `channel` back for later lookups; past the limit the longest idle one is destroyed.
        func keep(_ channel: ares_channel, _ settings: ChannelSettings) {
            let dropped = idle.withLock { idle -> Idle? in
                idle.append(Idle(settings: settings, channel: channel))
                return idle.count > limit ? idle.removeFirst() : nil
            }
            if let dropped { ares_destroy(dropped.channel) }
        }

        /// How many idle channels are set up with `settings`.
        func count(_ settings: ChannelSettings) -> Int {
            idle.withLock { idle in idle.count { $0.settings == settings } }
        }
    }

    /// Runs c-ares's sockets and timers until `done` or the deadline (then cancels what is left).
    private static func drive(_ channel: ares_channel, until deadline: Date, done: () -> Bool) {
        let maximum = Int(cares_getsock_max())
        var sockets = [ares_socket_t](repeating: ARES_SOCKET_BAD, count: maximum)
        while !done() {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                ares_cancel(channel)
                break
            }
            let bits = ares_getsock(channel, &sockets, Int32(maximum))
            var polled: [pollfd] = []
            for index in 0..<maximum {
                let read = cares_getsock_readable(bits, Int32(index)) != 0
                let write = cares_getsock_writable(bits, Int32(index)) != 0
                guard read || write else { continue }
                polled.append(
                    pollfd(
                        fd: sockets[index], events: Int16((read ? POLLIN : 0) | (write ? POLLOUT : 0)), revents: 0))
            }
            var limit = timeval()
            limit.tv_sec = .init(remaining)
            limit.tv_usec = .init((remaining - remaining.rounded(.down)) * 1e6)
            var next = timeval()
            let wait = ares_timeout(channel, &limit, &next).map {
                Int($0.pointee.tv_sec) * 1000 + Int($0.pointee.tv_usec) / 1000
            }
            let ready = poll(&polled, nfds_t(polled.count), Int32(max(0, wait ?? 100)))
            if ready <= 0 {
                ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD)
                continue
            }
            for entry in polled where entry.revents != 0 {
                let readable = entry.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0
                let writable = entry.revents & Int16(POLLOUT) != 0
                ares_process_fd(channel, readable ? entry.fd : ARES_SOCKET_BAD, writable ? entry.fd : ARES_SOCKET_BAD)
            }
        }
    }

    /// A connection failure of a query as the end of a sentence that starts with the server's name.
    static func refusalSentence(_ how: ConnectionFailure, host: String, server: DNSServer) -> String {
        switch how {
        case .refused:
            return
                "refused the connection for \(host) (nothing listens on port \(server.port) there): check the address and port"
        case .localFilter, .noRoute:
            return "the query for \(host) never left this machine: \(how.reason)"
        default:
            return "the query for \(host) failed: \(server) \(how.clause)"
        }
    }

    /// A c-ares status as the end of a sentence that starts with the server's name.
    static func sentence(_ status: Int32, host: String, server: DNSServer, timeout: Duration) -> String {
        switch status {
        case ARES_ETIMEOUT, ARES_ECANCELLED:
            return
                "no answer for \(host) within \(ResolutionError.format(timeout.inSeconds)) s (none came, or only replies with a wrong id or for another question, which are dropped as dig drops them): check the address and port, that it serves DNS, any firewall between, and whether something on the path forges replies"
        case ARES_ECONNREFUSED:
            return
                "refused the connection for \(host) (nothing listens on port \(server.port) there): check the address and port"
        case ARES_ESERVFAIL:
            return "failed to resolve \(host) (SERVFAIL): the server's own upstream is failing"
        case ARES_EREFUSED:
            return "refused to resolve \(host) (REFUSED): it does not serve this client; use a resolver that does"
        case ARES_ENOTIMP:
            return "does not implement this query (NOTIMP)"
        case ARES_EFORMERR:
            return "said the query for \(host) was malformed (FORMERR)"
        case ARES_EBADRESP:
            return "sent an unreadable reply for \(host): the server or something between mangles DNS"
        default:
            return "the lookup of \(host) failed: \(String(cString: ares_strerror(status)))"
        }
    }
}

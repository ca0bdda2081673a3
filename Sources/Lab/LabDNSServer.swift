// The lab's stand-in for a carrier's LocalDNS: a UDP and TCP DNS server on loopback that agrees
// with HTTPDNS for most names and hijacks, misroutes, denies, stalls or mangles a few (zone `localdns`).
import FoundationEssentials
import FoundationGaps
import NIOCore
import NIOPosix

/// How the lab's DNS server answers a name; absent from the zone means it agrees with HTTPDNS.
public enum LabLocalDNS: String, Sendable, Codable, CaseIterable {
    /// Answers `hijackAddress`, where another site (another certificate) listens on the same port.
    case hijack
    /// Answers `unreachableAddress`, where nothing listens.
    case unreachable
    /// Says the name does not exist.
    case nxdomain
    /// Answers correctly after `LabOptions.slowDNSDelay`.
    case slow
    /// Answers with an id that is not the query's (a client must ignore it).
    case wrongID = "wrong-id"
    /// Answers with the message cut short in the middle of its answer.
    case truncated
    /// Over UDP answers with the TC bit and no records; over TCP answers in full.
    case tcpOnly = "tcp-only"

    /// Where a hijacked name is sent: another site, with a certificate for `hijackSiteName`.
    public static let hijackAddress = "127.0.0.2"
    /// The name on the hijacking site's certificate.
    public static let hijackSiteName = "isp-portal.lab.test"
    /// Where an unreachable name is sent: nothing listens there.
    public static let unreachableAddress = "127.0.0.3"
}

/// Turns a DNS query into the lab's reply and its delay; shared by the UDP and TCP listeners.
struct LabDNSResponder: Sendable {
    var zone: LabZone
    var slowDelay: Double
    var ledger: LabLedger
    /// The network faults in force: the responder applies `nat64`, the UDP handler `udp53-filtered`.
    var networkFaults: Set<NetworkFault> = []

    /// The reply to `message`, nil for bytes that are no query (no reply at all, as servers do).
    func reply(_ message: [UInt8], overTCP: Bool) -> (bytes: [UInt8], delay: Double)? {
        guard let query = LabDNSQuery(message) else { return nil }
        var delay = 0.0
        var reply: [UInt8]
        var rcode = LabDNSReply.noError
        switch zone.record(for: query.name)?.localDNS {
        case nil where LabNAT64.isDiscoveryName(query.name):
            reply = LabNAT64.answer(query, dns64: networkFaults.contains(.nat64))
        case nil:
            reply = LabDNSReply.answer(query, zone: zone)
            if !overTCP { reply = LabDNSReply.fittingUDP(reply, to: query) }
            rcode = Int(reply[3] & 0x0f)
        case .hijack?:
            reply = LabDNSReply.answer(query, zone: zone, addressesOverride: [LabLocalDNS.hijackAddress])
        case .unreachable?:
            reply = LabDNSReply.answer(query, zone: zone, addressesOverride: [LabLocalDNS.unreachableAddress])
        case .nxdomain?:
            rcode = LabDNSReply.nxdomain
            reply = LabDNSReply.make(to: query, rcode: rcode, records: [])
        case .slow?:
            reply = LabDNSReply.answer(query, zone: zone)
            delay = slowDelay
        case .wrongID?:
            reply = LabDNSReply.answer(query, zone: zone)
            let wrong = query.id &+ 1
            reply[0] = UInt8(wrong >> 8)
            reply[1] = UInt8(wrong & 0xff)
        case .truncated?:
            // Without the OPT record, so the cut falls in the answer, not in EDNS's trailer.
            var plain = query
            plain.udpPayloadSize = nil
            reply = LabDNSReply.answer(plain, zone: zone)
            // Keep the header and question whole so the client takes it as the reply, then cut.
            let questionEnd = 12 + query.question.count
            reply = Array(reply.prefix(max(questionEnd + 5, reply.count - 3)))
        case .tcpOnly?:
            reply =
                overTCP
                ? LabDNSReply.answer(query, zone: zone)
                : LabDNSReply.make(to: query, rcode: 0, records: [], truncated: true)
        }
        ledger.recordDNS(
            LabDNSQueryRecord(
                time: Date(), name: query.name, type: Int(query.type), transport: overTCP ? "tcp" : "udp", rcode: rcode,
                edns: query.udpPayloadSize)
        )
        return (reply, delay)
    }
}

/// RFC 7050's discovery name as the lab's DNS server answers it: its two well-known IPv4
/// addresses always, and under the `nat64` fault AAAA records synthesized from them (DNS64).
public enum LabNAT64 {
    /// The name a client asks AAAA for to learn the NAT64 prefix (RFC 7050 2).
    public static let discoveryName = "ipv4only.arpa"
    /// Its A records, the well-known addresses (RFC 7050 2.1) a client finds inside the AAAA.
    public static let wellKnownIPv4 = ["192.0.0.170", "192.0.0.171"]
    /// The prefix the lab's DNS64 synthesizes with: the well-known one (RFC 6052 2.1).
    public static let prefix = "64:ff9b::"
    /// The AAAA records under the fault: the prefix with each well-known address in its last 32 bits.
    public static let synthesized = ["64:ff9b::c000:aa", "64:ff9b::c000:ab"]

    static func isDiscoveryName(_ name: String) -> Bool {
        name.lowercased().trimming(charactersIn: ".") == discoveryName
    }

    /// A, or AAAA only with DNS64 on (NODATA otherwise, as a resolver without DNS64 answers).
    static func answer(_ query: LabDNSQuery, dns64: Bool) -> [UInt8] {
        let addresses: [String]
        switch query.type {
        case 1: addresses = wellKnownIPv4
        case 28: addresses = dns64 ? synthesized : []
        default: addresses = []
        }
        let records = addresses.compactMap { LabDNSRecord.address(discoveryName, $0, ttl: 60) }
        return LabDNSReply.make(to: query, rcode: LabDNSReply.noError, records: records)
    }
}

/// One query the lab's DNS server answered.
public struct LabDNSQueryRecord: Sendable, Codable, Equatable {
    public var time: Date
    public var name: String
    /// 1 for A, 28 for AAAA.
    public var type: Int
    /// `udp` or `tcp`.
    public var transport: String
    public var rcode: Int
    /// The UDP payload size the query offered with EDNS(0); nil for a query without it.
    public var edns: Int? = nil
}

/// Binds the LocalDNS stand-in and the two sites its hijack is about.
enum LabLocalDNSServers {
    struct Started {
        /// The DNS server's channels (UDP and TCP).
        var channels: [any Channel]
        /// The two sites, on ports held until shutdown.
        var listeners: [LabListener]
        /// The port of `hijacked.lab.test`'s real origin (127.0.0.1) and the hijacker (127.0.0.2).
        var hijackedPort: Int
        /// The DNS server's port on its address, UDP and TCP.
        var dnsPort: Int
    }

    /// - Parameters:
    ///   - ports: wanted ports for the hijacked sites and the DNS server (0 = free ones).
    ///   - dnsAddress: where the DNS server listens (the hijacked sites stay on loopback).
    static func start(
        responder: LabDNSResponder, ca: LabCertificateAuthority, group: any EventLoopGroup,
        connections: LabConnections, ledger: LabLedger, ports: (sites: Int, dns: Int), dnsAddress: String
    ) async throws -> Started {
        let real = LabServer(
            role: .hijacked, addresses: ["127.0.0.1"],
            tls: LabTLS(byName: [:], fallback: try ca.issue(dnsNames: ["hijacked.lab.test"]).serverContext()),
            respond: originResponder(name: LabRole.hijacked.rawValue, behaviour: .answer, ledger: ledger))
        let hijacker = LabServer(
            role: .hijacker, addresses: [LabLocalDNS.hijackAddress],
            tls: LabTLS(
                byName: [:], fallback: try ca.issue(dnsNames: [LabLocalDNS.hijackSiteName]).serverContext()),
            respond: originResponder(name: LabRole.hijacker.rawValue, behaviour: .answer, ledger: ledger))
        var listeners: [LabListener] = []
        do {
            // The hijacker takes the real site's port on its own address; with a free port, a few
            // tries in case that port is taken there.
            var lastError: (any Error)?
            for _ in 0..<(ports.sites == 0 ? 8 : 1) where listeners.isEmpty {
                let first = try LabListener(server: real, port: ports.sites, group: group, connections: connections)
                do {
                    let second = try LabListener(
                        server: hijacker, port: first.port, group: group, connections: connections)
                    listeners = [first, second]
                } catch {
                    lastError = error
                    await first.release()
                }
            }
            guard listeners.count == 2 else {
                throw lastError ?? LabError("the lab's hijacked sites found no free port")
            }
            for listener in listeners { try await listener.open() }
            let dns = try await pair(
                ports.dns,
                first: { port in
                    try await udp(responder, group: group, host: dnsAddress, port: port)
                },
                second: { port in
                    try await tcp(responder, group: group, host: dnsAddress, port: port, connections: connections)
                })
            return Started(
                channels: dns.channels, listeners: listeners, hijackedPort: listeners[0].port, dnsPort: dns.port)
        } catch {
            for listener in listeners { await listener.release() }
            throw error
        }
    }

    /// Binds `first` (0 = a free port), then `second` on the same port; with a free port, tries
    /// again a few times when the second bind finds it taken.
    private static func pair(
        _ port: Int,
        first: (Int) async throws -> (channels: [any Channel], port: Int),
        second: (Int) async throws -> (channels: [any Channel], port: Int)
    ) async throws -> (channels: [any Channel], port: Int) {
        var lastError: (any Error)?
        for _ in 0..<(port == 0 ? 8 : 1) {
            let a = try await first(port)
            do {
                let b = try await second(a.port)
                return (a.channels + b.channels, a.port)
            } catch {
                lastError = error
                for channel in a.channels { try? await channel.close() }
            }
        }
        throw lastError ?? LabError("the lab's DNS server could not listen")
    }

    private static func udp(
        _ responder: LabDNSResponder, group: any EventLoopGroup, host: String, port: Int
    ) async throws -> (channels: [any Channel], port: Int) {
        do {
            let channel = try await DatagramBootstrap(group: group)
                .channelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(LabDNSDatagramHandler(responder: responder))
                    }
                }
                .bind(host: host, port: port).get()
            return ([channel], channel.localAddress?.port ?? port)
        } catch {
            throw LabError("the lab's DNS server cannot listen on UDP \(host) port \(port): \(error)")
        }
    }

    private static func tcp(
        _ responder: LabDNSResponder, group: any EventLoopGroup, host: String, port: Int,
        connections: LabConnections
    ) async throws -> (channels: [any Channel], port: Int) {
        do {
            let channel = try await bindStreamServer(group: group, host: host, port: port, connections: connections) {
                LabDNSStreamHandler(responder: responder)
            }
            return ([channel], channel.localAddress?.port ?? port)
        } catch {
            throw LabError("the lab's DNS server cannot listen on TCP \(host) port \(port): \(error)")
        }
    }
}

/// DNS over UDP: one datagram in, one datagram back (after the name's delay).
final class LabDNSDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let responder: LabDNSResponder

    init(responder: LabDNSResponder) { self.responder = responder }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // `udp53-filtered`: the query is dropped as a filter on the path would, with no reply.
        if responder.networkFaults.contains(.udp53Filtered) { return }
        let envelope = unwrapInboundIn(data)
        guard let (reply, delay) = responder.reply(Array(envelope.data.readableBytesView), overTCP: false) else {
            return
        }
        let channel = context.channel
        let out = AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: channel.allocator.buffer(bytes: reply))
        if delay > 0 {
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(delay * 1000))) {
                channel.writeAndFlush(out, promise: nil)
            }
        } else {
            channel.writeAndFlush(out, promise: nil)
        }
    }
}

/// DNS over TCP: messages framed by a two-byte length (RFC 1035 4.2.2), answered in order.
final class LabDNSStreamHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let responder: LabDNSResponder
    private var pending: [UInt8] = []

    init(responder: LabDNSResponder) { self.responder = responder }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending += Array(unwrapInboundIn(data).readableBytesView)
        while pending.count >= 2 {
            let length = Int(pending[0]) << 8 | Int(pending[1])
            guard pending.count >= 2 + length else { break }
            let message = Array(pending[2..<(2 + length)])
            pending.removeFirst(2 + length)
            guard let (reply, delay) = responder.reply(message, overTCP: true) else {
                context.close(promise: nil)
                return
            }
            let channel = context.channel
            let framed = [UInt8(reply.count >> 8), UInt8(reply.count & 0xff)] + reply
            let buffer = channel.allocator.buffer(bytes: framed)
            if delay > 0 {
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(delay * 1000))) {
                    channel.writeAndFlush(buffer, promise: nil)
                }
            } else {
                channel.writeAndFlush(buffer, promise: nil)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

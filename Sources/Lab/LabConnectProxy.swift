// The lab's recording HTTP CONNECT proxy (for the audit's proxy trap): each CONNECT's target is
// recorded in the ledger, then bytes are spliced both ways, to the lab's own addresses only.
import FoundationEssentials
import NIOCore
import NIOPosix

/// One CONNECT the lab's proxy was asked for.
public struct LabProxyTunnel: Sendable, Codable, Equatable {
    /// The target as the client named it, `host:port` (a name, or an IP the client resolved itself).
    public var target: String
    /// 200 when the tunnel opened; 403 for a target that is no lab address; 502 when it could not connect.
    public var status: Int
    public var time: Date
    /// The port the tunnel connected to the origin from: the origin sees it as the client's port.
    public var fromPort: Int?

    /// The target's host, lowercased, without brackets.
    public var host: String { hostWithoutPort(target).lowercased() }
    /// The target's port.
    public var port: Int? { LabConnectHandler.split(target)?.1 }
}

/// Binds the proxy and splices each tunnel.
enum LabConnectProxy {
    /// Binds on `host`:`port` (0: a free one); `address` maps a CONNECT host and port to the lab
    /// address to connect to, nil to refuse it (so nothing leaves the machine or the lab).
    static func start(
        group: any EventLoopGroup, host: String, port: Int, ledger: LabLedger, connections: LabConnections,
        address: @escaping @Sendable (String, Int) -> String?
    ) async throws -> (channel: any Channel, port: Int) {
        do {
            let channel = try await bindStreamServer(group: group, host: host, port: port, connections: connections) {
                LabConnectHandler(ledger: ledger, address: address)
            }
            return (channel, channel.localAddress?.port ?? port)
        } catch {
            throw LabError("the lab's proxy cannot listen on \(host) port \(port): \(error)")
        }
    }
}

/// Reads one CONNECT request, records it, connects, answers 200 and then splices.
final class LabConnectHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let ledger: LabLedger
    private let address: @Sendable (String, Int) -> String?
    private var head: [UInt8] = []
    private var asked = false
    /// Bytes the client sent after its request head, for the origin once the tunnel opens.
    private var early: [UInt8] = []

    init(ledger: LabLedger, address: @escaping @Sendable (String, Int) -> String?) {
        self.ledger = ledger
        self.address = address
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !asked else {
            early += Array(unwrapInboundIn(data).readableBytesView)
            return
        }
        head += Array(unwrapInboundIn(data).readableBytesView)
        guard let end = Self.endOfHead(head) else {
            if head.count > 16_384 { context.close(promise: nil) }
            return
        }
        asked = true
        early = Array(head[end...])
        let firstLine = String(decoding: head.prefix { $0 != 0x0d && $0 != 0x0a }, as: UTF8.self)
        let words = firstLine.split(separator: " ")
        let client = context.channel
        guard words.count == 3, words[0] == "CONNECT", let (host, port) = Self.split(String(words[1])) else {
            Self.answer(client, 405, "the lab's proxy takes CONNECT host:port only")
            return
        }
        let target = String(words[1])
        guard let connectTo = address(host, port) else {
            ledger.record(LabProxyTunnel(target: target, status: 403, time: Date(), fromPort: nil))
            Self.answer(client, 403, "the lab's proxy reaches the lab's own names, addresses and ports only")
            return
        }
        let ledger = ledger
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop).connect(host: connectTo, port: port).whenComplete { result in
            switch result {
            case .failure:
                ledger.record(LabProxyTunnel(target: target, status: 502, time: Date(), fromPort: nil))
                Self.answer(client, 502, "the lab's proxy cannot connect to \(target)")
            case .success(let origin):
                // The client may have gone while the tunnel was connecting: then nobody holds the origin.
                guard client.isActive else {
                    origin.close(promise: nil)
                    return
                }
                ledger.record(
                    LabProxyTunnel(target: target, status: 200, time: Date(), fromPort: origin.localAddress?.port))
                let rest = handler.value.early
                do {
                    client.pipeline.syncOperations.removeHandler(handler.value).whenComplete { _ in }
                    try client.pipeline.syncOperations.addHandler(LabSplice(to: origin))
                    try origin.pipeline.syncOperations.addHandler(LabSplice(to: client))
                } catch {
                    client.close(promise: nil)
                    origin.close(promise: nil)
                    return
                }
                client.writeAndFlush(
                    client.allocator.buffer(string: "HTTP/1.1 200 Connection established\r\n\r\n"), promise: nil)
                if !rest.isEmpty { origin.writeAndFlush(origin.allocator.buffer(bytes: rest), promise: nil) }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

    /// The index just past the blank line ending the request head.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index - 3] == 0x0d && bytes[index - 2] == 0x0a && bytes[index - 1] == 0x0d
            && bytes[index] == 0x0a
        {
            return index + 1
        }
        return nil
    }

    /// `host:port` or `[v6]:port`.
    static func split(_ target: String) -> (String, Int)? {
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]),
            (1...65_535).contains(port)
        else { return nil }
        let host = hostWithoutPort(target)
        return host.isEmpty ? nil : (host, port)
    }

    private static func answer(_ channel: any Channel, _ status: Int, _ text: String) {
        let reason = [403: "Forbidden", 405: "Method Not Allowed", 502: "Bad Gateway"][status] ?? "Error"
        let body = text + "\n"
        let response =
            "HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        channel.writeAndFlush(channel.allocator.buffer(string: response)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

/// One direction of a tunnel: what arrives is written to the other channel; closing closes both.
final class LabSplice: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let other: any Channel

    init(to other: any Channel) { self.other = other }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        other.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        other.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

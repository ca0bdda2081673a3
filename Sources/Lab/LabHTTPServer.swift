// The lab's NIO plumbing: one listener per origin or service, plain HTTP or TLS with the
// certificate chosen from the client's SNI, and a handler that turns each request into a response.
import FoundationEssentials
import FoundationGaps
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

/// One request as a lab server saw it.
struct LabRequest: Sendable {
    var method: String
    /// Request target as sent, path and query.
    var target: String
    var path: String
    /// Query parameters, percent-decoded; the first value of a repeated name wins.
    var query: [String: String]
    var headers: HTTPHeaders
    var body: [UInt8]
    /// The whole body length, even beyond what `body` keeps.
    var bodyLength: Int
    /// The TLS server name the client sent; nil for none or plain HTTP.
    var sni: String?
    var remoteAddress: String?
    /// The port the request came from (a proxy's tunnel is told by it).
    var remotePort: Int? = nil
    /// The port the request came to: the one that works for its scheme at every service address.
    var localPort: Int? = nil
    /// The address the request came to.
    var localAddress: String? = nil

    var host: String { headers.first(name: "host") ?? "" }
}

/// What a lab server answers.
struct LabResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    /// Wait this long before the first byte.
    var delay: Double = 0
    /// Close the connection without answering (the HTTPDNS service while `down`).
    var hangsUp = false
    /// A reason phrase of the origin's own, sent as it is (the hostile origin's escapes).
    var reason: String? = nil

    static let hangUp = LabResponse(status: 0, headers: [], body: [], hangsUp: true)

    static func text(_ status: Int, _ text: String, delay: Double = 0) -> LabResponse {
        LabResponse(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8),
            delay: delay)
    }

    static func json(_ status: Int, _ text: String) -> LabResponse {
        LabResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }
}

/// Answers one request; may complete later (the fault switch awaits listeners).
typealias LabResponder = @Sendable (LabRequest, any EventLoop) -> EventLoopFuture<LabResponse>

/// How a listener speaks TLS: a context per SNI name and one for every other client.
struct LabTLS: Sendable {
    var byName: [String: NIOSSLContext]
    var fallback: NIOSSLContext
}

/// The channels a lab has accepted, so shutdown and `down` can close them all.
final class LabConnections: Sendable {
    private let channels = Locked<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        channels.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { _ in
            self.channels.withLock { _ = $0.removeValue(forKey: id) }
        }
    }

    func closeAll() async {
        let open = channels.withLock { Array($0.values) }
        for channel in open { try? await channel.close() }
    }
}

/// One lab server: where it listens, whether it speaks TLS, and who answers.
struct LabServer: Sendable {
    var role: LabRole
    var addresses: [String]
    var tls: LabTLS?
    var respond: LabResponder
    /// Where each TLS handshake is recorded, under this origin name; nil records none.
    var handshakes: (ledger: LabLedger, origin: String)? = nil

    /// How every listener of this server accepts: TLS by SNI (or plain), then HTTP/1.1 to the responder.
    func bootstrap(group: any EventLoopGroup, connections: LabConnections) -> ServerBootstrap {
        let tls = tls
        let respond = respond
        let handshakes = handshakes
        return ServerBootstrap(group: group)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                connections.add(channel)
                guard let tls else {
                    return channel.eventLoop.makeCompletedFuture {
                        // No outbound validation: the hostile origin sends what a broken server would.
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                            withOutboundHeaderValidation: false)
                        try channel.pipeline.syncOperations.addHandler(LabHTTPHandler(sni: nil, respond: respond))
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let sni = SNIHandler { result in
                        var name: String?
                        if case .hostname(let hostname) = result { name = hostname.lowercased() }
                        let context = name.flatMap { tls.byName[$0] } ?? tls.fallback
                        return channel.eventLoop.makeCompletedFuture {
                            let pipeline = channel.pipeline.syncOperations
                            try pipeline.addHandler(NIOSSLServerHandler(context: context))
                            if let handshakes {
                                try pipeline.addHandler(
                                    LabHandshakeRecorder(
                                        ledger: handshakes.ledger, origin: handshakes.origin, sni: name))
                            }
                            try pipeline.configureHTTPServerPipeline(withOutboundHeaderValidation: false)
                            try pipeline.addHandler(LabHTTPHandler(sni: name, respond: respond))
                        }
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(sni))
                }
            }
    }
}

/// Collects one HTTP/1.1 request, asks the responder, writes the answer (after its delay).
final class LabHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bodies are counted in full but kept only up to this size (only /echo sees big ones).
    private static let keptBodyBytes = 1 << 20

    private let sni: String?
    private let respond: LabResponder
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyLength = 0

    init(sni: String?, respond: @escaping LabResponder) {
        self.sni = sni
        self.respond = respond
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            bodyLength = 0
            if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                context.writeAndFlush(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        case .body(var buffer):
            bodyLength += buffer.readableBytes
            if body.count < Self.keptBodyBytes, let bytes = buffer.readBytes(length: buffer.readableBytes) {
                body.append(contentsOf: bytes.prefix(Self.keptBodyBytes - body.count))
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = LabRequest(
                method: head.method.rawValue, target: head.uri, path: Self.path(of: head.uri),
                query: Self.query(of: head.uri), headers: head.headers, body: body, bodyLength: bodyLength,
                sni: sni, remoteAddress: context.channel.remoteAddress?.ipAddress,
                remotePort: context.channel.remoteAddress?.port, localPort: context.channel.localAddress?.port,
                localAddress: context.channel.localAddress?.ipAddress)
            body = []
            let keepAlive = head.isKeepAlive
            let version = head.version
            let loop = context.eventLoop.assumeIsolated()
            respond(request, context.eventLoop).assumeIsolated().whenComplete { result in
                let response =
                    (try? result.get()) ?? LabResponse.text(500, "lab error\n")
                if response.delay > 0 {
                    loop.scheduleTask(in: .milliseconds(Int64(response.delay * 1000))) {
                        self.write(response, version: version, keepAlive: keepAlive, context: context)
                    }
                } else {
                    self.write(response, version: version, keepAlive: keepAlive, context: context)
                }
            }
        }
    }

    private func write(_ response: LabResponse, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        if response.hangsUp {
            context.close(promise: nil)
            return
        }
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let status =
            response.reason.map { HTTPResponseStatus.custom(code: UInt(response.status), reasonPhrase: $0) }
            ?? HTTPResponseStatus(statusCode: response.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    static func path(of target: String) -> String {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return String(path)
    }

    static func query(of target: String) -> [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].percentDecoded ?? String(parts[0])
            let value = parts.count > 1 ? (parts[1].percentDecoded ?? String(parts[1])) : ""
            if query[name] == nil { query[name] = value }
        }
        return query
    }
}

/// Records how one TLS handshake ended, once the connection closes: whether the server saw it
/// complete and the first error or alert (under TLS 1.3 the server finishes its side before the
/// client has checked the certificate, so a refusing client shows as an alert after completion).
final class LabHandshakeRecorder: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    private let ledger: LabLedger
    private let origin: String
    private let sni: String?
    private let started = Date()
    private var completed = false
    private var failure: String?
    private var recorded = false

    init(ledger: LabLedger, origin: String, sni: String?) {
        self.ledger = ledger
        self.origin = origin
        self.sni = sni
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { completed = true }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failure == nil { failure = Self.reason(error) }
        context.fireErrorCaught(error)
    }

    /// BoringSSL's reason (`SSLV3_ALERT_BAD_CERTIFICATE`) out of its long error text, else the text.
    static func reason(_ error: any Error) -> String {
        let text = "\(error)"
        if text == "uncleanShutdown" { return "closed without TLS close_notify" }
        guard let marker = text.firstRange(of: "OPENSSL_internal:") else { return text }
        return String(text[marker.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !recorded {
            recorded = true
            ledger.record(
                LabTLSHandshake(
                    origin: origin, sni: sni, completed: completed,
                    failure: failure ?? (completed ? nil : "the client closed the connection during the handshake"),
                    time: started, localAddress: context.channel.localAddress?.ipAddress))
        }
        context.fireChannelInactive()
    }
}

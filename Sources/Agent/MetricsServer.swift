// A tiny NIO HTTP/1.1 server for `--metrics-listen`: GET /metrics renders the registry in the
// Prometheus text format (swift-prometheus writes it); anything else is 404.
import NIOCore
import NIOHTTP1
import NIOPosix

/// Serves `/metrics` until `close()`.
public final class MetricsServer: Sendable {
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    /// The address it listens on (the port the kernel chose when asked for 0).
    public let host: String
    public let port: Int

    /// Binds and starts serving.
    ///
    /// - Parameters:
    ///   - host: the address to listen on (`127.0.0.1`, `0.0.0.0`, `::`).
    ///   - port: the port; 0 lets the kernel choose.
    ///   - render: the body of one scrape.
    /// - Throws: `AgentSettingError` when the address cannot be bound.
    public init(host: String, port: Int, render: @escaping @Sendable () -> [UInt8]) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(MetricsHandler(render: render))
                }
            }
        do {
            channel = try await bootstrap.bind(host: host, port: port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw AgentSettingError(
                "cannot listen on \(host):\(port) for --metrics-listen: \(error); choose a free port or address")
        }
        self.group = group
        self.host = host
        self.port = channel.localAddress?.port ?? port
    }

    /// Stops listening and closes open scrapes.
    public func close() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Answers each request on one connection; keep-alive as the client asks.
private final class MetricsHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let render: @Sendable () -> [UInt8]
    private var head: HTTPRequestHead?

    init(render: @escaping @Sendable () -> [UInt8]) { self.render = render }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
        case .body:
            break
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
        let status: HTTPResponseStatus
        let body: [UInt8]
        var contentType = "text/plain; charset=utf-8"
        if path == "/metrics" && (request.method == .GET || request.method == .HEAD) {
            status = .ok
            body = render()
            contentType = "text/plain; version=0.0.4; charset=utf-8"
        } else if path == "/metrics" {
            status = .methodNotAllowed
            body = Array("GET /metrics\n".utf8)
        } else {
            status = .notFound
            body = Array("ipdirect agent serves /metrics only\n".utf8)
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: "\(body.count)")
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
            promise: nil)
        if request.method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

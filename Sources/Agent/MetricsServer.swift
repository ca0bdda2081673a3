// A tiny NIO HTTP/1.1 server for `--metrics-listen`: GET /metrics renders the registry in the
// Prometheus text format (swift-prometheus writes it), GET /probe probes now; within its limits.
import Crypto
import Dispatch
import FoundationEssentials
import FoundationGaps
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NameResolution

/// Serves `/metrics`, and `/probe` when given a `ProbeEndpoint`, until `close()`.
///
/// Whatever its network does, it stays within `MetricsListenerLimits`; from SwiftNIO it uses:
/// - `AcceptBackoffHandler` on the server channel: accept pauses a second on EMFILE, ENFILE,
///   ENOBUFS, ENOMEM (ServerBootstrap's future-based `bind` does not add it, and without it
///   accept spins on a readable listening socket);
/// - a handler of its own before NIO's accept handler for the connection cap (`ConnectionCap`),
///   which stops accepting (autoRead off) while it is full, leaving new connections in the backlog;
/// - `IdleStateHandler` (read idle) for connections that send nothing;
/// - the HTTP decoder's `NIOHTTPDecoderLimitConfiguration` for the size of a request's head;
/// - `HTTPServerPipelineHandler` (pipelining assistance): it hands over one request at a time and
///   stops reading while a response is pending. The responder below keeps that response pending
///   until the socket has taken it and the channel is writable, so a peer that does not read
///   gets nothing rendered for it, and what is read ahead is bounded by one small read.
public final class MetricsServer: Sendable {
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let auth: ListenerAuth?

    /// The address it listens on (the port the kernel chose when asked for 0).
    public let host: String
    public let port: Int
    /// The limits in force.
    public let limits: MetricsListenerLimits

    /// Binds and starts serving.
    ///
    /// - Parameters:
    ///   - host: the address to listen on (`127.0.0.1`, `0.0.0.0`, `::`).
    ///   - port: the port; 0 lets the kernel choose.
    ///   - limits: connections, timeouts and request size.
    ///   - metrics: where the listener counts its connections and the agent's resource errors.
    ///   - logger: where a full listener and an accept out of descriptors are said, once a minute.
    ///   - probe: answers `/probe`; nil leaves `/metrics` alone.
    ///   - web: TLS and basic auth (`--web-config-file`); nil serves plain HTTP to anyone.
    ///   - crypt: computes a password's hash with a user's; nil for crypt_r (a test counts or
    ///     holds calls).
    ///   - render: the body of one scrape.
    /// - Throws: `AgentSettingError` when the address cannot be bound.
    public init(
        host: String, port: Int, limits: MetricsListenerLimits = .standard, metrics: AgentMetrics? = nil,
        logger: Logger? = nil, probe: ProbeEndpoint? = nil, web: ListenerWebConfig? = nil,
        crypt: ListenerAuth.Crypt? = nil,
        render: @escaping @Sendable () -> [UInt8]
    ) async throws {
        let tls = try Self.tlsContext(web)
        let auth = web.flatMap {
            $0.users.isEmpty ? nil : ListenerAuth(users: $0.users, crypt: crypt ?? ListenerWebConfig.crypt)
        }
        // One thread: the connection table is touched only there.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let table = ConnectionTable(limits: limits, metrics: metrics, logger: logger)
        let decoderLimits = {
            var decoderLimits = NIOHTTPDecoderLimitConfiguration()
            decoderLimits.maxHeaderFieldSize = limits.requestBytes
            decoderLimits.maxHeaderListSize = limits.requestBytes
            decoderLimits.maxHeaderFieldCount = 100
            return decoderLimits
        }()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            // Past the cap, what one read accepted is held until there is room: a few.
            .serverChannelOption(.maxMessagesPerRead, value: UInt(MetricsListenerLimits.acceptedPerRead))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        AcceptBackoffHandler(shouldForwardIOErrorCaught: false, backoffProvider: table.acceptFailed),
                        ConnectionCap(table))
                }
            }
            // A small read at a time: what the pipelining handler holds while an answer is
            // pending is what one read brought.
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelOption(
                .recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 8192)
            )
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let responder = MetricsResponder(table: table, probe: probe, auth: auth, render: render)
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
                    try pipeline.addHandlers(
                        IdleStateHandler(readTimeout: TimeAmount(limits.idleTimeout)), RequestClock(responder))
                    try pipeline.configureHTTPServerPipeline(
                        withPipeliningAssistance: true, withErrorHandling: true,
                        withEncoderConfiguration: HTTPResponseEncoder.Configuration(),
                        withDecoderLimitConfiguration: decoderLimits)
                    try pipeline.addHandler(responder)
                }
            }
        do {
            channel = try await bootstrap.bind(host: host, port: port).get()
        } catch {
            await auth?.close()
            try? await group.shutdownGracefully()
            // NIO's words are its call and errno ("bind(descriptor:ptr:bytes:): Address already in use");
            // a person wants what it means and what to do.
            let reason = (error as? IOError).map { SystemReason.words($0.errnoCode) } ?? "\(error)"
            throw AgentSettingError("cannot listen on \(host):\(port) for ", .metricsListen, ": \(reason)")
        }
        self.group = group
        self.auth = auth
        self.host = host
        self.port = channel.localAddress?.port ?? port
        self.limits = limits
    }

    /// The TLS context `web` asks for; nil for plain HTTP.
    private static func tlsContext(_ web: ListenerWebConfig?) throws(AgentSettingError) -> NIOSSLContext? {
        guard let files = web?.tls else { return nil }
        // Checked before NIOSSL opens them: a FIFO would block the agent's start for ever.
        for (setting, path) in [("cert_file", files.certificateFile), ("key_file", files.keyFile)] {
            do {
                try TextFile.requireRegularFile(path)
            } catch {
                throw AgentSettingError(.webConfigFile, ": \(setting) \(path): \(error.reason)")
            }
        }
        // NIOSSL's errors are enum names (failedToLoadCertificate): each step says what is wrong instead.
        let chain: [NIOSSLCertificateSource]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificateFile).map { .certificate($0) }
        } catch {
            throw AgentSettingError(
                .webConfigFile,
                ": cert_file \(files.certificateFile): it holds no certificate that can be read; it needs one or more PEM certificates (-----BEGIN CERTIFICATE-----)"
            )
        }
        guard !chain.isEmpty else {
            throw AgentSettingError(
                .webConfigFile,
                ": cert_file \(files.certificateFile): it holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
            )
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.keyFile, format: .pem)
        } catch {
            throw AgentSettingError(
                .webConfigFile,
                ": key_file \(files.keyFile): it holds no private key that can be read; it needs an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)"
            )
        }
        do {
            return try NIOSSLContext(
                configuration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
        } catch {
            throw AgentSettingError(
                .webConfigFile,
                ": cannot serve TLS with cert_file \(files.certificateFile) and key_file \(files.keyFile): the key does not belong to the certificate, or TLS refused them"
            )
        }
    }

    /// Stops listening and closes open scrapes.
    public func close() async {
        try? await channel.close()
        // Checks still queued are dropped; one under way is not waited for.
        await auth?.close()
        try? await group.shutdownGracefully()
    }
}

/// Before the HTTP decoder: tells the responder when bytes of a request arrive, which starts the
/// request's clock (the decoder says nothing until a head is complete).
private final class RequestClock: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let responder: MetricsResponder

    init(_ responder: MetricsResponder) { self.responder = responder }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        responder.requestBytesArrived()
        context.fireChannelRead(data)
    }
}

/// Answers each request on one connection, one at a time; keep-alive as the client asks.
private final class MetricsResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let table: ConnectionTable
    private let probe: ProbeEndpoint?
    private let auth: ListenerAuth?
    private let render: @Sendable () -> [UInt8]
    private var context: ChannelHandlerContext?
    /// The request being read, and its body's size so far.
    private var head: HTTPRequestHead?
    private var bodyBytes = 0
    /// A complete request whose answer waits for the one before it to be taken.
    private var queued: HTTPRequestHead?
    /// An answer is written and not yet all taken by the socket.
    private var answering = false
    private var requestDeadline: Scheduled<Void>?
    private var writeDeadline: Scheduled<Void>?

    init(
        table: ConnectionTable, probe: ProbeEndpoint?, auth: ListenerAuth?, render: @escaping @Sendable () -> [UInt8]
    ) {
        self.table = table
        self.probe = probe
        self.auth = auth
        self.render = render
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        requestDeadline?.cancel()
        writeDeadline?.cancel()
        self.context = nil
    }

    /// Bytes of a request came: it must be complete within `requestTimeout` of the first of them.
    func requestBytesArrived() {
        guard let context, requestDeadline == nil, !answering, queued == nil else { return }
        requestDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(table.limits.requestTimeout)) {
            self.close(because: .slowRequest)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
            bodyBytes = 0
        case .body(let part):
            bodyBytes += part.readableBytes
            if bodyBytes > table.limits.requestBytes { refuseTooLarge() }
        case .end:
            requestDeadline?.cancel()
            requestDeadline = nil
            guard let request = head else { return }
            head = nil
            queued = request
            answerQueued()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        answerQueued()
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Read idle is expected while an answer is pending (reading stops then); the write
        // deadline watches that case.
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read, !answering, queued == nil {
            close(because: .idle)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The protocol error handler has answered 400 and the decoder closes the connection.
        if let parserError = error as? HTTPParserError, parserError == .headerOverflow {
            table.closed(because: .tooLarge)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        requestDeadline?.cancel()
        writeDeadline?.cancel()
        context.fireChannelInactive()
    }

    /// Renders and writes the queued request's answer, unless one is still being taken or the
    /// channel is not writable: a peer that does not read gets nothing rendered for it.
    private func answerQueued() {
        guard let context, !answering, context.channel.isWritable, let request = queued else { return }
        queued = nil
        answering = true
        table.answering(context.channel)
        guard let auth else {
            route(request, context: context)
            return
        }
        // bcrypt takes tens of milliseconds: checked on auth's own thread, the answer comes back
        // to the loop.
        let channel = context.channel
        let checked = auth.authorizes(
            request.headers.first(name: "Authorization"), on: context.eventLoop, while: { channel.isActive })
        checked.assumeIsolated().whenComplete { result in
            guard let context = self.context, context.channel.isActive else { return }
            guard case .success(let authorized) = result else {
                // The listener is closing: auth checks no more.
                context.close(promise: nil)
                return
            }
            if authorized {
                self.route(request, context: context)
            } else {
                self.send(
                    EndpointAnswer(
                        status: 401, contentType: "text/plain; charset=utf-8",
                        body: Array("the agent's listener needs a user and password (basic auth)\n".utf8),
                        headers: ["WWW-Authenticate": "Basic realm=\"ipdirect\""]),
                    to: request, context: context)
            }
        }
    }

    /// Answers an authorized request: `/probe` off the event loop, anything else at once.
    private func route(_ request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let probe, Self.path(request) == "/probe", request.method == .GET else {
            send(answer(request), to: request, context: context)
            return
        }
        // The probe runs off the event loop; its answer comes back to it. Meanwhile the
        // connection counts as answered (no idle close) and reads nothing more.
        let promise = context.eventLoop.makePromise(of: EndpointAnswer.self)
        let uri = request.uri
        let scrapeTimeout = request.headers.first(name: "X-Prometheus-Scrape-Timeout-Seconds")
        promise.completeWithTask { await probe.answer(uri: uri, scrapeTimeout: scrapeTimeout) }
        promise.futureResult.assumeIsolated().whenSuccess { answer in
            guard let context = self.context, context.channel.isActive else { return }
            self.send(answer, to: request, context: context)
        }
    }

    /// Writes `answer`; once the socket has taken it, the next queued request is answered.
    private func send(_ answer: EndpointAnswer, to request: HTTPRequestHead, context: ChannelHandlerContext) {
        writeDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(table.limits.writeTimeout)) {
            self.close(because: .slowReader)
        }
        let body = answer.body
        let keepAlive = request.isKeepAlive
        let written = write(
            HTTPResponseStatus(statusCode: answer.status), contentType: answer.contentType,
            body: request.method == .HEAD ? nil : body, length: body.count, version: request.version,
            keepAlive: keepAlive, context: context, extraHeaders: answer.headers)
        written.assumeIsolated().whenComplete { result in
            self.writeDeadline?.cancel()
            self.writeDeadline = nil
            self.answering = false
            guard case .success = result, keepAlive, let context = self.context else {
                self.context?.close(promise: nil)
                return
            }
            self.table.waiting(context.channel)
            // On the next tick: a socket that takes each answer at once would otherwise answer
            // every pipelined request inside this callback, one stack frame deeper each time.
            context.eventLoop.assumeIsolated().execute { self.answerQueued() }
        }
    }

    /// The path of a request, without its query.
    private static func path(_ request: HTTPRequestHead) -> Substring {
        request.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// The answer to any request but a `/probe` the endpoint runs.
    private func answer(_ request: HTTPRequestHead) -> EndpointAnswer {
        let path = Self.path(request)
        if path == "/metrics" && (request.method == .GET || request.method == .HEAD) {
            return EndpointAnswer(status: 200, contentType: EndpointAnswer.expositionType, body: render())
        } else if path == "/metrics" {
            return .sentence(405, "GET /metrics")
        } else if path == "/probe" && probe != nil {
            return .sentence(405, "GET /probe?target=URL")
        }
        return .sentence(
            404, probe == nil ? "ipdirect agent serves /metrics only" : "ipdirect agent serves /metrics and /probe")
    }

    /// Writes one response; the future completes when the socket has taken all of it.
    private func write(
        _ status: HTTPResponseStatus, contentType: String, body: [UInt8]?, length: Int, version: HTTPVersion,
        keepAlive: Bool, context: ChannelHandlerContext, extraHeaders: [String: String] = [:]
    ) -> EventLoopFuture<Void> {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        for (name, value) in extraHeaders.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: "\(length)")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
        if let body {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        return context.writeAndFlush(wrapOutboundOut(.end(nil)))
    }

    /// A body past the limit: 413 when no answer is under way, then the connection is closed.
    private func refuseTooLarge() {
        guard let context, let request = head else { return }
        head = nil
        table.closed(because: .tooLarge)
        guard !answering else {
            context.close(promise: nil)
            return
        }
        answering = true
        let body = Array("a request to /metrics has no body\n".utf8)
        write(
            .payloadTooLarge, contentType: "text/plain; charset=utf-8", body: body, length: body.count,
            version: request.version, keepAlive: false, context: context
        ).assumeIsolated().whenComplete { _ in self.context?.close(promise: nil) }
    }

    private func close(because reason: ListenerCloseReason) {
        guard let context, context.channel.isActive else { return }
        table.closed(because: reason)
        context.close(promise: nil)
    }
}

/// The listener's basic auth: its users, the checks already made, and the one thread bcrypt
/// runs on, so checks never hold the event loop or Swift's few cooperative threads (a scrape,
/// a probe, shutdown), and run one at a time, as exporter-toolkit runs them. Checks waiting are
/// as many as connections are open: the listener's connection cap bounds them.
public final class ListenerAuth: Sendable {
    /// Computes a password's hash with a user's hash as its setting (crypt_r).
    public typealias Crypt = @Sendable (_ password: String, _ setting: String) -> String?

    private let users: [String: String]
    private let crypt: Crypt
    private let thread: NIOThreadPool
    /// For a name not in the file: a bcrypt setting at the users' highest cost, checked as a
    /// hash would be, so an unknown user's answer takes as long as a known one's (exporter-toolkit
    /// checks a fixed hash the same way).
    private let standIn: String
    /// What checks found, keyed by an HMAC of (user, hash, password) under a key made at start:
    /// never the password, nor a plain digest that guesses could be tried against faster than
    /// bcrypt.
    private let key = SymmetricKey(size: .bits256)
    private let checked = Locked(CheckedPairs())
    /// The answers not given yet. Each is given once: by the check when it ends, or failed by
    /// `close()` while the listener's event loops still run. A check that ends after `close()`
    /// finds its answer gone and sends nothing to a loop that has shut down (NIO warns of that
    /// today and means to stop the process for it).
    private let unanswered = Locked(UnansweredChecks())

    init(users: [String: String], crypt: @escaping Crypt) {
        self.users = users
        self.crypt = crypt
        let cost =
            users.values.compactMap { hash in
                hash.split(separator: "$", omittingEmptySubsequences: false).dropFirst(2).first.flatMap { Int($0) }
            }.max() ?? 10
        // OpenBSD's test vectors' salt: 22 characters of bcrypt's alphabet, the last one canonical.
        standIn = String(cFormat: "$2b$%02d$", cost) + "CCCCCCCCCCCCCCCCCCCCC."
        thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
    }

    deinit { thread.shutdownGracefully { _ in } }

    /// Whether an `Authorization` header names a user and its password, answered on `eventLoop`.
    /// Each (user, hash, password) is checked once and its answer remembered, a wrong one too:
    /// a scrape every few seconds does not pay for bcrypt each time, nor does a repeated guess.
    ///
    /// - Parameter wanted: asked before bcrypt runs; false (the client has gone) skips it.
    /// - Returns: fails only once `close()` has been called.
    func authorizes(
        _ header: String?, on eventLoop: any EventLoop, while wanted: @escaping @Sendable () -> Bool
    )
        -> EventLoopFuture<Bool>
    {
        guard let credentials = ListenerWebConfig.credentials(header) else {
            return eventLoop.makeSucceededFuture(false)
        }
        let (user, password) = credentials
        let known = users[user] != nil
        let hash = users[user] ?? standIn
        // Lengths first: no two different triples run together into the same bytes.
        let triple = Data("\(user.utf8.count):\(user)\(hash.utf8.count):\(hash)\(password)".utf8)
        let fingerprint = Data(HMAC<SHA256>.authenticationCode(for: triple, using: key))
        if let passed = checked.withLock({ $0.result(fingerprint) }) { return eventLoop.makeSucceededFuture(passed) }
        let crypt = crypt
        let checked = checked
        let unanswered = unanswered
        let promise = eventLoop.makePromise(of: Bool.self)
        guard let number = unanswered.withLock({ $0.add(promise) }) else {
            promise.fail(NIOThreadPoolError.ThreadPoolInactive())
            return promise.futureResult
        }
        thread.submit { state in
            let outcome: Result<Bool, any Error>
            if state != .active {
                outcome = .failure(NIOThreadPoolError.ThreadPoolInactive())
            } else if !wanted() {
                outcome = .success(false)
            } else {
                // Computed for an unknown user too: the time is the point.
                let computed = crypt(password, hash)
                let passed = known && ListenerWebConfig.matches(computed, hash: hash)
                checked.withLock { $0.remember(fingerprint, passed: passed) }
                outcome = .success(passed)
            }
            // Under the lock: close() cannot fail the answer and let the loops stop in between.
            unanswered.withLock { $0.take(number)?.completeWith(outcome) }
        }
        return promise.futureResult
    }

    /// Drops the checks still waiting and fails every answer not given (while the event loop
    /// still runs), without waiting for a check under way.
    func close() async {
        for promise in unanswered.withLock({ $0.close() }) { promise.fail(NIOThreadPoolError.ThreadPoolInactive()) }
        // The pool says the waiting ones are cancelled on this queue, and then, once its thread
        // has ended, that it is done: what follows the first on the queue is all that is awaited.
        let queue = DispatchQueue(label: "ipdirect.listener-auth")
        thread.shutdownGracefully(queue: queue) { _ in }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in queue.async { done.resume() } }
    }
}

/// The basic-auth answers not given yet, by number; none is taken in once closed.
private struct UnansweredChecks {
    private var promises: [Int: EventLoopPromise<Bool>] = [:]
    private var next = 0
    private var closed = false

    /// Keeps `promise`; its number, or nil once closed.
    mutating func add(_ promise: EventLoopPromise<Bool>) -> Int? {
        guard !closed else { return nil }
        next += 1
        promises[next] = promise
        return next
    }

    /// The answer numbered `number`, for its check to give; nil when `close()` took it.
    mutating func take(_ number: Int) -> EventLoopPromise<Bool>? { promises.removeValue(forKey: number) }

    /// Every answer not given, for the closer to fail; none is kept after.
    mutating func close() -> [EventLoopPromise<Bool>] {
        closed = true
        defer { promises = [:] }
        return Array(promises.values)
    }
}

/// The answers of checks made, passes and failures apart and each bounded (the oldest goes
/// first), so a flood of wrong passwords cannot push out the users' own passes.
private struct CheckedPairs {
    static let passes = 64
    static let failures = 1024

    private var passed: (keys: Set<Data>, order: [Data]) = ([], [])
    private var failed: (keys: Set<Data>, order: [Data]) = ([], [])

    /// What the check of `key` found; nil when it has not been made.
    func result(_ key: Data) -> Bool? {
        passed.keys.contains(key) ? true : failed.keys.contains(key) ? false : nil
    }

    mutating func remember(_ key: Data, passed ok: Bool) {
        if ok {
            Self.insert(key, into: &passed, bound: Self.passes)
        } else {
            Self.insert(key, into: &failed, bound: Self.failures)
        }
    }

    private static func insert(_ key: Data, into kept: inout (keys: Set<Data>, order: [Data]), bound: Int) {
        guard kept.keys.insert(key).inserted else { return }
        kept.order.append(key)
        if kept.order.count > bound { kept.keys.remove(kept.order.removeFirst()) }
    }
}

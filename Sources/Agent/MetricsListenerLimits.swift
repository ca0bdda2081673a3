// What the /metrics listener lets its network have: a connection cap kept clear of the
// descriptors probing needs, timeouts, a request size, and the table that enforces the cap.
import FoundationEssentials
import Logging
import NIOCore
import NameResolution
import Probe
import Prometheus

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The limits of the `/metrics` listener.
public struct MetricsListenerLimits: Sendable, Equatable {
    /// Connections open at once. Past it a new connection takes the place of the one that has
    /// waited longest for a request, once that one has waited its grace (`evictionGrace`,
    /// `freshEvictionGrace`); until one has, the listener stops accepting and new connections wait
    /// in the kernel's backlog (never closed unanswered, never reset).
    public var connections: Int
    /// How long a connection that has had an answer must wait for its next request before a new
    /// one may take its place: a keep-alive client about to reuse it (a scraper, a load
    /// generator) is answered, not reset.
    public var evictionGrace: Duration = .milliseconds(250)
    /// The same for a connection that has sent nothing yet: long enough for the event loop to read
    /// a request that came with the connection, short enough that an idle flood holds nothing
    /// (with a cap of one, ten flood connections a second give way).
    public var freshEvictionGrace: Duration = .milliseconds(100)
    /// A connection that sends nothing for this long, while no answer is under way, is closed.
    public var idleTimeout: Duration
    /// From the first byte of a request to its end (a slowloris client is closed at this).
    public var requestTimeout: Duration
    /// An answer the peer has not taken within this is abandoned with its connection.
    public var writeTimeout: Duration
    /// The request line and headers together, and a body: past this the request is refused.
    public var requestBytes: Int

    /// A handful of Prometheus servers need a connection each; a minute's idle is a scrape
    /// interval; a scrape request is well under a kilobyte.
    public static let standard = MetricsListenerLimits(
        connections: 128, idleTimeout: .seconds(60), requestTimeout: .seconds(10), writeTimeout: .seconds(30),
        requestBytes: 8192)

    public init(
        connections: Int, idleTimeout: Duration, requestTimeout: Duration, writeTimeout: Duration,
        requestBytes: Int
    ) {
        self.connections = connections
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.writeTimeout = writeTimeout
        self.requestBytes = requestBytes
    }

    /// Descriptors probing needs with `urlsAtOnce` URLs under way: a socket for each scenario's
    /// request and one for its HTTPDNS query, and 64 for the rest (exporters' connections, the
    /// JSON Lines and cache files, event loops, CA files read per handshake).
    public static func probingReserve(urlsAtOnce: Int) -> Int {
        urlsAtOnce * (Scenario.allCases.count + 1) + 64
    }

    /// Connections the listener accepts in one read; past the cap, they are held (accepted, not
    /// yet served) until there is room.
    static let acceptedPerRead = 4

    /// These limits with the connection cap lowered where RLIMIT_NOFILE requires, so the listener
    /// never takes the descriptors kept for probing: the cap is at most the soft limit less the
    /// descriptors open now, less `reserve`, less one and the connections held past the cap
    /// (`acceptedPerRead`). It is at least 1, so /metrics can answer; `room` says whether that
    /// fits (nil when the limit is unknown or unlimited).
    ///
    /// - Parameter reserve: descriptors kept for probing (`probingReserve(urlsAtOnce:)`).
    public func leaving(_ reserve: Int) -> (limits: MetricsListenerLimits, room: Int?) {
        var limits = self
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return (limits, nil)
        }
        let open = max(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 1) - 1, 0)
        let room = Int(clamping: limit.rlim_cur) - open - reserve - 1 - Self.acceptedPerRead
        limits.connections = max(1, min(connections, room))
        return (limits, room)
    }
}

/// Why the listener closed a connection; the raw value is the `reason` metric label.
enum ListenerCloseReason: String, CaseIterable {
    /// The listener was full: the connection waiting longest (past its grace) made room.
    case full
    /// Nothing arrived for `idleTimeout` and no answer was under way.
    case idle
    /// A request was not complete within `requestTimeout` of its first byte.
    case slowRequest = "slow-request"
    /// The peer did not take an answer within `writeTimeout`.
    case slowReader = "slow-reader"
    /// Request headers or body past `requestBytes`.
    case tooLarge = "too-large"
}

/// The listener's series, made once so a flood costs no registry look-ups.
final class ListenerSeries: Sendable {
    let open: Gauge
    let closed: [ListenerCloseReason: Counter]
    let shortages: [ResourceShortage: Counter]

    init(_ metrics: AgentMetrics, limit: Int) {
        open = metrics.gauge("listener_connections", "", "Connections open to /metrics.", [])
        metrics.gauge("listener_connection_limit", "", "Connections /metrics keeps open at most.", []).set(
            to: Double(limit))
        closed = Dictionary(
            uniqueKeysWithValues: ListenerCloseReason.allCases.map { reason in
                (
                    reason,
                    metrics.counter(
                        "listener_connections_closed", "total",
                        "Connections /metrics closed: full, idle, slow-request, slow-reader, too-large.",
                        [("reason", reason.rawValue)])
                )
            })
        shortages = Dictionary(uniqueKeysWithValues: ResourceShortage.allCases.map { ($0, metrics.resourceErrors($0)) })
    }
}

extension AgentMetrics {
    /// `ipdirect_agent_resource_errors_total{resource}`: times the agent itself ran out of a
    /// resource (an accept of /metrics, an attempt that could not start), never a target's.
    public func resourceErrors(_ shortage: ResourceShortage) -> Counter {
        counter(
            "agent_resource_errors", "total",
            "Times the agent itself ran out of descriptors or memory (an accept, an attempt that could not start).",
            [("resource", shortage.rawValue)])
    }
}

/// The listener's open connections and the cap on them. Touched only on the listener's one
/// event loop (the server channel and every connection share it), hence unchecked Sendable.
final class ConnectionTable: @unchecked Sendable {
    private struct Entry {
        let channel: any Channel
        /// When it began waiting for a request; nil while it is answered.
        var waitingSince: NIODeadline?
        /// Whether it has had an answer (a keep-alive connection) or has sent nothing yet.
        var answered = false
    }

    let limits: MetricsListenerLimits
    private let series: ListenerSeries?
    private let logger: Logger?
    private var entries: [ObjectIdentifier: Entry] = [:]
    /// Told when a connection has gone (room for one held past the cap).
    var roomMade: (() -> Void)?
    private let fullReports = ReportThrottle(every: 60)
    private let shortageReports = ReportThrottle(every: 60)

    init(limits: MetricsListenerLimits, metrics: AgentMetrics?, logger: Logger?) {
        self.limits = limits
        self.series = metrics.map { ListenerSeries($0, limit: limits.connections) }
        self.logger = logger
    }

    /// Takes a new connection in, making room when full; false when there is no room yet (the
    /// caller holds it and stops accepting until `roomMade`, or until a grace has passed).
    func admit(_ channel: any Channel) -> Bool {
        let now = NIODeadline.now()
        if entries.count >= limits.connections {
            // Like nginx reusing keep-alive connections when out of them: a connection that has a
            // request answered keeps its place, the one idle longest gives it up; but only once it
            // has idled its grace, so a request on its way is answered, not reset.
            let grace = (fresh: TimeAmount(limits.freshEvictionGrace), answered: TimeAmount(limits.evictionGrace))
            // Bytes already in its socket are a request on its way: closing it would reset it.
            let oldest = entries.values.compactMap { entry -> (Entry, NIODeadline)? in
                guard let since = entry.waitingSince, since + (entry.answered ? grace.answered : grace.fresh) <= now
                else { return nil }
                return (entry, since)
            }
            .sorted { $0.1 < $1.1 }.lazy.map(\.0).first { !Self.hasUnreadBytes($0.channel) }
            guard let oldest else {
                reportFull()
                return false
            }
            closed(because: .full)
            reportFull()
            forget(oldest.channel, notifying: false)
            oldest.channel.close(promise: nil)
        }
        entries[ObjectIdentifier(channel)] = Entry(channel: channel, waitingSince: now)
        series?.open.set(to: Double(entries.count))
        channel.closeFuture.whenComplete { _ in self.forget(channel, notifying: true) }
        return true
    }

    /// Whether bytes wait unread in the connection's socket: SO_MEMINFO's first counter, its
    /// receive queue's memory; true when that cannot be told.
    private static func hasUnreadBytes(_ channel: any Channel) -> Bool {
        let meminfo = ChannelOptions.socketOption(NIOBSDSocket.Option(rawValue: 55))  // SO_MEMINFO
        guard let read = try? channel.syncOptions?.getOption(meminfo) else { return true }
        // NIO reads the option into an Int: the kernel wrote its first two u32 counters there, in
        // memory order, and the receive queue's is the first.
        let receiveQueue = withUnsafeBytes(of: read) { $0.load(as: UInt32.self) }
        return receiveQueue != 0
    }

    /// The connection has a request being answered: it keeps its place.
    func answering(_ channel: any Channel) {
        entries[ObjectIdentifier(channel)]?.waitingSince = nil
    }

    /// The connection's answer is written: it waits for a request, the newest to do so.
    func waiting(_ channel: any Channel) {
        entries[ObjectIdentifier(channel)]?.waitingSince = .now()
        entries[ObjectIdentifier(channel)]?.answered = true
    }

    /// Counts a connection the listener closed.
    func closed(because reason: ListenerCloseReason) {
        series?.closed[reason]?.increment()
    }

    /// What accept does after `error`: a second's pause when the agent is out of descriptors or
    /// memory (counted, and said once a minute), nil (go on) for anything else.
    ///
    /// NIO's ServerBootstrap keeps a server channel open on EMFILE, ENFILE, ENOBUFS and ENOMEM;
    /// with nothing to pause it, the listening socket stays readable and accept fails in a busy
    /// loop (the 100 % CPU seen under a flood). `AcceptBackoffHandler` asks this for the pause.
    func acceptFailed(_ error: IOError) -> TimeAmount? {
        guard let shortage = ResourceShortage(errno: error.errnoCode) else { return nil }
        series?.shortages[shortage]?.increment()
        shortageReports.report { suppressed in
            let more = suppressed > 0 ? " (\(suppressed) more since the last report)" : ""
            logger?.error(
                "/metrics could not accept a connection: \(shortage.sentence(.configuration)); accepting pauses a second, probing keeps its reserve\(more)",
                metadata: ["event": "agent-out-of-resources", "resource": "\(shortage.rawValue)"])
        }
        return .seconds(1)
    }

    /// Takes a closed connection out; `notifying` says so to `roomMade` (not when `admit` itself
    /// made the room).
    private func forget(_ channel: any Channel, notifying: Bool) {
        guard entries.removeValue(forKey: ObjectIdentifier(channel)) != nil else { return }
        series?.open.set(to: Double(entries.count))
        if notifying { roomMade?() }
    }

    private func reportFull() {
        fullReports.report { suppressed in
            let more = suppressed > 0 ? "; \(suppressed) more times since the last report" : ""
            logger?.warning(
                "/metrics has its \(limits.connections) connections open: new ones wait in the backlog, then each takes the place of the one waiting longest for a request\(more)",
                metadata: ["event": "metrics-listener-full"])
        }
    }
}

/// On the server channel, before NIO's accept handler: each accepted connection goes through
/// the table. With no room, it is held (accepted, not yet served) and accepting stops, so the
/// next ones wait in the kernel's backlog, until a connection closes or one has idled past its
/// grace. Touched only on the listener's event loop.
final class ConnectionCap: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let table: ConnectionTable
    private var context: ChannelHandlerContext?
    /// Accepted past the cap, oldest first: at most what one read accepts.
    private var held: [NIOAny] = []
    /// While connections are held: the next look for a connection idle past the grace.
    private var recheck: Scheduled<Void>?

    init(_ table: ConnectionTable) { self.table = table }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        table.roomMade = { [weak self] in self?.admitHeld() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        recheck?.cancel()
        table.roomMade = nil
        self.context = nil
        // Never registered: closing one only closes its socket (as NIO's AcceptHandler does).
        for data in held { unwrapInboundIn(data).close(promise: nil) }
        held = []
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        held.append(data)
        admitHeld()
    }

    /// Serves the held connections while there is room; accepts again once none is held.
    private func admitHeld() {
        guard let context else { return }
        while let first = held.first, table.admit(unwrapInboundIn(first)) {
            held.removeFirst()
            context.fireChannelRead(first)
        }
        let options = context.channel.syncOptions
        if held.isEmpty {
            recheck?.cancel()
            recheck = nil
            // Turning autoRead on again reads (accepts) at once.
            if (try? options?.getOption(.autoRead)) == false { try? options?.setOption(.autoRead, value: true) }
        } else {
            try? options?.setOption(.autoRead, value: false)
            if recheck == nil {
                let grace = TimeAmount(min(table.limits.freshEvictionGrace, table.limits.evictionGrace))
                recheck = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(grace.nanoseconds / 2)) {
                    self.recheck = nil
                    self.admitHeld()
                }
            }
        }
    }
}

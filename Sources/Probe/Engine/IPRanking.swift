// IPs ranked as the HTTPDNS SDKs rank them: a TCP connect to the URL's port on every address
// (non-blocking connect, poll, 2 s timeout, a few at once), fastest first, failures last.
import CurlTransport
import Dispatch
import FoundationEssentials
import FoundationGaps
import NameResolution
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One address of a host, with where it came from, how fast a TCP connect to it was, and
/// where the SDK would put it.
public struct RankedIP: Sendable, Codable, Equatable, Hashable {
    public var ip: IPAddress
    /// Every answer that gave this address (HTTPDNS or its cache, system DNS).
    public var sources: [IPSource]
    /// Milliseconds from `connect()` to the socket becoming writable; nil when it failed.
    public var connectMs: Double?
    /// Why the connect failed; nil when it worked.
    public var error: AttemptFailure?
    /// Position (1 first) in the list the SDK hands the app after ranking; nil for addresses
    /// only system DNS gave (the SDK ranks its HTTPDNS answer only).
    public var sdkRank: Int?
    /// The scenarios of the last probe that connected to this address.
    public var usedBy: [Scenario]

    public init(
        ip: IPAddress, sources: [IPSource], connectMs: Double? = nil, error: AttemptFailure? = nil,
        sdkRank: Int? = nil,
        usedBy: [Scenario] = []
    ) {
        self.ip = ip
        self.sources = sources
        self.connectMs = connectMs
        self.error = error
        self.sdkRank = sdkRank
        self.usedBy = usedBy
    }
}

/// Every address of a host ranked by TCP connect time, the way the Alibaba iOS SDK's
/// `HttpdnsTCPSpeedTester` ranks an HTTPDNS answer: ascending connect time, an address that
/// did not connect counted as the timeout and so placed last, ties in the answer's order.
public struct IPRanking: Sendable, Codable, Equatable, Hashable {
    public var host: String
    public var port: Int
    /// Fastest first, failures last.
    public var ips: [RankedIP]
    /// HTTPDNS addresses in the order the SDK would use after ranking.
    public var sdkOrder: [IPAddress]
    /// When the SDK would not rank this answer at all (it ranks 2 to 9 addresses), why.
    public var note: String?

    public init(host: String, port: Int, ips: [RankedIP], sdkOrder: [IPAddress], note: String? = nil) {
        self.host = host
        self.port = port
        self.ips = ips
        self.sdkOrder = sdkOrder
        self.note = note
    }

    /// How long one connect may take, as in the SDK.
    public static let defaultTimeout: Duration = .seconds(2)
    /// How many connects run at once.
    public static let defaultParallel = 4

    /// The addresses to rank: HTTPDNS's first (in its order), then those only system DNS gave.
    ///
    /// - Parameter resolution: both answers for the host.
    /// - Returns: each address once, with every source that gave it.
    public static func candidates(_ resolution: HostResolution) -> [(ip: IPAddress, sources: [IPSource])] {
        var found: [(ip: IPAddress, sources: [IPSource])] = []
        func add(_ ips: [IPAddress], _ source: IPSource) {
            for ip in ips {
                if let at = found.firstIndex(where: { $0.ip == ip }) {
                    if !found[at].sources.contains(source) { found[at].sources.append(source) }
                } else {
                    found.append((ip, [source]))
                }
            }
        }
        let httpdns = resolution.httpdns
        if httpdns.error == nil || httpdns.source == .systemFallback {
            add(httpdns.ipv4 + httpdns.ipv6, ProbeEngine.ipSource(httpdns.source))
        }
        if resolution.system.error == nil { add(resolution.system.ipv4 + resolution.system.ipv6, .system) }
        return found
    }

    /// Measures and ranks every address of a host.
    ///
    /// - Parameters:
    ///   - resolution: both answers for the host.
    ///   - port: the URL's port (the SDK connects to the port the app names for the host).
    ///   - attempts: the last probe's attempts, to say which scenario used which address.
    ///   - timeout: how long one connect may take.
    ///   - parallel: how many connects run at once.
    /// - Returns: the ranking.
    public static func rank(
        _ resolution: HostResolution, port: Int, attempts: [Attempt] = [], timeout: Duration = defaultTimeout,
        parallel: Int = defaultParallel
    ) async -> IPRanking {
        let candidates = candidates(resolution)
        let times = await TCPConnectTimer.measure(
            candidates.map(\.ip), port: port, timeout: timeout, parallel: parallel)
        var entries = zip(candidates, times).map { candidate, time in
            RankedIP(
                ip: candidate.ip, sources: candidate.sources, connectMs: time.ms, error: time.error,
                usedBy: Scenario.allCases.filter { scenario in
                    attempts.contains { $0.scenario == scenario && $0.ip == candidate.ip }
                })
        }
        entries = ordered(entries)
        let sdkOrder = entries.filter { $0.sources.contains { $0 != .system } }.map(\.ip)
        for index in entries.indices {
            entries[index].sdkRank = sdkOrder.firstIndex(of: entries[index].ip).map { $0 + 1 }
        }
        let note: String? =
            switch sdkOrder.count {
            case 0: "HTTPDNS gave no address, so the SDK has nothing to rank"
            case 1: "HTTPDNS gave one address; the SDK ranks only answers of 2 to 9 addresses"
            case 10...: "HTTPDNS gave \(sdkOrder.count) addresses; the SDK ranks only answers of 2 to 9 addresses"
            default: nil
            }
        return IPRanking(host: resolution.host, port: port, ips: entries, sdkOrder: sdkOrder, note: note)
    }

    /// The SDK's order: ascending connect time, failures last, ties kept in the given order.
    ///
    /// - Parameter entries: measured addresses in answer order.
    /// - Returns: the same addresses ranked.
    public static func ordered(_ entries: [RankedIP]) -> [RankedIP] {
        entries.enumerated().sorted { a, b in
            switch (a.element.connectMs, b.element.connectMs) {
            case (let x?, let y?): x == y ? a.offset < b.offset : x < y
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): a.offset < b.offset
            }
        }.map(\.element)
    }
}

/// TCP connect timing with plain POSIX sockets: non-blocking `connect`, then `poll` for
/// writability, as the SDK does with `select`. Runs on a thread of its own, never the pool.
public enum TCPConnectTimer {
    /// The result for one address: the time, or why it failed.
    public struct Timing: Sendable, Equatable {
        public var ms: Double?
        public var error: AttemptFailure?
    }

    /// Times a TCP connect to each address.
    ///
    /// - Parameters:
    ///   - ips: the addresses.
    ///   - port: the port to connect to.
    ///   - timeout: how long each connect may take.
    ///   - parallel: how many connects are in flight at once.
    /// - Returns: one timing per address, in the order given.
    public static func measure(_ ips: [IPAddress], port: Int, timeout: Duration, parallel: Int) async -> [Timing] {
        await onThreadOfItsOwn(named: "ipdirect-connect-timer") {
            measureBlocking(ips, port: port, timeout: timeout, parallel: parallel)
        }
    }

    private struct Pending {
        var index: Int
        var fd: Int32
        var started: UInt64
    }

    static func measureBlocking(_ ips: [IPAddress], port: Int, timeout: Duration, parallel: Int) -> [Timing] {
        var results = [Timing](repeating: Timing(ms: nil, error: .notMeasured), count: ips.count)
        let timeoutNs = UInt64(max(timeout.inSeconds, 0.001) * 1e9)
        var next = 0
        var pending: [Pending] = []
        while next < ips.count || !pending.isEmpty {
            while pending.count < max(parallel, 1) && next < ips.count {
                let index = next
                next += 1
                switch start(ips[index], port: port) {
                case .connected(let ms): results[index] = Timing(ms: ms, error: nil)
                case .failed(let code):
                    results[index] = Timing(
                        ms: nil, error: .rankConnectFailed(target: ips[index].hostPort(port), errno: code))
                case .invalid:
                    results[index] = Timing(ms: nil, error: .unusableAddress(ips[index]))
                case .inProgress(let fd, let started): pending.append(Pending(index: index, fd: fd, started: started))
                }
            }
            if pending.isEmpty { continue }
            let now = DispatchTime.now().uptimeNanoseconds
            let firstDeadline = pending.map { $0.started + timeoutNs }.min() ?? now
            let waitMs = firstDeadline > now ? Int32(min((firstDeadline - now) / 1_000_000 + 1, 60_000)) : 0
            var fds = pending.map { pollfd(fd: $0.fd, events: Int16(POLLOUT), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), waitMs)
            if ready < 0 && errno == EINTR { continue }
            let after = DispatchTime.now().uptimeNanoseconds
            var still: [Pending] = []
            for (slot, item) in pending.enumerated() {
                let ip = ips[item.index]
                if fds[slot].revents != 0 {
                    var code: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(item.fd, SOL_SOCKET, SO_ERROR, &code, &length)
                    results[item.index] =
                        code == 0
                        ? Timing(ms: Double(after - item.started) / 1e6, error: nil)
                        : Timing(ms: nil, error: .rankConnectFailed(target: ip.hostPort(port), errno: code))
                    close(item.fd)
                } else if after >= item.started + timeoutNs {
                    results[item.index] = Timing(
                        ms: nil, error: .rankConnectTimedOut(target: ip.hostPort(port), after: timeout))
                    close(item.fd)
                } else {
                    still.append(item)
                }
            }
            pending = still
        }
        return results
    }

    private enum Start {
        case connected(Double)
        case inProgress(Int32, UInt64)
        case failed(Int32)
        case invalid
    }

    private static func start(_ ip: IPAddress, port: Int) -> Start {
        let isV6 = ip.family == .v6
        guard let (address, length) = ip.socketAddress(port: port) else { return .invalid }
        var storage = address
        #if canImport(Glibc)
            let streamType = Int32(SOCK_STREAM.rawValue)
        #else
            let streamType = SOCK_STREAM
        #endif
        let fd = socket(isV6 ? AF_INET6 : AF_INET, streamType, 0)
        guard fd >= 0 else { return .failed(errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK)
        let started = DispatchTime.now().uptimeNanoseconds
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if result == 0 {
            // On the same machine a connect can finish at once; that is its time.
            close(fd)
            return .connected(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
        }
        let code = errno
        if code == EINPROGRESS { return .inProgress(fd, started) }
        close(fd)
        return .failed(code)
    }

}

extension IPRanking {
    /// The ranking as the aligned table `probe --rank` and `resolve --rank` print.
    ///
    /// - Returns: lines: a title, the table, and the note when there is one.
    public func tableLines() -> [String] {
        let rows = ips.enumerated().map { index, entry in
            [
                "\(index + 1)", entry.ip.text, entry.sources.map(\.rawValue).joined(separator: "+"),
                entry.connectMs.map { String(cFormat: "%.1f", $0) } ?? "failed",
                entry.sdkRank.map { "\($0)" } ?? "-",
                entry.usedBy.isEmpty ? "-" : entry.usedBy.map(\.rawValue).joined(separator: ","),
            ].map(TerminalText.escaped)
        }
        var lines = ["IPs of \(TerminalText.escaped(host)), TCP connect to port \(port):"]
        lines += TextTable.lines(
            header: ["#", "IP", "SOURCE", "CONNECT MS", "SDK", "USED BY"], rows: rows, rightAligned: [0, 3, 4],
            indent: "  ")
        for entry in ips {
            if let error = entry.error {
                lines.append("  \(entry.ip): \(TerminalText.escaped(error.sentence))")
            }
        }
        if let note { lines.append("  \(note)") }
        return lines
    }
}

// What the agent tests share: labs, a lab-backed engine and resolver cache, a log that keeps
// its lines for the test to read, and small waits that poll instead of sleeping blind.
import Agent
import ConfigurationSources
import Foundation
import FoundationGaps
import Lab
import Logging
import NameResolution
import Probe

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Lab {
    /// The lab URL of a name, with a path.
    func url(_ name: String, _ path: String = "/") -> String {
        let base = endpoints.hosts[name] ?? "https://\(name)/"
        return base + path.drop { $0 == "/" }
    }

    /// A resolver cache asking the lab's HTTPDNS service (alicloud), with no fallback to system
    /// DNS (which knows no lab name) and no cache file; with `labDNS`, the system column asks the
    /// lab's DNS server (which hijacks some names) instead of getaddrinfo.
    func resolverCache(labDNS: Bool = false) throws -> ResolverCache {
        var configuration = ResolverConfiguration(
            provider: .alicloud, endpoint: endpoints.httpdns, account: endpoints.account, timeout: 10)
        if labDNS { configuration.dnsServer = try DNSServer.parse(endpoints.dns) }
        configuration.fallbackToSystem = false
        configuration.cachePath = nil
        return ResolverCache(configuration: configuration, provider: try ProviderFactory.make(configuration))
    }

    /// An engine resolving through `cache` and trusting the lab's CA.
    func engine(_ cache: ResolverCache, options: ProbeOptions = ProbeOptions()) -> ProbeEngine {
        var options = options
        options.caFile = endpoints.ca
        return ProbeEngine(resolve: { await cache.resolve($0) }, options: options, environment: [:])
    }
}

/// A log whose lines the test reads back.
final class CapturedLog: Sendable {
    private let lines = Locked([String]())

    var logger: Logger {
        Logger(label: "test") { _ in CapturingHandler(log: self) }
    }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// Every line so far.
    var all: [String] { lines.withLock { $0 } }

    /// The lines that contain `text`.
    func lines(containing text: String) -> [String] { all.filter { $0.contains(text) } }
}

private struct CapturingHandler: LogHandler {
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        log.append(
            "\(event.level) \(event.message) \(all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))")
    }
}

/// Polls `condition` every 100 ms for up to `seconds`; true once it holds.
func eventually(within seconds: Double = 60, _ condition: () async -> Bool) async -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return await condition()
}

/// GETs a URL; the status and body, nil when nothing answered within `timeout` seconds.
func fetch(_ url: String, headers: [String: String] = [:], timeout: Double = 10) async -> (status: Int, body: String)? {
    guard let url = URL(string: url) else { return nil }
    var request = URLRequest(url: url)
    request.timeoutInterval = timeout
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    guard let (data, response) = try? await URLSession.shared.data(for: request),
        let http = response as? HTTPURLResponse
    else { return nil }
    return (http.statusCode, String(decoding: data, as: UTF8.self))
}

/// A loopback TCP port the kernel picks as free: bound, read, closed. For handing to another
/// program to listen on; in the parallel suite another test can take it before that program
/// binds it, so a caller checks the program came up (`PrometheusServer.start`).
func freePort() -> Int {
    let socketFD = boundLoopbackSocket()
    defer { close(socketFD) }
    return port(of: socketFD)
}

/// A loopback TCP port held bound but not listening while this lives: a connection to it is
/// refused, and no other test's listener can take it meanwhile (a port merely found free can be,
/// and then the "down" collector would answer).
final class RefusingPort: Sendable {
    let port: Int
    private let socketFD: Int32

    init() {
        socketFD = boundLoopbackSocket()
        port = AgentTests.port(of: socketFD)
    }

    /// Gives the port back; call it when the test is done with it (which keeps it alive till then).
    func close() { _ = Glibc.close(socketFD) }
}

/// A TCP socket bound to 127.0.0.1 on a port the kernel picks.
private func boundLoopbackSocket() -> Int32 {
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return socketFD
}

/// The local port a socket is bound to.
private func port(of socketFD: Int32) -> Int {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Runs an agent until `body` returns, then stops it and waits for `run()` to end.
func withAgent<T>(_ agent: ProbeAgent, _ body: () async throws -> T) async rethrows -> T {
    let running = Task { await agent.run() }
    do {
        let value = try await body()
        agent.stop()
        await running.value
        return value
    } catch {
        agent.stop()
        await running.value
        throw error
    }
}

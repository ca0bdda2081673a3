// The agent's /metrics and /probe listener against a hostile network: an idle flood larger than
// its connection cap, and a client pipelining requests without reading the answers.
import Agent
import Foundation
import Lab
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A raw TCP client on loopback that does only what the test says: connect and send nothing,
/// write without reading. Non-blocking, so a peer that stops reading never holds a test thread.
final class LoopbackClient {
    let fd: Int32

    /// Starts connecting to 127.0.0.1:`port`; the handshake may still be under way on return.
    init(port: Int) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// Writes what the socket takes now: the count taken, 0 when it takes nothing now, nil once
    /// the peer has closed.
    func send(_ bytes: ArraySlice<UInt8>) -> Int? {
        let sent = bytes.withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if sent >= 0 { return sent }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINPROGRESS || errno == ENOTCONN ? 0 : nil
    }

    /// What has arrived so far (without waiting); nil once the peer has closed and nothing is left.
    func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count > 0 { return Array(buffer[..<count]) }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN) { return [] }
        return nil
    }

    /// Whether the peer has closed the connection (a FIN or a reset), without taking any data.
    var closedByPeer: Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count > 0 { return false }
        return count == 0 || !(errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)
    }

    deinit { close(fd) }
}

/// The body of `/metrics` on loopback `port`; nil when it did not answer 200.
func scrape(_ port: Int) async -> String? {
    guard let answer = await fetch("http://127.0.0.1:\(port)/metrics"), answer.status == 200 else { return nil }
    return answer.body
}

/// The sum of the samples of `name` in an exposition whose labels include every pair of `labels`.
func total(_ exposition: String, _ name: String, _ labels: [String: String] = [:]) -> Double {
    var sum = 0.0
    for line in exposition.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
        guard labels.allSatisfy({ line.contains("\($0.key)=\"\($0.value)\"") }),
            let value = line.split(separator: " ").last.flatMap({ Double($0) })
        else { continue }
        sum += value
    }
    return sum
}

@Suite("The agent's /metrics listener under a flood", .serialized)
struct MetricsFloodTests {
    @Test(
        "an idle flood past the connection cap: /metrics and /probe answer, the lab target still probes ok, the log says why",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary was not built"))
    func idleFlood() async throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        // 256 descriptors for everything the agent holds (its lab too); the flood is larger.
        let limit = 256
        let run = try AgentRun(
            ["--interval", "1", "--metrics-listen", "127.0.0.1:0", "https://sni-a.lab.test/"], scratch: scratch,
            descriptorLimit: limit)
        let port = try #require(await run.metricsPort())
        let ok = ["scenario": "direct-sni", "outcome": "ok"]
        var before = 0.0
        #expect(
            await eventually {
                before = total(await scrape(port) ?? "", "ipdirect_probe_outcomes_total", ok)
                return before >= 1
            })
        let baseline = (ProcessStatus.residentMegabytes(run.child.pid), ProcessStatus.openDescriptors(run.child.pid))

        let flooded = Date()
        let flood = (0..<(limit * 3)).map { _ in LoopbackClient(port: port) }
        // The flood is in: the agent has taken what it will (or all it can).
        _ = await eventually(within: 60) { ProcessStatus.openDescriptors(run.child.pid) >= limit - 8 }
        let during = (ProcessStatus.residentMegabytes(run.child.pid), ProcessStatus.openDescriptors(run.child.pid))

        var exposition = ""
        #expect(
            await eventually {
                exposition = await scrape(port) ?? ""
                return !exposition.isEmpty
            }, "/metrics did not answer during the flood")
        #expect(
            await eventually {
                exposition = await scrape(port) ?? ""
                return total(exposition, "ipdirect_probe_outcomes_total", ok) > before
            }, "the lab target was not probed ok during the flood")
        #expect(total(exposition, "ipdirect_probe_outcomes_total", ["outcome": "connect-failed"]) == 0)
        #expect(total(exposition, "ipdirect_listener_connections_closed_total", ["reason": "full"]) >= 1)
        // /probe gets through the same listener, and its probe runs with the descriptors kept for probing.
        var probed = ""
        #expect(
            await eventually {
                probed =
                    await fetch(
                        "http://127.0.0.1:\(port)/probe?target=https%3A%2F%2Fsni-a.lab.test%2F&scenario=direct-sni")?
                    .body ?? ""
                return sample(probed, "probe_success") == 1
            }, "/probe did not answer with a working probe during the flood: \(probed)")
        #expect(ProcessStatus.openDescriptors(run.child.pid) <= limit)
        // One line a minute names the cause, however many connections it closed.
        let full = run.events("metrics-listener-full")
        let minutes = Int(Date().timeIntervalSince(flooded) / 60)
        #expect(!full.isEmpty && full.count <= 1 + minutes, "\(full)")
        #expect((full.first?["message"] as? String)?.contains("connections") == true)
        print(
            String(
                format: "idle flood of %d connections (RLIMIT_NOFILE %d): RSS %.1f → %.1f MB, descriptors %d → %d",
                flood.count, limit, baseline.0, during.0, baseline.1, during.1))
        run.signal(SIGTERM)
        #expect(await run.exitStatus(within: 60) == 0)
    }

    @Test(
        "800 /probe requests 200 at a time, past the 128-connection cap: each is answered, 200 or 503 at once, none reset or closed unanswered"
    )
    func probesPastTheCap() async throws {
        let lab = try await Lab.start()
        let cache = try lab.resolverCache()
        let metrics = AgentMetrics(labels: [])
        let probe = ProbeEndpoint(engine: lab.engine(cache), settings: .standard, metrics: metrics)
        let server = try await MetricsServer(host: "127.0.0.1", port: 0, metrics: metrics, probe: probe) {
            metrics.exposition()
        }
        let target = lab.url("sni-a.lab.test").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let url = try #require(
            URL(string: "http://127.0.0.1:\(server.port)/probe?target=\(target)&scenario=direct-sni"))
        // As a load generator (or several Prometheus servers) sends them: keep-alive connections,
        // reused as soon as an answer comes, up to 200 at once.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 200
        configuration.timeoutIntervalForRequest = 60
        let session = URLSession(configuration: configuration)
        let requests = 800
        let ends = await withTaskGroup(of: String.self) { group in
            func get() async -> String {
                do {
                    return "\((try await session.data(from: url).1 as? HTTPURLResponse)?.statusCode ?? 0)"
                } catch {
                    return (error as? URLError).map { "URLError \($0.code.rawValue): \($0.localizedDescription)" }
                        ?? "\(error)"
                }
            }
            var ends: [String: Int] = [:]
            for _ in 0..<200 { group.addTask { await get() } }
            var started = 200
            for await end in group {
                ends[end, default: 0] += 1
                if started < requests {
                    group.addTask { await get() }
                    started += 1
                }
            }
            return ends
        }
        let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
        session.invalidateAndCancel()
        await server.close()
        try await lab.shutdown()
        let full = total(exposition, "ipdirect_listener_connections_closed_total", ["reason": "full"])
        print("\(requests) /probe, 200 at a time: \(ends.sorted { $0.key < $1.key }); closed full: \(full)")
        #expect(ends.keys.allSatisfy { $0 == "200" || $0 == "503" }, "\(ends)")
        #expect(ends["200", default: 0] > 0)
    }

    @Test(
        "a client pipelining 50,000 requests without reading: the agent's memory stays bounded and comes back",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary was not built"))
    func pipeliningClient() async throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        // Every lab host a target: an exposition of some size, as a real list makes.
        let run = try AgentRun(["--interval", "5", "--metrics-listen", "127.0.0.1:0"], scratch: scratch)
        let port = try #require(await run.metricsPort())
        #expect(await eventually { !run.events("round-finished").isEmpty })
        var size = 0
        for _ in 0..<5 { size = max(size, await scrape(port)?.utf8.count ?? 0) }
        let pid = run.child.pid
        let baseline = ProcessStatus.residentMegabytes(pid)
        // What one scrape connection may cost the agent at most, and what it may keep after. Under
        // `make asan` every freed block waits in AddressSanitizer's quarantine (256 MB by default)
        // before it is reused, so resident memory there measures the quarantine as well: it is
        // allowed on top, and the bound itself is held by `make test`'s build.
        let quarantine = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil ? 0.0 : 256.0
        let bound = 64.0 + quarantine
        let settled = 24.0 + quarantine

        let requests = Array(String(repeating: "GET /metrics HTTP/1.1\r\nHost: agent\r\n\r\n", count: 50_000).utf8)
        var client: LoopbackClient? = LoopbackClient(port: port)
        var sent = 0
        var peak = baseline
        var lastProgress = ContinuousClock.now
        // Write until all is written or the agent has taken nothing for 3 s (it stopped reading);
        // stop at once past the bound, before the agent takes the host's memory.
        while sent < requests.count && ContinuousClock.now - lastProgress < .seconds(3) && peak <= baseline + bound {
            guard let taken = client?.send(requests[sent...]) else { break }
            if taken > 0 {
                sent += taken
                lastProgress = ContinuousClock.now
            }
            peak = max(peak, ProcessStatus.residentMegabytes(pid))
            try await Task.sleep(for: .milliseconds(5))
        }
        // Unread a while longer: the agent must not go on rendering for it.
        for _ in 0..<150 where peak <= baseline + bound {
            peak = max(peak, ProcessStatus.residentMegabytes(pid))
            try await Task.sleep(for: .milliseconds(20))
        }
        let descriptors = ProcessStatus.openDescriptors(pid)
        if peak > baseline + bound { run.signal(SIGKILL) }
        #expect(
            peak <= baseline + bound,
            "RSS \(baseline) → \(peak) MB with \(sent) bytes of requests unread by the client")
        #expect(await scrape(port) != nil, "another scraper is answered meanwhile")
        client = nil

        var after = peak
        #expect(
            await eventually(within: 30) {
                after = ProcessStatus.residentMegabytes(pid)
                return after > 0 && after <= baseline + settled
            }, "RSS \(after) MB after the client left; baseline \(baseline) MB")
        print(
            String(
                format:
                    "pipelining: %d of %d request bytes written, scrape %d bytes: RSS %.1f → peak %.1f → %.1f MB after; %d descriptors",
                sent, requests.count, size, baseline, peak, after, descriptors))
        run.signal(SIGTERM)
        _ = await run.exitStatus(within: 60)
    }
}

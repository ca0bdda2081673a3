// The /metrics listener itself, in process: a pipelining client that does not read is answered
// one response at a time as it reads; the limits close idle, slow and oversized connections.
import Agent
import Foundation
import FoundationGaps
import NameResolution
import TestSupport
import Testing

@Suite("The /metrics listener")
struct MetricsServerTests {
    @Test(
        "a client pipelining without reading gets no response rendered ahead; once it reads, every request is answered")
    func pipelinedRequestsWait() async throws {
        let renders = Locked(0)
        // 64 KB a scrape: the kernel's socket buffers hold a few dozen of them, not thousands.
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 65_536)
        let server = try await MetricsServer(host: "127.0.0.1", port: 0) {
            renders.withLock { $0 += 1 }
            return body
        }
        let requests = 2_000
        let client = LoopbackClient(port: server.port)
        var unsent = Array(String(repeating: "GET /metrics HTTP/1.1\r\nHost: agent\r\n\r\n", count: requests).utf8)[...]
        #expect(
            await eventually(within: 30) {
                if let taken = client.send(unsent), taken > 0 { unsent = unsent.dropFirst(taken) }
                return unsent.isEmpty
            })
        // The requests are all with the server and nothing is read: what it renders now is what
        // the socket buffers take, then it waits.
        var rendered = 0
        _ = await eventually(within: 3) {
            let now = renders.withLock { $0 }
            defer { rendered = now }
            return now == rendered && now > 0
        }
        #expect(rendered < requests / 4, "\(rendered) of \(requests) responses rendered for a client reading none")

        // Every answer is the same head and body: the whole reply is `requests` of them, to the byte.
        // (Counting bodies alone, 1,999 answers with their heads passed for 2,000.)
        var received = 0
        var firstAnswer: [UInt8] = []
        var expected: Int? = nil
        #expect(
            await eventually(within: 60) {
                while let bytes = client.receive(), !bytes.isEmpty {
                    received += bytes.count
                    if expected == nil {
                        firstAnswer += bytes
                        if let head = firstAnswer.firstRange(of: Array("\r\n\r\n".utf8)) {
                            expected = requests * (head.upperBound + body.count)
                        }
                    }
                }
                return expected.map { received >= $0 } ?? false
            }, "\(received) of \(expected.map(String.init) ?? "?") bytes of answers")
        #expect(received == expected)
        #expect(renders.withLock { $0 } == requests)
        await server.close()
    }
}

@Suite("The /metrics listener's limits")
struct MetricsListenerLimitsTests {
    /// Short timeouts, a cap of 4: what the agent's defaults do in a minute, here in a second.
    private static let tight = MetricsListenerLimits(
        connections: 4, idleTimeout: .seconds(1), requestTimeout: .seconds(1), writeTimeout: .seconds(1),
        requestBytes: 1024)
    /// The same, but a connection may idle for a minute: whatever closes a connection on it within
    /// the test is the request's own limit, however slowly a loaded machine runs the client.
    private static let patient = MetricsListenerLimits(
        connections: 4, idleTimeout: .seconds(60), requestTimeout: .seconds(1), writeTimeout: .seconds(1),
        requestBytes: 1024)

    @Test("a full listener lets a scrape in; connections that send nothing are closed and counted")
    func limits() async throws {
        let metrics = AgentMetrics(labels: [])
        let server = try await MetricsServer(host: "127.0.0.1", port: 0, limits: Self.tight, metrics: metrics) {
            metrics.exposition()
        }
        let idle = (0..<12).map { _ in LoopbackClient(port: server.port) }
        #expect(await scrape(server.port) != nil, "a scrape gets through a full listener")
        #expect(await eventually(within: 30) { idle.allSatisfy(\.closedByPeer) }, "idle connections are closed")
        #expect(closed("full", in: metrics) >= 1)
        #expect(closed("idle", in: metrics) >= 1)
        await server.close()
    }

    @Test("a request dribbled in and never finished, and a head past the limit, are closed and counted")
    func slowAndLarge() async throws {
        let metrics = AgentMetrics(labels: [])
        let server = try await MetricsServer(host: "127.0.0.1", port: 0, limits: Self.patient, metrics: metrics) {
            metrics.exposition()
        }
        // A request whose headers keep dribbling in, never finished: closed though bytes come.
        let slow = LoopbackClient(port: server.port)
        #expect(await eventually { (slow.send(Array("GET /metrics HTTP/1.1\r\n".utf8)[...]) ?? 0) > 0 })
        let closedSlowly = await eventually(within: 30) {
            _ = slow.send(Array("X-A: b\r\n".utf8)[...])
            return slow.closedByPeer
        }
        #expect(closedSlowly)
        #expect(closed("slow-request", in: metrics) >= 1)

        // A head past 1 KB: refused with 400 and closed.
        let large = LoopbackClient(port: server.port)
        let head = "GET /metrics HTTP/1.1\r\nX-Padding: \(String(repeating: "a", count: 4096))\r\n\r\n"
        #expect(await eventually { (large.send(Array(head.utf8)[...]) ?? 0) > 0 })
        var answer: [UInt8] = []
        #expect(
            await eventually(within: 30) {
                while let bytes = large.receive(), !bytes.isEmpty { answer += bytes }
                return large.closedByPeer
            })
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        #expect(closed("too-large", in: metrics) >= 1)
        await server.close()
    }

    private func closed(_ reason: String, in metrics: AgentMetrics) -> Double {
        total(
            String(decoding: metrics.exposition(), as: UTF8.self), "ipdirect_listener_connections_closed_total",
            ["reason": reason])
    }
}

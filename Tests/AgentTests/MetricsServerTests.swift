// The /metrics listener itself, in process: a pipelining client that does not read is answered
// one response at a time as it reads; the limits close idle, slow and oversized connections.
import Agent
import Foundation
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

        var received = 0
        let expected = requests * body.count
        #expect(
            await eventually(within: 60) {
                while let bytes = client.receive(), !bytes.isEmpty { received += bytes.count }
                return received >= expected
            }, "\(received) of at least \(expected) bytes of answers")
        #expect(renders.withLock { $0 } == requests)
        await server.close()
    }
}

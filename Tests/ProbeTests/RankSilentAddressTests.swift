// IP ranking with an address that never answers: its SYNs are dropped (a listener whose accept
// queue is full), so the connect runs into the timeout and the address goes last, as in the SDK.
import Foundation
import NameResolution
import Probe
import TestSupport
import Testing

@Suite("IP ranking with an address that does not answer")
struct RankSilentAddressTests {
    @Test("an address whose connect gets no answer ranks last, with the timeout's sentence")
    func silentAddressRanksLast() async throws {
        let live = try LoopbackListener(ip: "127.0.0.1", port: 0, silent: false)
        let silent = try LoopbackListener(ip: "127.0.0.3", port: UInt16(live.port), silent: true)
        // HTTPDNS lists the silent address first; the SDK's ranking must move it behind.
        let resolution = HostResolution(
            host: "silent.lab.test", system: SystemAnswer(error: "no answer"),
            httpdns: HTTPDNSAnswer(provider: "test", ipv4: ["127.0.0.3", "127.0.0.1"], ttl: FamilyTTL(v4: 60)))
        // The test is about the timeout: half a second stands in for the SDK's two.
        let ranking = await IPRanking.rank(resolution, port: live.port, timeout: .milliseconds(500))
        #expect(ranking.ips.map(\.ip) == ["127.0.0.1", "127.0.0.3"])
        #expect(ranking.sdkOrder == ["127.0.0.1", "127.0.0.3"])
        let dead = try #require(ranking.ips.last)
        #expect(dead.connectMs == nil)
        #expect(dead.error?.sentence.contains("no answer from 127.0.0.3:\(live.port) within 0.5 s") == true, "\(dead)")
        #expect(ranking.ips.first?.connectMs != nil)
        withExtendedLifetime((live, silent)) {}
    }
}

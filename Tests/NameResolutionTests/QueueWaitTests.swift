// An HTTPDNS query kept waiting in ipdirect's own transfer loop past its deadline: the answer says
// it was never sent and how long it waited, and only a query that left reads as the service timing out.
import ConfigurationSources
import CurlTransport
import Foundation
import Lab
import TestSupport
import Testing

@testable import NameResolution

@Suite("HTTPDNS queue wait")
struct QueueWaitTests {
    /// A resolver asking the lab's DoH JSON endpoint through `loop`, giving up after `timeout` seconds.
    private static func cache(_ lab: Lab, loop: TransferLoop, timeout: Double) -> ResolverCache {
        let endpoint = lab.endpoints.httpdns + "/dns-query"
        return ResolverCache(
            configuration: ResolverConfiguration(provider: .dohJSON, endpoint: endpoint, timeout: timeout),
            provider: DoHJSONProvider(
                endpoint: endpoint, transport: HTTPDNSTransport(timeout: timeout, caFile: nil, loop: loop)))
    }

    @Test(
        "a query that waited its whole deadline behind a busy loop says it was never sent, not that the service timed out"
    )
    func queuedPastDeadline() async throws {
        try await withLab(LabOptions(slowFaultDelay: 30)) { lab in
            // The loop's one slot, held by a connect the silent listener never answers; the
            // holder has started before the query is asked, so the query waits behind it.
            let silent = try LoopbackListener(ip: "127.0.0.1", port: 0, silent: true)
            let busy = TransferLoop(maxActive: 1)
            defer { busy.stop() }
            let holder = TransferDepartures()
            Task {
                await TransferDepartures.$current.withValue(holder) {
                    await busy.perform(TransferSpec(url: "http://127.0.0.1:\(silent.port)/", timeout: .seconds(30)))
                }
            }
            while case .waiting = holder.reading { try await Task.sleep(for: .milliseconds(10)) }

            let queued = await Self.cache(lab, loop: busy, timeout: 1).resolve("localhost", family: .v4)
            let error = try #require(queued.httpdns.error?.sentence)
            let lead = "the query was never sent: it waited "
            #expect(error.hasPrefix(lead), "\(error)")
            #expect(
                error.hasSuffix(
                    " s for its turn behind ipdirect's other requests (ipdirect was busy, not the service)"),
                "\(error)")
            #expect(!error.contains("timed out"), "\(error)")
            // The wait it names is the one it had: the whole deadline, at least.
            let waited = Double(error.dropFirst(lead.count).prefix { $0 != " " })
            #expect((waited ?? 0) >= 1, "\(error)")
            // True to what the server saw: the query never reached it.
            #expect(!lab.httpdnsQueries().contains { $0.host == "localhost" })
            // System DNS stands in, when it answered within the same limit (a loaded machine may not).
            if queued.system.error == nil { #expect(queued.httpdns.source == .systemFallback) }

            // A query that left, to a service that does not answer in time, is the time-out it
            // always was (the words after it name a wait only when a loaded machine made one:
            // the plain sentence, byte for byte, is `unansweredReading`'s).
            try await lab.setFault(.slow)
            let free = TransferLoop(maxActive: 1)
            defer { free.stop() }
            let slow = await Self.cache(lab, loop: free, timeout: 2).resolve("localhost", family: .v4)
            let timedOut = try #require(slow.httpdns.error?.sentence)
            #expect(timedOut.hasPrefix("timed out after 2 s"), "\(timedOut)")
            #expect(!timedOut.contains("never sent"), "\(timedOut)")
            #expect(lab.httpdnsQueries().contains { $0.host == "localhost" && $0.fault == .slow })
        }
    }

    @Test("no answer in time reads by whether the query left: never sent, sent late, or the plain time-out")
    func unansweredReading() {
        let limit = Duration.seconds(2)
        #expect(
            ResolutionError.unanswered(within: limit, .waiting(.milliseconds(2030))).description
                == "the query was never sent: it waited 2 s for its turn behind ipdirect's other requests "
                + "(ipdirect was busy, not the service)")
        #expect(
            ResolutionError.unanswered(within: limit, .left(ago: .milliseconds(760))).description
                == "timed out after 2 s, 1.2 s of which the query waited for its turn in ipdirect before it was sent")
        // A wait under a tenth of the limit changes nothing a person reads.
        #expect(
            ResolutionError.unanswered(within: limit, .left(ago: .milliseconds(1850)))
                == .timeout(seconds: 2))
        // A resolve that joined a query already sent before it asked gave the service all its time.
        #expect(ResolutionError.unanswered(within: limit, .left(ago: .seconds(5))) == .timeout(seconds: 2))
        #expect(
            ResolutionFailure.httpdns(.notSent(waited: 1)).sentence(from: "HTTPDNS")
                == "HTTPDNS: the query was never sent: it waited 1 s for its turn behind ipdirect's other requests "
                + "(ipdirect was busy, not the service)")
    }
}

// What a running lab remembers: the latest records of each kind, so a lab left running for days
// or under a long batch does not grow without bound, and a count of everything it served.
import Foundation
import Testing

@testable import Lab

@Suite("Lab ledger")
struct LabLedgerTests {
    @Test("a lab left running keeps its latest records of each kind, and counts every request")
    func keepsLatest() {
        let ledger = LabLedger(fault: .none, keep: 8)
        for index in 1...50 {
            ledger.record(
                LabOriginRequest(
                    origin: "plain", host: "plain.lab.test", sni: nil, method: "GET", path: "/\(index)",
                    bodyLength: 0, status: 200, time: Date()))
            ledger.record(
                LabHTTPDNSQuery(
                    time: Date(), path: "/\(index)", format: "alicloud", host: "sni-a.lab.test", status: 200,
                    fault: .none))
        }
        let kept = ledger.originRequests.map(\.path)
        // Between `keep` and a quarter more, the newest, in order.
        #expect((8...10).contains(kept.count))
        #expect(kept == (51 - kept.count...50).map { "/\($0)" })
        #expect(ledger.queries.last?.path == "/50" && (8...10).contains(ledger.queries.count))
        #expect(ledger.originRequestsServed == 50)
    }
}

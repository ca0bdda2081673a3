// The lab's HTTPDNS faults: for each, resolve gives up at its timeout, says why in words,
// falls back to system DNS, and the cache keeps what it had.
import Foundation
import Lab
import NameResolution
import NameResolutionTesting
import Testing

@Suite("HTTPDNS faults")
struct FaultTests {
    static let expectations: [(HTTPDNSFault, String)] = [
        (.slow, "timed out after 3 s"),
        (.error, "HTTPDNS answered HTTP 500"),
        (.malformed, "malformed HTTPDNS answer"),
        (.down, "connection refused"),
    ]

    @Test(
        "each fault: a clear reason, the system fallback, and the cache keeps what it had",
        arguments: [HTTPDNSFault.slow, .error, .malformed, .down])
    func fault(_ fault: HTTPDNSFault) async throws {
        let reason = try #require(Self.expectations.first { $0.0 == fault }?.1)
        // The slow fault answers ten times later than its 3 s timeout, so only a client that gives
        // up at its timeout reports "timed out". Every other fault gets 10 s: a loaded machine once
        // took over 3 s to bring an HTTP 500 back, and the test read it as a timeout.
        let timeout = fault == .slow ? 3.0 : 10.0
        try await withLab(LabOptions(slowFaultDelay: 30)) { lab in
            for format in [LabFormat.alicloud, .tencent, .dohQuery, .dohWire] {
                let clock = ManualClock(Date())
                let cache = ResolverCache(
                    configuration: format.configuration(lab, timeout: timeout), provider: try format.provider(lab),
                    clock: clock)
                // Healthy first: the cache learns both names.
                _ = await cache.resolve("localhost", family: .v4)
                _ = await cache.resolve("sni-a.lab.test", family: .v4)
                let before = cache.entries()
                #expect(before.count == 2)

                try await lab.setFault(fault)
                clock.advance(120)  // past the TTLs, so the cache has to ask again
                let resolution = await cache.resolve("localhost", family: .v4)
                let error = try #require(resolution.httpdns.error?.sentence, "\(format) \(fault)")
                #expect(error.contains(reason), "\(format) \(fault): \(error)")
                #expect(resolution.httpdns.source == .systemFallback, "\(format) \(fault)")
                #expect(resolution.httpdns.ipv4 == ["127.0.0.1"], "\(format) \(fault)")
                #expect(resolution.agreement == .httpdnsFailed)

                // A lab name has no system DNS to fall back on: the reason still comes through.
                let lab1 = await cache.resolve("sni-a.lab.test", family: .v4)
                #expect(lab1.httpdns.error?.sentence.contains(reason) == true, "\(format) \(fault)")
                #expect(lab1.agreement == .bothFailed)

                // What the cache had is still there, unchanged.
                let after = cache.entries()
                #expect(after.map(\.ips) == before.map(\.ips), "\(format) \(fault)")
                #expect(after.map(\.resolvedAt) == before.map(\.resolvedAt), "\(format) \(fault)")
                try await lab.setFault(.none)
            }
        }
    }
}

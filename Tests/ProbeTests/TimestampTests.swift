// The JSON export writes dates exactly as ISO8601DateFormatter always did (milliseconds, UTC, Z),
// now without a formatter per record: a script diffing old and new output sees no change.
import Foundation
import NameResolution
import Probe
import Testing

@Suite("JSON timestamps")
struct TimestampTests {
    /// The `startedAt` the JSON Lines export writes for a hop that started at `date`.
    private func written(_ date: Date) throws -> String {
        let hop = Hop(
            url: "https://a.test/", originalURL: "https://a.test/", method: "GET", resolver: .httpdns, outcome: .ok,
            startedAt: date)
        let attempt = Attempt(url: "https://a.test/", scenario: .directSNI, outcome: .ok, hops: [hop])
        let report = URLReport(
            url: "https://a.test/", host: "a.test",
            resolution: HostResolution(host: "a.test", system: SystemAnswer(), httpdns: HTTPDNSAnswer(provider: "x")),
            attempts: [attempt], verdict: Verdict(works: [], recommended: nil, summary: "", notes: []))
        let line = try #require(
            try JSONSerialization.jsonObject(with: exported([report], .jsonLines)) as? [String: Any])
        let attempts = try #require(line["attempts"] as? [[String: Any]])
        let hops = try #require(attempts.first?["hops"] as? [[String: Any]])
        return try #require(hops.first?["startedAt"] as? String)
    }

    @Test(
        "dates are written as ISO8601DateFormatter writes them, to the nearest millisecond",
        arguments: [
            0, 1, -1, 0.0005, 0.9999, 1_795_420_800.123, 1_795_420_800.9996, 951_782_400.5, -86_400.25,
            4_102_444_799.999, 1_700_000_000.001, -12_219_292_800.5, -8_274_817_434.3155, 1_795_420_800.5678,
            253_402_300_799.9996,
            // Before AD 1 (written as the year of its era) and past 9999: Date.ISO8601FormatStyle's path.
            -62_135_596_801.4, -62_167_219_200.5, -70_000_000_000.3, 300_000_000_000.0625,
        ])
    func matchesTheFormatter(secondsSince1970: Double) throws {
        let date = Date(timeIntervalSince1970: secondsSince1970)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(try written(date) == formatter.string(from: date))
    }

    @Test(
        "the cache's times to the second are written as the formatter writes them by default",
        arguments: [
            0, 0.9999, -0.0001, 1_795_420_800.4999, 1_795_420_800.9996, -12_219_292_800.5, 253_402_300_799.9996,
            -70_000_000_000.3,
        ])
    func toTheSecondMatchesTheFormatter(secondsSince1970: Double) {
        let date = Date(timeIntervalSince1970: secondsSince1970)
        #expect(ProbeJSON.timestampToTheSecond(date) == ISO8601DateFormatter().string(from: date))
    }

    @Test("a run of real clock readings is written as the formatter writes them")
    func matchesOnNow() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var date = Date()
        for _ in 0..<50 {
            #expect(try written(date) == formatter.string(from: date))
            date += 0.0137
        }
    }
}

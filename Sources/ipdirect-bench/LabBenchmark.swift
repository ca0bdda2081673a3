// The lab's start-up (CA, 17 certificates, 16 listeners) against binding the same number of bare
// NIO HTTP listeners, and its HTTPDNS answers against the trivial control endpoint, side by side.
import CurlTransport
import Foundation
import Lab
import NIOCore
import NIOHTTP1
import NIOPosix

enum LabBenchmark {
    static let rounds = 10
    static let queries = 1_000

    static func run() async throws {
        print("start-up: Lab.start (then shutdown), median of \(rounds) rounds")
        var labTimes: [Double] = []
        var peerTimes: [Double] = []
        var labStops: [Double] = []
        for _ in 0..<rounds {
            var clock = ContinuousClock.now
            let lab = try await Lab.start()
            labTimes.append(seconds(since: clock))
            clock = .now
            try await lab.shutdown()
            labStops.append(seconds(since: clock))

            clock = .now
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            var channels: [any Channel] = []
            for _ in 0..<16 {
                channels.append(
                    try await ServerBootstrap(group: group)
                        .childChannelInitializer { $0.pipeline.configureHTTPServerPipeline() }
                        .bind(host: "127.0.0.1", port: 0).get())
            }
            peerTimes.append(seconds(since: clock))
            for channel in channels { try await channel.close() }
            try await group.shutdownGracefully()
        }
        let lab = median(labTimes)
        let peer = median(peerTimes)
        print(
            String(
                format:
                    "  lab start %.1f ms   peer: 16 bare NIO listeners %.1f ms   ratio %.1fx   lab shutdown %.1f ms",
                lab * 1000, peer * 1000, lab / peer, median(labStops) * 1000))

        let running = try await Lab.start()
        let e = running.endpoints
        let answer = TransferSpec(url: e.httpdns + "/\(e.account)/d?host=dual.lab.test&query=4,6")
        let control = TransferSpec(url: e.control + "/fault")
        print("HTTPDNS: \(queries) sequential queries, a fresh connection each, through the shared transfer loop")
        var clock = ContinuousClock.now
        for _ in 0..<queries { _ = try await TransferLoop.shared.fetch(answer) }
        let httpdns = seconds(since: clock)
        clock = .now
        for _ in 0..<queries { _ = try await TransferLoop.shared.fetch(control) }
        let trivial = seconds(since: clock)
        print(
            String(
                format: "  alicloud /d %.0f queries/s   peer: GET /fault %.0f/s   ratio %.2fx",
                Double(queries) / httpdns, Double(queries) / trivial, httpdns / trivial))
        try await running.shutdown()
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

// `ipdirect lab`: runs the embedded lab alone, prints its endpoints as one JSON line on stdout,
// logs every HTTPDNS query to stderr, and serves until SIGINT or SIGTERM.
import ArgumentParser
import Foundation
import Lab
import Logging

extension HTTPDNSFault: ExpressibleByArgument {}

struct LabCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab", abstract: "Run the embedded lab alone; prints its endpoints.",
        discussion: """
            Prints one JSON line (httpdns, httpdnsTLS, account, secret, ca, control, hosts, zone) and serves
            until interrupted. Switch the HTTPDNS fault later with: curl -X POST '<control>/fault?mode=slow'
            """)

    @Option(help: "Listen on fixed ports N, N+1, ... instead of free ones.")
    var portBase: Int?

    @Option(help: "HTTPDNS fault at start: \(HTTPDNSFault.allCases.map(\.rawValue).joined(separator: ", ")).")
    var fault: HTTPDNSFault = .none

    @Option(help: "Directory for ca.pem (default: a fresh temporary directory, removed on exit).")
    var stateDirectory: String?

    func validate() throws {
        if let portBase, !(1..<(65536 - 32)).contains(portBase) {
            throw ValidationError("--port-base must be between 1 and \(65536 - 33)")
        }
    }

    func run() async throws {
        // Watch the signals before anything starts, so an early SIGTERM still stops the lab cleanly.
        let termination = Termination()
        let logger = Logger(label: "ipdirect.lab") { StreamLogHandler.standardError(label: $0) }
        let lab = try await Lab.start(
            LabOptions(portBase: portBase, fault: fault, stateDirectory: stateDirectory, logger: logger))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = String(decoding: try encoder.encode(lab.endpoints), as: UTF8.self)
        FileHandle.standardOutput.write(Data((line + "\n").utf8))

        let signal = await termination.wait()
        logger.info("stopping on \(signal == SIGINT ? "SIGINT" : "SIGTERM")")
        try await lab.shutdown()
    }
}

/// SIGINT and SIGTERM, caught from creation on and delivered once to whoever waits, whether
/// they came before or after the wait began. A plain signal handler writes the signal number
/// to a pipe (the self-pipe trick): unlike a dispatch signal source on Linux, which needs the
/// signal blocked in every thread, it works whichever of the process's threads the kernel picks.
private final class Termination: Sendable {
    private let readEnd: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        readEnd = ends[0]
        TerminationPipe.writeEnd = ends[1]
        for number in [SIGINT, SIGTERM] {
            _ = signal(number) { received in
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(TerminationPipe.writeEnd, &byte, 1)
            }
        }
    }

    /// The first signal received.
    func wait() async -> Int32 {
        let readEnd = readEnd
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var byte: UInt8 = 0
                while true {
                    let count = read(readEnd, &byte, 1)
                    if count == 1 { break }
                    if count == 0 || (count < 0 && errno != EINTR) {
                        byte = UInt8(SIGTERM)
                        break
                    }
                }
                continuation.resume(returning: Int32(byte))
            }
        }
    }
}

/// The write end of the termination pipe, read by the signal handler (which cannot capture).
private enum TerminationPipe {
    nonisolated(unsafe) static var writeEnd: Int32 = -1
}

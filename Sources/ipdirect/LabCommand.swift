// `ipdirect lab`: runs the embedded lab alone, prints its endpoints as one JSON line on stdout,
// logs every HTTPDNS query to stderr, and serves until SIGINT or SIGTERM.
import ArgumentParser
import Dispatch
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

/// SIGINT and SIGTERM, caught from creation on (their default action is turned off) and
/// delivered once to whoever waits, whether they came before or after the wait began.
private final class Termination: @unchecked Sendable {
    private let lock = NSLock()
    private var received: Int32?
    private var waiter: CheckedContinuation<Int32, Never>?
    private var sources: [any DispatchSourceSignal] = []

    init() {
        for number in [SIGINT, SIGTERM] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.deliver(number) }
            source.resume()
            sources.append(source)
            signal(number, SIG_IGN)
        }
    }

    private func deliver(_ number: Int32) {
        let pending: CheckedContinuation<Int32, Never>? = lock.withLock {
            if received == nil { received = number }
            defer { waiter = nil }
            return waiter
        }
        pending?.resume(returning: number)
    }

    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let already: Int32? = lock.withLock {
                if let received { return received }
                waiter = continuation
                return nil
            }
            if let already { continuation.resume(returning: already) }
        }
    }
}

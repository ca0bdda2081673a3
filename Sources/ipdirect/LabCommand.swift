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
        let logger = Logger(label: "ipdirect.lab") { StreamLogHandler.standardError(label: $0) }
        let lab = try await Lab.start(
            LabOptions(portBase: portBase, fault: fault, stateDirectory: stateDirectory, logger: logger))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = String(decoding: try encoder.encode(lab.endpoints), as: UTF8.self)
        FileHandle.standardOutput.write(Data((line + "\n").utf8))

        let signal = await Self.termination()
        logger.info("stopping on \(signal == SIGINT ? "SIGINT" : "SIGTERM")")
        try await lab.shutdown()
    }

    /// Waits for SIGINT or SIGTERM, which are ignored by default handling meanwhile.
    private static func termination() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let once = ResumeOnce(continuation)
            var sources: [any DispatchSourceSignal] = []
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { once.resume(number) }
                source.resume()
                sources.append(source)
            }
            SignalSources.keep(sources)
        }
    }
}

/// Resumes a continuation once, whichever signal comes first.
private final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Int32, Never>?

    init(_ continuation: CheckedContinuation<Int32, Never>) { self.continuation = continuation }

    func resume(_ value: Int32) {
        let pending = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        pending?.resume(returning: value)
    }
}

/// Keeps the signal sources alive for the life of the process.
private enum SignalSources {
    nonisolated(unsafe) private static var kept: [any DispatchSourceSignal] = []
    static func keep(_ sources: [any DispatchSourceSignal]) { kept += sources }
}

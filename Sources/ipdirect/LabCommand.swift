// `ipdirect lab`: runs the embedded lab alone, prints its endpoints as one JSON line on stdout,
// logs every HTTPDNS query to stderr, and serves until SIGINT or SIGTERM.
import ArgumentParser
import Foundation
import Lab
import Logging
import Signals

extension HTTPDNSFault: ExpressibleByArgument {}

struct LabCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab", abstract: "Run the embedded lab alone; prints its endpoints.",
        discussion: """
            Prints one JSON line (httpdns, httpdnsTLS, account, secret, keys, ca, control, hosts, zone) and serves \
            until interrupted. Switch the HTTPDNS fault later with: curl -X POST '<control>/fault?mode=slow'
            """)

    @Option(help: "Listen on fixed ports N, N+1, ... instead of free ones.")
    var portBase: Int?

    @Option(help: "HTTPDNS fault at start: \(HTTPDNSFault.allCases.map(\.rawValue).joined(separator: ", ")).")
    var fault: HTTPDNSFault = .none

    @Option(help: "Directory for ca.pem (default: a fresh temporary directory, removed on exit).")
    var stateDirectory: String?

    func validate() throws {
        let bases = LabOptions.portBases
        if let portBase, !bases.contains(portBase) {
            throw ValidationError(
                "--port-base must be between \(bases.lowerBound) and \(bases.upperBound): the lab uses the ports after it"
            )
        }
    }

    func run() async throws {
        // Watch the signals before anything starts, so an early SIGTERM still stops the lab cleanly.
        let termination = try SignalPipe(watching: [SIGINT, SIGTERM])
        defer { termination.stop() }
        let logger = Logger(label: "ipdirect.lab") { StreamLogHandler.standardError(label: $0) }
        let lab = try await Lab.start(
            LabOptions(portBase: portBase, fault: fault, stateDirectory: stateDirectory, logger: logger))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = String(decoding: try encoder.encode(lab.endpoints), as: UTF8.self)
        FileHandle.standardOutput.write(Data((line + "\n").utf8))

        var signal = SIGTERM
        for await received in termination.received() {
            signal = received
            break
        }
        logger.info("stopping on \(signal == SIGINT ? "SIGINT" : "SIGTERM")")
        try await lab.shutdown()
    }
}

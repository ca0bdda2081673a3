// `ipdirect lab`: runs the embedded lab alone, prints its endpoints as one JSON line on stdout,
// logs every HTTPDNS query to stderr, and serves until SIGINT or SIGTERM.
import ArgumentParser
import Foundation
import Lab
import Logging
import Signals

extension HTTPDNSFault: ExpressibleByArgument {}

struct LabCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "lab", abstract: "Run the embedded lab alone; prints its endpoints.",
        discussion: """
            Prints one JSON line (httpdns, httpdnsTLS, account, secret, keys, ca, control, hosts, zone) and serves \
            until interrupted. Switch the HTTPDNS fault later with: curl -X POST 'CONTROL/fault?mode=slow'
            """)

    static let examples: [(command: String, shows: String)] = [
        ("ipdirect lab", "Start the lab; its first line is JSON with every endpoint, key and the CA file."),
        (
            "ipdirect lab --port-base 40000 --fault slow",
            "Fixed ports from 40000, the HTTPDNS service slow from the start."
        ),
        (
            "ipdirect lab --state-directory /tmp/ipdirect-lab",
            "Keep the lab's CA in /tmp/ipdirect-lab/ca.pem, for curl --cacert while it runs."
        ),
    ]

    @Option(help: ArgumentHelp("Listen on fixed ports N, N+1, ... instead of free ones.", valueName: "N"))
    var portBase: Int?

    @Option(
        help: ArgumentHelp(
            "HTTPDNS fault at start: \(HTTPDNSFault.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "FAULT"))
    var fault: HTTPDNSFault = .none

    @Option(
        help: ArgumentHelp(
            "Directory for ca.pem (default: a fresh temporary directory, removed on exit).", valueName: "DIRECTORY"))
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

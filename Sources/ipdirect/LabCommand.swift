// `ipdirect lab`: runs the embedded lab alone, prints its endpoints as one JSON line on stdout,
// logs every HTTPDNS query to stderr, and serves until SIGINT or SIGTERM.
import ArgumentParser
import Foundation
import Lab
import Logging
import Signals

extension HTTPDNSFault: ExpressibleByArgument {}

extension LabFaultSet {
    /// The HTTPDNS modes `--fault` takes, for help texts.
    static let modeWords = HTTPDNSFault.allCases.map(\.rawValue).joined(separator: ", ")
    /// The network faults `--fault` takes, for help texts.
    static let networkWords = NetworkFault.allCases.map(\.rawValue).joined(separator: ", ")

    /// The network faults by name, in the order `NetworkFault` lists them, for start-up lines.
    var networkNames: [String] { NetworkFault.allCases.filter(network.contains).map(\.rawValue) }
}

struct LabCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "lab", abstract: "Run the embedded lab alone; prints its endpoints.",
        discussion: """
            Prints one JSON line (httpdns, httpdnsTLS, account, secret, keys, ca, control, hosts, zone) and serves \
            until interrupted. Switch the HTTPDNS fault later with: curl -X POST 'CONTROL/fault?mode=slow'
            --fault takes a comma-separated list: at most one HTTPDNS mode (\(LabFaultSet.modeWords)) and any of \
            the network faults, one per doctor check (\(LabFaultSet.networkWords)), which stay on while the lab \
            runs; point ipdirect doctor at it, or run ipdirect doctor --lab --fault LIST.
            """)

    static let examples: [(command: String, shows: String)] = [
        ("ipdirect lab", "Start the lab; its first line is JSON with every endpoint, key and the CA file."),
        (
            "ipdirect lab --port-base 40000 --fault slow",
            "Fixed ports from 40000, the HTTPDNS service slow from the start."
        ),
        (
            "ipdirect lab --fault clock-skew,service-blocked",
            "The service's clock ahead and one of its addresses refusing connections, for ipdirect doctor."
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
            "Faults at start, comma-separated: one HTTPDNS mode and any network faults (see below).",
            valueName: "LIST"),
        transform: LabCommand.faultList)
    var fault = LabFaultSet()

    /// Reads `--fault`, refusing a bad list with the parse error's sentence.
    static func faultList(_ text: String) throws -> LabFaultSet {
        switch LabFaultSet.parse(text) {
        case .success(let set): return set
        case .failure(let error): throw ValidationError(error.description)
        }
    }

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
        var options = LabOptions(
            portBase: portBase, fault: fault.httpdns, stateDirectory: stateDirectory, logger: logger)
        options.networkFaults = fault.network
        let lab = try await Lab.start(options)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = String(decoding: try encoder.encode(lab.endpoints), as: UTF8.self)
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
        if !fault.network.isEmpty {
            logger.info("network faults on: \(fault.networkNames.joined(separator: ", "))")
        }

        var signal = SIGTERM
        for await received in termination.received() {
            signal = received
            break
        }
        logger.info("stopping on \(signal == SIGINT ? "SIGINT" : "SIGTERM")")
        try await lab.shutdown()
    }
}

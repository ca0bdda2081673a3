// `ipdirect lab`: runs the embedded lab alone, prints its endpoints as one JSON line on stdout (with
// a doctor command that works against it), logs every HTTPDNS query to stderr, serves until a signal.
import ArgumentParser
import Foundation
import Lab
import Logging
import NameResolution
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
            Prints one JSON line (httpdns, httpdnsTLS, account, secret, keys, ca, control, hosts, zone, doctor) and \
            serves until interrupted. Switch the HTTPDNS fault later with: curl -X POST 'CONTROL/fault?mode=slow'
            doctor is a command that checks the lab as a real service from another process: it reads \
            doctor.toml in the state directory (start IP, account, secret, service name, CA), and its system \
            resolver must be the lab's DNS server (dns) for the names to agree. --listen, --service-address and \
            --well-known-ports make the lab a stand-in on a network (a namespace's address, ports 80, 443 and 53).
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
            "ipdirect lab --listen 192.0.2.1 --service-address 192.0.2.2 --service-address 192.0.2.1 "
                + "--well-known-ports --state-directory /tmp/ipdirect-lab",
            "A stand-in service on a namespace's addresses, ports 80, 443 and 53; ca.pem and doctor.toml in /tmp/ipdirect-lab."
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
            "Directory for ca.pem and doctor.toml (default: a fresh temporary directory, removed on exit).",
            valueName: "DIRECTORY"))
    var stateDirectory: String?

    @Option(
        help: ArgumentHelp(
            "Listen on this address instead of 127.0.0.1 (the HTTPDNS service, the origins, the DNS server).",
            valueName: "ADDRESS"))
    var listen: String?

    @Option(
        name: .customLong("service-address"),
        help: ArgumentHelp(
            "A service address /ss names, in order (repeatable; default 127.0.0.2 and 127.0.0.1, or --listen's).",
            valueName: "ADDRESS"))
    var serviceAddresses: [String] = []

    @Flag(help: "The HTTPDNS service on ports 80 and 443 and the DNS server on 53, as real ones (needs root).")
    var wellKnownPorts = false

    func validate() throws {
        for address in [listen].compactMap({ $0 }) + serviceAddresses {
            guard let ip = IPAddress(address) else {
                throw ValidationError("--listen and --service-address take an IPv4 or IPv6 address, not '\(address)'")
            }
            // The lab's URLs, /ss and certificate name the address: a client must be able to reach it.
            if ip.text == "0.0.0.0" || ip.text == "::" {
                throw ValidationError(
                    "--listen and --service-address take an address clients reach, not the wildcard '\(address)': "
                        + "the lab's URLs, its /ss and its certificate name it (give each address, e.g. "
                        + "--listen 192.0.2.1 --service-address 192.0.2.2 --service-address 192.0.2.1)")
            }
        }
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
        if let listen { options.listenAddress = listen }
        if !serviceAddresses.isEmpty { options.serviceAddresses = serviceAddresses }
        options.wellKnownPorts = wellKnownPorts
        let lab = try await Lab.start(options)
        var endpoints = lab.endpoints
        do {
            endpoints.doctor = try Self.writeDoctorConfiguration(endpoints)
        } catch {
            try? await lab.shutdown()
            throw error
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = String(decoding: try encoder.encode(endpoints), as: UTF8.self)
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
        logger.info(
            "check it as a service from another process (its DNS server as the system resolver): \(endpoints.doctor ?? "")"
        )
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

extension LabCommand {
    /// Writes `doctor.toml` beside the lab's CA (readable by its owner alone: it holds the secret)
    /// and returns the doctor command that reads it. The file points at the lab as the SDKs meet a
    /// real service: its TLS address as the start IP, `/ss` for the service addresses, the
    /// service's certificate name, and the lab's CA added to the system's.
    ///
    /// - Throws: `ValidationError` when the file cannot be written.
    static func writeDoctorConfiguration(_ endpoints: LabEndpoints) throws -> String {
        let path = ((endpoints.ca as NSString).deletingLastPathComponent as NSString)
            .appendingPathComponent("doctor.toml")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // A JSON string without escaped slashes is a TOML basic string.
        func quoted(_ text: String) -> String {
            (try? String(decoding: encoder.encode(text), as: UTF8.self)) ?? "\"\""
        }
        let text = """
            # Written by ipdirect lab for the doctor (and resolve, probe) run against it from another process.
            provider = "alicloud"
            start_ips = [\(quoted(endpoints.httpdnsTLS))]
            service_name = \(quoted(LabEndpoints.serviceName))
            account = \(quoted(endpoints.account))
            secret = \(quoted(endpoints.secret))
            ca_file = \(quoted(endpoints.ca))

            """
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw ValidationError("cannot write the doctor's configuration to \(path)")
        }
        return "ipdirect doctor --config \(path)"
    }
}

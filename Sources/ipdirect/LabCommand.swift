// `ipdirect lab`: runs the embedded lab alone, prints its endpoints (a summary with ready-made command
// lines on a terminal, one JSON line otherwise), logs every HTTPDNS query to stderr, serves until a signal.
import ArgumentParser
import FoundationEssentials
import FoundationGaps
import Lab
import LabFaults
import Logging
import NameResolution
import Probe
import Signals
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
            On a terminal prints a summary: the endpoints, the CA file, the lab's names and what each shows, and \
            ipdirect and curl command lines that work against it from another shell. Otherwise (a pipe, \
            --format json) prints one JSON line (httpdns, httpdnsTLS, account, secret, keys, ca, control, hosts, zone, doctor) and \
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
        (
            "ipdirect lab",
            "Start the lab; on a terminal a summary with command lines to try from another shell."
        ),
        (
            "ipdirect lab --format json --port-base 40000 --fault slow",
            "One JSON line with every endpoint, key and the CA file (what a pipe gets without --format); "
                + "fixed ports from 40000, the HTTPDNS service slow from the start."
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

    @Option(
        help: ArgumentHelp(
            "Output: text (a summary with command lines) or json (one line); default text on a terminal, json otherwise.",
            valueName: "FORMAT"))
    var format: TextOrJSON?

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
        let chosen = format ?? (isatty(STDOUT_FILENO) == 1 ? .text : .json)
        if chosen == .text {
            StandardStream.output.write(Self.summary(endpoints, examples: (try? Lab.examples()) ?? []))
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let line = String(decoding: try encoder.encode(endpoints), as: UTF8.self)
            StandardStream.output.write((line + "\n"))
        }
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
        let path = configurationPath(endpoints)
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
        return "ipdirect doctor --config \(ReproduceCommand.quoted(path))"
    }

    /// Where `doctor.toml` goes: beside the lab's CA file, in its state directory.
    static func configurationPath(_ endpoints: LabEndpoints) -> String {
        endpoints.ca.deletingLastPathComponent.appendingPathComponent("doctor.toml")
    }

    /// The command lines that work against a running lab from another shell, each with what it
    /// shows: probe, resolve and doctor read the doctor's configuration file (the account, the
    /// secret, the service's CA), curl asks an origin and the HTTPDNS service directly. The one
    /// source of the lines the summary prints (the doctor's line is `endpoints.doctor`).
    static func commandLines(_ endpoints: LabEndpoints) -> [(command: String, shows: String)] {
        let quoted = ReproduceCommand.quoted
        var lines: [(command: String, shows: String)] = []
        let name = endpoints.hosts["sni-a.lab.test"] != nil ? "sni-a.lab.test" : endpoints.hosts.keys.sorted().first
        let settings = "--config \(quoted(configurationPath(endpoints))) --dns-server \(endpoints.dns)"
        if let name, let url = endpoints.hosts[name] {
            lines.append(
                (
                    "ipdirect probe \(settings) --cacert \(quoted(endpoints.ca)) \(quoted(url))",
                    "each IP-direct way to \(name), with the lab's account and CA"
                ))
            lines.append(
                ("ipdirect resolve \(settings) \(name)", "the lab's DNS server and HTTPDNS side by side for \(name)"))
        }
        if let doctor = endpoints.doctor {
            lines.append(
                (
                    doctor,
                    "the doctor's checks against the lab as a real service (names agree when the system resolver is the lab's DNS server)"
                ))
        }
        if let name, let url = endpoints.hosts[name], let components = URLComponents(string: url),
            let port = components.port, let address = URLComponents(string: endpoints.httpdns)?.host
        {
            lines.append(
                (
                    "curl --cacert \(quoted(endpoints.ca)) --resolve \(name):\(port):\(address) \(quoted(url))",
                    "the origin as curl reaches it at the lab's address"
                ))
        }
        if let name {
            lines.append(
                (
                    "curl \(quoted("\(endpoints.httpdns)/\(endpoints.account)/d?host=\(name)"))",
                    "the HTTPDNS service's own answer for \(name) (alicloud, unsigned)"
                ))
        }
        lines.append(
            (
                "curl -X POST \(quoted("\(endpoints.control)/fault?mode=none"))",
                "the fault switch: none, or slow, error, malformed, down for a failing service"
            ))
        return lines
    }

    /// What a person at a terminal reads when the lab starts: where each part listens, the CA
    /// file, the names with their URLs and what each shows, and the command lines to try from
    /// another shell.
    static func summary(_ endpoints: LabEndpoints, examples: [LabNameExample]) -> String {
        var out = "The lab is running; Ctrl-C stops it. For a program: ipdirect lab --format json\n\n"
        let rows = [
            ["HTTPDNS (http)", endpoints.httpdns], ["HTTPDNS (https)", endpoints.httpdnsTLS],
            ["DNS server", "\(endpoints.dns) (UDP and TCP)"], ["account", endpoints.account],
            ["CA file", endpoints.ca],
            ["origins", "\(endpoints.hosts.count) names, each URL in --format json's hosts; some of them:"],
        ]
        out += TextTable.lines(header: ["part", "where"], rows: rows, indent: "  ").dropFirst()
            .map { $0 + "\n" }.joined()
        let names = examples.map { example -> [String] in
            let host = (try? ProbeURL.parse(example.typed).host) ?? example.typed
            return [endpoints.hosts[host] ?? example.typed, example.shows]
        }
        out += TextTable.lines(header: ["URL", "shows"], rows: names, indent: "    ").dropFirst()
            .map { $0 + "\n" }.joined()
        out += "\nTry from another shell:\n"
        for line in commandLines(endpoints) { out += "  # \(line.shows)\n  \(line.command)\n" }
        return out
    }
}

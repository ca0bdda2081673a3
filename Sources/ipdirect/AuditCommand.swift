// `ipdirect audit`: the lab in audit mode for an app's own IP-direct integration: prints what the
// app needs (endpoints, CA, token, trap URLs), waits while the app runs, then prints the report.
import ArgumentParser
import Audit
import Composition
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe
import Signals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

struct AuditCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Check an app's own IP-direct integration against the lab's traps.",
        discussion: """
            Starts the lab in audit mode and prints what the app under test needs: the HTTPDNS endpoint in \
            each protocol (alicloud v2 and legacy, tencent, DoH JSON, RFC 8484, and a plain /ip?host=NAME), \
            the lab's DNS server (the app's system DNS for the fallback trap), the lab CA (PEM and DER), a \
            run token and one URL per trap (\(AuditTrapID.allCases.map(\.rawValue).joined(separator: ", "))) \
            under LABEL.TOKEN.audit.lab.test. Use the app against them, then stop the audit with Ctrl-C \
            (or let --for run out): it prints the report, each trap pass, warn, fail or not exercised with \
            the lab's evidence and what to change.
            On a terminal the setup and report are text; otherwise (a pipe, --format json) two JSON lines: \
            the setup when the audit starts, the report when it ends (schema/audit.schema.json).
            Loopback by default (a desktop app, a test runner, an iOS simulator); --listen ADDRESS for a \
            device or emulator on the local network, with a warning; there the lab serves the audit's names \
            alone (no other lab name, no fault switch).
            Exit status as the doctor's: 0 nothing warns or fails (a trap not exercised is no pass, but no \
            failure either), 1 some trap warns, 3 some trap fails.
            """)

    static let examples: [(command: String, shows: String)] = [
        ("ipdirect audit", "The setup for the app; use the app, then Ctrl-C prints the report."),
        (
            "ipdirect audit --for 120 --format json > audit.jsonl",
            "Two JSON lines: the setup at once, the report after 120 seconds."
        ),
        (
            "ipdirect audit --listen 192.0.2.1 --state-directory /tmp/ipdirect-audit",
            "For a device on the local network: ca.der in /tmp/ipdirect-audit for its trust store."
        ),
    ]

    @Option(
        help: ArgumentHelp(
            "Output: text on a terminal, json (two lines: the setup, then the report) otherwise.",
            valueName: "FORMAT"))
    var format: TextOrJSON?

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp(
            "Seconds to wait for the app before the report (default: until Ctrl-C).", valueName: "SECONDS"))
    var duration: Double?

    @Option(
        help: ArgumentHelp(
            "Listen on this address instead of 127.0.0.1 (for a device or emulator on the local network).",
            valueName: "ADDRESS"))
    var listen: String?

    @Option(
        help: ArgumentHelp(
            "Directory for ca.pem and ca.der (default: a fresh temporary directory, removed on exit).",
            valueName: "DIRECTORY"))
    var stateDirectory: String?

    @Option(
        help: ArgumentHelp(
            "Also write the setup as one JSON line to FILE (for a test runner that drives the app).", valueName: "FILE")
    )
    var setupFile: String?

    @OptionGroup var colour: ColorOption

    func validate() throws {
        if let duration, !(duration > 0 && duration <= 86_400) {
            throw ValidationError("--for takes the seconds to wait for the app, above 0 and at most 86400")
        }
        if let listen {
            guard let ip = IPAddress(listen), ip.text != "0.0.0.0", ip.text != "::" else {
                throw ValidationError(
                    "--listen takes an address the app reaches (an IPv4 or IPv6 address of this machine), not '\(listen)'"
                )
            }
        }
    }

    func run() async throws {
        // Watch the signals before anything starts: Ctrl-C is how the report is asked for.
        let termination = try SignalPipe(watching: [SIGINT, SIGTERM])
        defer { termination.stop() }
        let address = listen ?? "127.0.0.1"
        if AuditNames(token: "", listen: address).beyondLoopback {
            ResolutionOutput.warn(
                "warning: the audit listens on \(address), not loopback: anyone on that network reaches its HTTPDNS service, DNS server and trap origins while it runs (they serve the audit's names alone)"
            )
        }
        let session: AuditSession
        do {
            session = try await AuditSession.start(listen: address, stateDirectory: stateDirectory)
        } catch {
            throw CommandFailure("cannot start the audit: \(error)")
        }
        if let setupFile {
            do {
                try PrivateFile.write(session.setup.jsonLine(), to: setupFile)
            } catch {
                try? await session.shutdown()
                throw CommandFailure("cannot write the audit's setup: \(error)")
            }
        }
        let chosen = format ?? (isatty(STDOUT_FILENO) == 1 ? .text : .json)
        StandardStream.output.write(
            chosen == .text ? Data(AuditTable.setup(session.setup).utf8) : session.setup.jsonLine())

        await Self.wait(for: duration, orSignalFrom: termination)
        let report = session.report()
        try? await session.shutdown()
        switch chosen {
        case .text:
            let style = TerminalSize.tableStyle(color: colour.color, toFile: false)
            StandardStream.output.write("\n" + AuditTable.render(report, style: style))
        case .json:
            StandardStream.output.write(report.json(pretty: false))
        }
        if report.exitCode != 0 { throw ExitCode(report.exitCode) }
    }

    /// Returns after `seconds` (nil: never) or at the first SIGINT or SIGTERM, whichever comes first.
    static func wait(for seconds: Double?, orSignalFrom termination: SignalPipe) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in termination.received() { return }
            }
            if let seconds {
                group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
            }
            await group.next()
            group.cancelAll()
        }
    }
}

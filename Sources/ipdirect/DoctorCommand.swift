// `ipdirect doctor`: every check of the network between this machine and its HTTPDNS service at
// once, bounded, with progress on a terminal, then the table or the JSON report; `--host` probes too.
import ArgumentParser
import Composition
import CurlTransport
import Doctor
import FoundationEssentials
import FoundationGaps
import LabFaults
import NameResolution
import Probe
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

struct DoctorCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "doctor", abstract: "Check why IP-direct fails on this network, in one command.",
        discussion: """
            Runs every check at once: \(DoctorCheckID.allCases.map(\.title).joined(separator: ", ")). Each \
            answers pass, warn, fail or skipped with a sentence of what it saw and, unless it passed, one of \
            what to do. --host NAME (repeatable) adds a probe of the name every IP-direct way at the end.
            --within bounds the whole run (default \(ResolutionError.format(defaultWithin)) s): a check still \
            running then fails, saying so. --timeout is the provider option: how long one HTTPDNS or system \
            DNS answer is waited for.
            With --lab, the lab's HTTPDNS service and DNS server stand in for the real ones, and --fault LIST \
            fakes network faults there (\(LabFaultSet.networkWords); with at most one HTTPDNS mode: \
            \(LabFaultSet.modeWords)).
            On a terminal, standard error shows each check as it finishes.
            Exit status: 0 every check passed (or was skipped), 1 some check warns, 3 some check fails (or a \
            --host has no working technique), 2 bad usage (a bad --fault list, --fault without --lab).
            """)

    static let examples: [(command: String, shows: String)] = [
        ("ipdirect doctor --lab", "Every check against the lab: all pass."),
        (
            "ipdirect doctor --lab --fault clock-skew,service-blocked",
            "The lab's clock ahead and one service address refusing: the clock and reachability checks fail."
        ),
        (
            "ipdirect doctor --account 139450 --host api.example.com",
            "Your own account checked, then api.example.com probed every IP-direct way."
        ),
        ("ipdirect doctor --lab --format json | jq .findings", "The report as JSON (schema/doctor.schema.json)."),
    ]

    /// The whole run's bound when --within is not given, in seconds.
    static let defaultWithin = ResolverSession.defaultDoctorWithin

    @Option(
        name: .customLong("host"),
        help: ArgumentHelp("Also probe NAME every IP-direct way at the end (repeatable).", valueName: "NAME"))
    var hosts: [String] = []

    @Option(
        name: .customLong("connectivity-url"),
        help: ArgumentHelp(
            "A plain-HTTP URL that answers 204 with an empty body, for the interception check (repeatable; default Android's and Xiaomi's, or the lab's).",
            valueName: "URL"))
    var connectivityURLs: [String] = []

    @Option(
        help: ArgumentHelp(
            "The name the checks resolve end to end (default the first --host, else \(DoctorContext.defaultCanary), or the lab's).",
            valueName: "NAME"))
    var canary: String?

    @OptionGroup var formatting: OutputOptions<TableOrJSON>

    @OptionGroup var colour: ColorOption

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds the whole run may take, every check and --host probe (default \(ResolutionError.format(defaultWithin))); not --timeout, which is one HTTPDNS answer's wait.",
            valueName: "SECONDS"))
    var within: Double = defaultWithin

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --lab: the faults the lab fakes, comma-separated (network faults and one HTTPDNS mode).",
            valueName: "LIST"),
        transform: LabCommand.faultList)
    var fault: LabFaultSet?

    @OptionGroup(title: "Provider options")
    var providerOptions: ProviderOptions

    func validate() throws {
        if !(within > 0 && within <= 600) {
            throw ValidationError("--within takes the seconds the whole run may take, above 0 and at most 600")
        }
        if fault != nil && !providerOptions.lab {
            throw ValidationError(
                "--fault fakes faults in the lab: add --lab, or run 'ipdirect lab --fault LIST' and point the "
                    + "doctor at the lab it prints (--endpoint, --account, --httpdns-ca, --dns-server)")
        }
        for url in connectivityURLs where (try? ProbeURL.parse(url))?.scheme != "http" {
            throw ValidationError("--connectivity-url takes a plain-HTTP URL (http://...), not '\(url)'")
        }
        if let canary, (try? ProbeURL.parse(canary))?.host != canary {
            throw ValidationError("--canary takes a host name, not '\(canary)'")
        }
        for host in hosts where (try? ProbeURL.parse(host)) == nil {
            throw ValidationError("--host takes a host name or URL to probe, not '\(host)'")
        }
    }

    func run() async throws {
        let session: ResolverSession
        do {
            session = try await providerOptions.start(labFaults: fault ?? LabFaultSet())
        } catch let error as ValidationError {
            throw UsageError(error.message)
        }
        let budget = Duration.seconds(within)
        // The checks take names: a --host given as a URL (https://api.example.com/path) is its host.
        let names = hosts.compactMap { try? ProbeURL.parse($0).host }
        let progress = DoctorProgress(color: colour.color)
        progress.start(checks: DoctorChecks.all.count, within: within)
        let started = ContinuousClock.now
        // The host probes run beside the checks, so --within bounds both.
        async let probed = session.probeDoctorHosts(hosts, within: budget)
        // The same run the console's doctor view starts from its session.
        var report = await session.runDoctor(
            hosts: names, budget: budget, canary: canary, connectivityURLs: connectivityURLs,
            progress: progress.finished)
        report.hosts = await probed
        report.durationMs = (ContinuousClock.now - started).inSeconds * 1000
        await session.close()

        switch formatting.format {
        case .table:
            progress.clearIfTableFollows()
            let style = TerminalSize.tableStyle(color: colour.color, toFile: false)
            StandardStream.output.write(DoctorTable.render(report, style: style))
        case .json:
            let pretty = formatting.pretty ?? (isatty(STDOUT_FILENO) == 1)
            StandardStream.output.write(report.json(pretty: pretty))
        }
        if report.exitCode != 0 { throw ExitCode(report.exitCode) }
    }
}

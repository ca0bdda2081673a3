// `ipdirect [console]`: the interactive console (the default subcommand) on the session's live
// engine (Composition's LiveConsoleEngine), with the key map, theme and trace bounds it takes.
import ArgumentParser
import Composition
import ConfigurationSources
import Console
import FoundationEssentials
import Probe

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

struct ConsoleCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "console", abstract: "The interactive console (the default).",
        discussion: """
            Press p, type a host or URL and press Enter to probe it every IP-direct way. Views: 1 probe, \
            2 cache, 3 traces, 4 events, 5 or ? help (every key). q quits. e exports the traces to \
            export_dir (the configuration; the working directory by default). D opens the doctor: every \
            check of 'ipdirect doctor', filled in as each ends. Needs a terminal; for scripts use \
            'ipdirect probe URL...'.
            """)

    static let examples: [(command: String, shows: String)] = [
        ("ipdirect --lab", "The console against the lab: type hijacked.lab.test and press Enter."),
        (
            "ipdirect console --provider alicloud --account 100000",
            "Against Alibaba Cloud HTTPDNS (the secret from IPDIRECT_HTTPDNS_SECRET)."
        ),
        ("NO_COLOR=1 ipdirect --lab", "The same without colours."),
    ]

    @OptionGroup var provider: ProviderOptions

    @Flag(help: "Draw without colors (also when NO_COLOR is set).")
    var noColor = false

    @Option(help: ArgumentHelp("How many request traces to keep; the oldest are dropped first.", valueName: "N"))
    var maxTraces = ConsoleOptions.defaultMaxTraces

    @Option(
        help: ArgumentHelp(
            "How many of the newest traces keep headers, certificates and curl's log; older ones keep their summary and timings.",
            valueName: "N"))
    var maxTraceDetails = ConsoleOptions.defaultMaxTraceDetails

    @Option(help: RequestOptionHelp.cacert)
    var cacert: String?

    @OptionGroup var requestTimeout: ProbeTimeoutOption

    func validate() throws {
        guard maxTraces >= 1 && maxTraces <= 10_000_000 else {
            throw ValidationError("--max-traces must be between 1 and 10000000")
        }
        guard maxTraceDetails >= 1 else { throw ValidationError("--max-trace-details must be at least 1") }
    }

    func run() async throws {
        guard ConsoleSession.hasTerminal else { throw UsageError("\(ConsoleStartError.notATerminal)") }
        let originCA = try CAFileOption.origin(cacert: cacert)
        let session = try await provider.start()
        let keyMap: KeyMap
        do {
            keyMap = try KeyMap.remapped(session.configuration.console.keys)
        } catch {
            await session.close()
            throw UsageError(error.description)
        }
        let theme = ConsoleTheme.resolve(
            session.configuration.console.theme, environment: ProcessInfo.processInfo.environment)
        let options = ProbeOptions(timeout: .seconds(requestTimeout.probeTimeout ?? ProbeTimeoutOption.defaultSeconds))
        // The lab's CA stands alone (its names are all the console probes then), as in the agent.
        let engine = LiveConsoleEngine(
            session: session, probeOptions: session.probeOptions(options, originCA: originCA))
        let stoppedBy: Int32?
        do {
            stoppedBy = try await ConsoleSession.run(
                engine: engine,
                options: ConsoleOptions(
                    useColor: !noColor && !ConsoleOptions.environmentForbidsColor, maxTraces: maxTraces,
                    maxTraceDetails: maxTraceDetails, keyMap: keyMap, theme: theme,
                    exportDirectory: session.configuration.console.exportDirectory))
        } catch {
            await engine.close()
            await session.close()
            throw error
        }
        await engine.close()
        await session.close()
        // Stopped by a signal: exit as a shell expects.
        if let stoppedBy { Glibc.exit(ExitStatus.stopped(by: stoppedBy)) }
    }
}

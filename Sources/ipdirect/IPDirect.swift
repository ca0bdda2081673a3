// The ipdirect executable: command-line parsing and wiring of the engine's front ends.
// Each subcommand lives in its own file beside this one.
import ArgumentParser

@main
struct IPDirect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ipdirect",
        abstract: "Troubleshoot HTTPDNS and IP-direct connections.",
        subcommands: [
            ConsoleCommand.self, ProbeCommand.self, ResolveCommand.self, LabCommand.self, CacheCommand.self,
            ConfigCommand.self,
        ],
        defaultSubcommand: ConsoleCommand.self)
}

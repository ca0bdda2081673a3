// The ipdirect executable: command-line parsing and wiring of the engine's front ends.
// Each subcommand lives in its own file beside this one.
import ArgumentParser
import Foundation
import TerminalText

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

    /// Runs the command, mapping ArgumentParser's usage failures (exit 64) to the exit status
    /// 2 that scripts rely on for bad usage (DESIGN.md, "Command line").
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((TerminalText.escapedLines(fullMessage(for: error)) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

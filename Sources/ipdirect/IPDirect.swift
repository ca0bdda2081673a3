// The ipdirect executable: command-line parsing and wiring of the engine's front ends.
// Each subcommand lives in its own file beside this one; exit statuses are written down here only.
import ArgumentParser
import Foundation
import NameResolution
import TerminalText

@main
struct IPDirect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ipdirect",
        abstract: "Troubleshoot HTTPDNS and IP-direct connections.",
        version: IPDirectVersion.string,
        subcommands: [
            ConsoleCommand.self, ProbeCommand.self, ResolveCommand.self, LabCommand.self, CacheCommand.self,
            ConfigCommand.self, AgentCommand.self,
        ],
        defaultSubcommand: ConsoleCommand.self)

    /// Runs the command. The one place bad usage becomes exit status 2 (README, "Command
    /// line"): ArgumentParser's own usage failures (its exit 64) and every `UsageError`.
    static func main() async {
        var commandName = "ipdirect"
        do {
            var command = try parseAsRoot()
            let names = path(to: type(of: command))
            if !names.isEmpty { commandName = names.joined(separator: " ") }
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as UsageError {
            if let message = error.message {
                FileHandle.standardError.write(Data("\(commandName): \(TerminalText.escapedLines(message))\n".utf8))
            }
            Foundation.exit(ExitStatus.usage)
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((TerminalText.escapedLines(fullMessage(for: error)) + "\n").utf8))
                Foundation.exit(ExitStatus.usage)
            }
            exit(withError: error)
        }
    }

    /// The names from the root to `command`: ["ipdirect", "cache", "list"].
    private static func path(
        to command: any ParsableCommand.Type, from root: any ParsableCommand.Type = IPDirect.self
    ) -> [String] {
        if ObjectIdentifier(command) == ObjectIdentifier(root) { return [root._commandName] }
        for sub in root.configuration.subcommands {
            let rest = path(to: command, from: sub)
            if !rest.isEmpty { return [root._commandName] + rest }
        }
        return []
    }
}

/// Bad usage or bad input found while a command runs: `ExitStatus.usage`, the message on stderr
/// after the command's name (`ipdirect probe: cannot read --input urls.txt`).
///
/// Problems found while parsing (`validate()`) are `ValidationError`s instead, which
/// ArgumentParser prints with the command's usage; both end with the same status.
struct UsageError: Error {
    /// The sentence to print; nil when the problems were already reported one by one.
    var message: String?

    init(_ message: String) { self.message = message }

    /// Exit 2 for problems already printed (each bad URL of a batch, say).
    static let alreadyReported = UsageError(nil)

    private init(_ message: String?) { self.message = message }
}

/// The exit statuses scripts rely on (README, "Command line"), for every command.
enum ExitStatus {
    /// What was asked for did not work: a URL with no working direct scenario, a name with no
    /// address, a cache miss, a file that could not be written or changed.
    static let failed: Int32 = 1
    /// Bad usage or bad input.
    static let usage: Int32 = 2

    /// Stopped by `signal`: what a shell reports for it, 128 + its number (130 for SIGINT,
    /// 143 for SIGTERM).
    static func stopped(by signal: Int32) -> Int32 { 128 + signal }
}

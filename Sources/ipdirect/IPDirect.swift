// The ipdirect executable: command-line parsing and wiring of the engine's front ends.
// Each subcommand lives in its own file beside this one; exit statuses are written down here only.
import ArgumentParser
import FoundationEssentials
import FoundationGaps
import NameResolution
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

@main
struct IPDirect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ipdirect",
        abstract: "Troubleshoot HTTPDNS and IP-direct connections.",
        discussion: """
            Every command says what went wrong in one sentence on standard error, after 'ipdirect:'.

            EXIT STATUS (the same in every command):
            \(ExitStatus.table.map { "  \($0.status)  \($0.meaning)" }.joined(separator: "\n"))
            """,
        version: IPDirectVersion.string,
        subcommands: [
            ConsoleCommand.self, ProbeCommand.self, ResolveCommand.self, LabCommand.self, CacheCommand.self,
            ConfigCommand.self, AgentCommand.self, DoctorCommand.self, AuditCommand.self,
        ],
        defaultSubcommand: ConsoleCommand.self)

    /// Runs the command. The one place an error becomes a sentence on stderr and an exit status
    /// (`ExitStatus.table`): ArgumentParser's usage failures, `UsageError`, `CommandFailure`, and
    /// whatever else a command throws.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // `ipdirect --version` alone answers before the command tree is built: walking it and
        // ArgumentParser's parse (reflection, dynamic casts) were most of its start-up, against
        // curl's. The text is ArgumentParser's (the configuration's version and a newline).
        if arguments == ["--version"] {
            print(IPDirectVersion.string)
            Glibc.exit(0)
        }
        let typed = CommandPath.walk(arguments)
        if let unknown = typed.unknownSubcommand {
            ErrorVoice.say(unknown)
            ErrorVoice.say("see '\(typed.names.joined(separator: " ")) --help' for the commands")
            Glibc.exit(ExitStatus.usage)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as UsageError {
            if let message = error.message { ErrorVoice.say(message) }
            Glibc.exit(ExitStatus.usage)
        } catch let error as CommandFailure {
            ErrorVoice.say(error.sentence)
            Glibc.exit(ExitStatus.failed)
        } catch let error as ExitCode {
            Glibc.exit(error.rawValue)
        } catch {
            switch exitCode(for: error) {
            case .success:
                // --help and --version: ArgumentParser's text, and a command's examples after its help.
                print(fullMessage(for: error))
                if typed.asksForHelp, let examples = typed.command.examplesBlock { print(examples) }
                Glibc.exit(0)
            case .validationFailure:
                ErrorVoice.say(message(for: error))
                ErrorVoice.say("see '\(typed.names.joined(separator: " ")) --help'")
                Glibc.exit(ExitStatus.usage)
            default:
                ErrorVoice.say(SystemFailure.sentence(for: error))
                Glibc.exit(ExitStatus.failed)
            }
        }
    }
}

/// Bad usage or bad input found while a command runs: `ExitStatus.usage`, the sentence on stderr
/// (`ipdirect: cannot read --input urls.txt: it does not exist`).
///
/// Problems found while parsing (`validate()`) are `ValidationError`s instead, which end the same way.
struct UsageError: Error {
    /// The sentence to print; nil when the problems were already reported one by one.
    var message: String?

    init(_ message: String) { self.message = message }

    /// Exit 2 for problems already printed (each bad URL of a batch, say).
    static let alreadyReported = UsageError(nil)

    private init(_ message: String?) { self.message = message }
}

/// What was asked for could not be done (a file not written, a port in use):
/// `ExitStatus.failed`, the sentence on stderr.
struct CommandFailure: Error {
    /// What happened and what to do, as one sentence.
    var sentence: String

    init(_ sentence: String) { self.sentence = sentence }
}

/// The exit statuses scripts rely on, for every command: written down once, in `table`, which
/// `ipdirect --help`, the man page and the README's "Exit codes" show.
enum ExitStatus {
    /// What was asked for did not work: a URL with no working direct scenario, a name with no
    /// address, a cache miss, a file that could not be written.
    static let failed: Int32 = 1
    /// Bad usage or bad input: an unknown option or command, an unparsable URL, an unreadable
    /// input file, a file that exists where `--force` was not given, an address to listen on
    /// that is taken.
    static let usage: Int32 = 2
    /// `ipdirect doctor`: some check fails (`DoctorReport.exitCode`; a warning is 1).
    static let doctorFailed: Int32 = 3

    /// Stopped by `signal`: what a shell reports for it, 128 + its number (130 for SIGINT,
    /// 143 for SIGTERM).
    static func stopped(by signal: Int32) -> Int32 { 128 + signal }

    /// Every status with what it means, in the order the help shows them.
    static let table: [(status: String, meaning: String)] = [
        ("0", "done: every URL has a working direct technique, every name got addresses"),
        (
            "\(failed)",
            "it did not work: a URL with no working direct technique, a name with no address, a cache miss, "
                + "a file that cannot be written (a full disk)"
        ),
        (
            "\(usage)",
            "bad usage or input: an unknown command or option, an unparsable URL, an unreadable input file, "
                + "an existing file without --force, a port to listen on that is taken"
        ),
        (
            "\(doctorFailed)",
            "ipdirect doctor and audit only: some check or trap fails, or a --host has no working technique "
                + "(1 there: some check or trap warns)"
        ),
        (
            "\(stopped(by: SIGINT))",
            "interrupted (Ctrl-C); \(stopped(by: SIGTERM)) for SIGTERM: 128 + the signal's number"
        ),
    ]
}

/// The one voice every error speaks in: `ipdirect: <sentence>` on standard error.
enum ErrorVoice {
    /// Writes `sentence` to stderr after `ipdirect: `, escaped: it may quote a server or a file.
    static func say(_ sentence: String) {
        StandardStream.error.write("ipdirect: \(TerminalText.escapedLines(sentence))\n")
    }
}

/// What an error no command put into words says: an errno in words (`SystemReason`), else the
/// error's own description (a lab that could not start names its port and why).
enum SystemFailure {
    static func sentence(for error: any Error) -> String {
        if let posix = error as? POSIXError { return SystemReason.words(posix.code.rawValue) }
        return String(describing: error)
    }
}

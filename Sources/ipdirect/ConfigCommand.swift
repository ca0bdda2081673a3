// `ipdirect config init|path|show`: write the commented default file, say where it lives,
// and show the configuration in force after every source is merged, secret redacted.
import ArgumentParser
import ConfigurationSources
import FoundationEssentials
import NameResolution
import TerminalText

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Write, locate or show the configuration file.",
        subcommands: [Init.self, Path.self, Show.self])

    struct Init: ParsableCommand, CommandExamples {
        static let configuration = CommandConfiguration(
            abstract: "Write the configuration file with every setting and a comment for each.")

        static let examples: [(command: String, shows: String)] = [
            ("ipdirect config init", "Ask for the provider, account, endpoint and secret; write the commented file."),
            ("ipdirect config init --config ./ipdirect.toml --force", "Write it here, over an existing one."),
        ]

        @Flag(help: "Overwrite an existing file.")
        var force = false

        @Option(help: ArgumentHelp("Write here instead of the default path.", valueName: "FILE"))
        var config: String?

        @Flag(help: "Write the commented defaults without asking, even on a terminal.")
        var defaults = false

        func run() throws {
            let path = config ?? ConfigurationPaths.configFile()
            var contents = ConfigurationLoader.defaultFile
            // On a terminal it asks for the settings a user's own account needs, before writing.
            if ConfigAnswers.canAsk && !defaults {
                if FileManager.default.fileExists(atPath: path), !force {
                    throw UsageError(
                        "\(path) already exists: add --force to overwrite it, or --config FILE to write elsewhere")
                }
                guard let answers = ConfigAnswers.ask() else {
                    throw CommandFailure("config init stopped before its questions were answered: nothing was written")
                }
                contents = answers.applied(to: contents)
            }
            do {
                try ConfigurationLoader.writeDefault(to: path, force: force, contents: contents)
            } catch .exists {
                // Asking to overwrite without --force is a usage problem, as in every command.
                throw UsageError(
                    "\(path) already exists: add --force to overwrite it, or --config FILE to write elsewhere")
            } catch {
                throw CommandFailure(error.description)
            }
            print("wrote \(path)")
        }
    }

    struct Path: ParsableCommand, CommandExamples {
        static let configuration = CommandConfiguration(abstract: "Print where the configuration file is read from.")

        static let examples: [(command: String, shows: String)] = [
            ("ipdirect config path", "Where the file is, and whether it exists."),
            ("XDG_CONFIG_HOME=/tmp/x ipdirect config path", "Where it would be for another XDG_CONFIG_HOME."),
        ]

        func run() {
            let path = ConfigurationPaths.configFile()
            print(
                path
                    + (FileManager.default.fileExists(atPath: path)
                        ? "" : "  (does not exist: run 'ipdirect config init')"))
        }
    }

    struct Show: ParsableCommand, CommandExamples {
        static let configuration = CommandConfiguration(
            abstract: "Show the configuration in force (command line > environment > file > defaults), secret redacted."
        )

        static let examples: [(command: String, shows: String)] = [
            ("ipdirect config show", "The settings in force, every source merged, the secret redacted."),
            ("ipdirect config show --preset alidns", "What the settings would be with that public service."),
        ]

        @OptionGroup(title: "Provider options")
        var providerOptions: ProviderOptions

        func run() throws {
            let path = providerOptions.config ?? ConfigurationPaths.configFile()
            let loaded: (configuration: IPDirectConfiguration, warnings: [String])
            do {
                loaded = try ConfigurationLoader.load(commandLine: providerOptions.commandLineLayer, file: path)
            } catch {
                throw UsageError("\(error)")
            }
            for warning in loaded.warnings { ResolutionOutput.warn("warning: \(warning)") }
            print("# file: \(path)" + (FileManager.default.fileExists(atPath: path) ? "" : " (absent: defaults apply)"))
            let lines = loaded.configuration.redactedLines
            let width = lines.map(\.key.count).max() ?? 0
            // The file's text (export_dir, endpoint, sdns...) may hold escapes TOML decoded into
            // control bytes: shown as escapes, as any outside text on a terminal.
            for (key, value) in lines {
                print(key + String(repeating: " ", count: width - key.count) + " = " + TerminalText.escaped(value))
            }
        }
    }
}

// `ipdirect config init|path|show`: write the commented default file, say where it lives,
// and show the configuration in force after every source is merged, secret redacted.
import ArgumentParser
import ConfigurationSources
import Foundation
import NameResolution

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Write, locate or show the configuration file.",
        subcommands: [Init.self, Path.self, Show.self])

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the configuration file with every setting and a comment for each.")

        @Flag(help: "Overwrite an existing file.")
        var force = false

        @Option(help: ArgumentHelp("Write here instead of the default path.", valueName: "FILE"))
        var config: String?

        func run() throws {
            let path = config ?? ConfigurationPaths.configFile()
            do {
                try ConfigurationLoader.writeDefault(to: path, force: force)
            } catch {
                ResolutionOutput.warn("error: \(error)")
                throw ExitCode(ExitStatus.failed)
            }
            print("wrote \(path)")
        }
    }

    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print where the configuration file is read from.")

        func run() {
            let path = ConfigurationPaths.configFile()
            print(
                path
                    + (FileManager.default.fileExists(atPath: path)
                        ? "" : "  (does not exist: run 'ipdirect config init')"))
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the configuration in force (command line > environment > file > defaults), secret redacted."
        )

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
            for (key, value) in lines {
                print(key + String(repeating: " ", count: width - key.count) + " = " + value)
            }
        }
    }
}

// `ipdirect config`: Write, locate or show the configuration file.
import ArgumentParser

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Write, locate or show the configuration file.")

    func run() async throws {
        throw ValidationError("'ipdirect config' is not built yet")
    }
}

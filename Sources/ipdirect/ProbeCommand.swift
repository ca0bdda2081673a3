// `ipdirect probe`: Request URLs each IP-direct way and say which works.
import ArgumentParser

struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "Request URLs each IP-direct way and say which works.")

    func run() async throws {
        throw ValidationError("'ipdirect probe' is not built yet")
    }
}

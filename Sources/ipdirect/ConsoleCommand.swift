// `ipdirect console`: The interactive console (the default).
import ArgumentParser

struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console", abstract: "The interactive console (the default).")

    func run() async throws {
        throw ValidationError("'ipdirect console' is not built yet")
    }
}

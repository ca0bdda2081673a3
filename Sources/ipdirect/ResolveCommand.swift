// `ipdirect resolve`: Resolve names through system DNS and HTTPDNS, side by side.
import ArgumentParser

struct ResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve", abstract: "Resolve names through system DNS and HTTPDNS, side by side.")

    func run() async throws {
        throw ValidationError("'ipdirect resolve' is not built yet")
    }
}

// `ipdirect cache`: Show, clear or locate the persistent resolver cache.
import ArgumentParser

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache", abstract: "Show, clear or locate the persistent resolver cache.")

    func run() async throws {
        throw ValidationError("'ipdirect cache' is not built yet")
    }
}

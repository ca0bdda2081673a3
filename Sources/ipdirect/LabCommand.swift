// `ipdirect lab`: runs the embedded lab alone and prints its endpoints as one JSON line.
import ArgumentParser

struct LabCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab", abstract: "Run the embedded lab alone; prints its endpoints.")

    func run() async throws {
        throw ValidationError("the lab is not built yet")
    }
}

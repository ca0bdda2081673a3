// Placeholder: the console benchmark is written with its module.
enum ConsoleBenchmark {
    static func run() async throws { print("not written yet") }
}

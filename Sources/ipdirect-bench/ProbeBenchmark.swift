// Placeholder: the probe benchmark is written with its module.
enum ProbeBenchmark {
    static func run() async throws { print("not written yet") }
}

// Placeholder: the cache benchmark is written with its module.
enum CacheBenchmark {
    static func run() async throws { print("not written yet") }
}

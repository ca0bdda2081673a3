// A scoped lab: started, handed to a body, and always shut down, whatever the body does.
// Tests, benchmarks and commands share this instead of each writing the same do/catch.

/// Runs `body` with a freshly started lab, shutting it down afterwards, also when `body` throws.
///
/// - Parameters:
///   - options: ports, fault and state directory; free ports by default.
///   - body: the work to do while the lab runs.
/// - Returns: what `body` returned.
/// - Throws: what `Lab.start`, `body` or `Lab.shutdown` threw (the body's error wins).
public func withLab<T>(
    _ options: LabOptions = LabOptions(), isolation: isolated (any Actor)? = #isolation,
    _ body: (Lab) async throws -> T
) async throws -> T {
    let lab = try await Lab.start(options)
    do {
        let result = try await body(lab)
        try await lab.shutdown()
        return result
    } catch {
        try? await lab.shutdown()
        throw error
    }
}

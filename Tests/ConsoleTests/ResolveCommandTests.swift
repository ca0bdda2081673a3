// `ipdirect resolve` from outside: it asks afresh and shows what the cache held; `--cached`
// is the SDK's non-blocking read (a miss on a cold cache exits 1).
import Foundation
import Testing

@Suite struct ResolveCommandTests {
    /// Runs the real binary; returns the exit status and stdout.
    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tmux.binary)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = Pipe()
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("resolve asks the service and shows the cache column; --cached on a cold cache is a miss")
    func freshAndCached() throws {
        let fresh = try run(["resolve", "--lab", "--type", "v4", "sni-a.lab.test"])
        #expect(fresh.status == 0, "\(fresh.output)")
        #expect(fresh.output.contains("CACHE HELD"))
        #expect(fresh.output.contains("(nothing)"))
        #expect(fresh.output.contains("httpdns"))

        let cached = try run(["resolve", "--lab", "--cached", "--type", "v4", "sni-a.lab.test"])
        #expect(cached.status == 1)
        #expect(cached.output.contains("cache read, no request"))
        #expect(cached.output.contains("miss"))
    }
}

// `ipdirect lab` as a script meets it: one JSON line of endpoints on stdout, a working lab
// behind it, and a clean exit on SIGTERM that frees its ports.
import CurlTransport
import Foundation
import Lab
import Testing

/// The `ipdirect` binary built beside the test bundle, when the build made one.
private let ipdirectBinary: String? = {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("ipdirect").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory.deleteLastPathComponent()
    }
    return nil
}()

@Suite("ipdirect lab")
struct LabCommandTests {
    @Test(
        "prints its endpoints as one JSON line, serves, and exits cleanly on SIGTERM",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary is not built"))
    func endpointsServeAndStop() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ipdirectBinary!)
        process.arguments = ["lab", "--fault", "error"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()

        let line = try await Task.detached { () throws -> Data in
            var data = Data()
            while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8)
            {
                data += byte
            }
            return data
        }.value
        let endpoints = try JSONDecoder().decode(LabEndpoints.self, from: line)
        #expect(endpoints.account.isEmpty == false)
        #expect(endpoints.secret.isEmpty == false)
        #expect(endpoints.hosts["sni-a.lab.test"]?.hasPrefix("https://sni-a.lab.test:") == true)
        #expect(FileManager.default.fileExists(atPath: endpoints.ca))

        let faulty = try await fetch(HTTPRequest(url: endpoints.httpdns + "/d?dn=single.lab.test"))
        #expect(faulty.status == 500, "--fault error is in force")
        let port = endpoints.port(of: "single.lab.test") ?? 0
        let origin = try await fetch(
            HTTPRequest(
                url: "https://single.lab.test:\(port)/", caFile: endpoints.ca,
                resolve: ["single.lab.test:\(port):127.0.0.1"]))
        #expect(origin.text.hasPrefix("origin=single ;"))

        // Poll rather than waitUntilExit, which spins on Linux; never wait more than 10 s.
        process.terminate()
        for _ in 0..<200 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("ipdirect lab did not exit on SIGTERM")
            return
        }
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        let refused = await failure(of: HTTPRequest(url: endpoints.httpdns + "/d?dn=single.lab.test"))
        #expect(refused?.curlKind == .connect)
    }
}

// `ipdirect agent --metrics-listen` on a port another program holds: the error is said in words
// with what to do, in the one voice, never as NIO's call and errno.
import Foundation
import TestSupport
import Testing

@Suite struct AgentBusyPortTests {
    @Test("a port in use for /metrics is said in words, with what to do")
    func busyPort() async throws {
        let held = RefusingPort()
        defer { held.close() }
        let binary = try #require(ipdirectBinary)
        // An address literal over plain HTTP as the target: nothing is resolved.
        let result = try await ChildProcess.run(
            binary,
            ["agent", "--provider", "system", "--metrics-listen", "127.0.0.1:\(held.port)", "http://127.0.0.1:9/"],
            seconds: 60)
        #expect(result.status == 2, "\(result.errors)")
        #expect(
            result.errors.contains(
                "ipdirect: cannot listen on 127.0.0.1:\(held.port) for --metrics-listen: the port is already in use "
                    + "by another program: stop that program, or choose another port"),
            "\(result.errors)")
        #expect(!result.errors.contains("errno"), "\(result.errors)")
        #expect(!result.errors.contains("bind("), "\(result.errors)")
    }
}

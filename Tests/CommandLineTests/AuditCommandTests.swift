// `ipdirect audit` from the command line: where it listens (loopback unless told, a warning when
// not), a wildcard refused, and the report at the end of --for with the doctor's exit statuses.
import Foundation
import TestSupport
import Testing

@Suite struct AuditCommandTests {
    @Test("--listen on an address beyond loopback warns and serves there; the setup and report lines follow")
    func listenBeyondLoopback() async throws {
        // A network namespace of its own, with a documentation address on its loopback device.
        let run = try await ChildProcess.run(
            "/usr/bin/unshare",
            [
                "-n", "sh", "-c",
                "ip link set lo up; ip addr add 192.0.2.1/32 dev lo; \(BuiltBinary.ipdirectPath) audit --listen 192.0.2.1 --for 1 --format json",
            ], seconds: 60)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.contains("warning: the audit listens on 192.0.2.1, not loopback"), "\(run.errors)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(run.output)")
        let setup = try #require(
            try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any])
        let httpdns = try #require(setup["httpdns"] as? [String: String])
        #expect(httpdns["ip"]?.hasPrefix("http://192.0.2.1:") == true, "\(httpdns)")
        #expect(lines.last?.contains(#""status":"not-exercised""#) == true)
    }

    @Test("loopback by default, without a warning; a wildcard --listen is bad usage (2)")
    func loopbackAndWildcard() async throws {
        let quiet = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["audit", "--for", "1", "--format", "json"])
        #expect(quiet.status == 0, "\(quiet.errors)")
        #expect(!quiet.errors.contains("warning"), "\(quiet.errors)")
        #expect(quiet.output.contains("http://127.0.0.1:"))
        let wildcard = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["audit", "--listen", "0.0.0.0"])
        #expect(wildcard.status == 2)
        #expect(wildcard.errors.hasPrefix("ipdirect: --listen takes an address the app reaches"), "\(wildcard.errors)")
    }
}

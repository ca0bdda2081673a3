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

    @Test("--listen beyond loopback serves the audit's names alone: no lab name, no fault switch at that address")
    func listenBeyondLoopbackServesOnlyTheAuditsNames() async throws {
        // In a namespace of its own: while the audit runs, every TCP port listening on 192.0.2.1
        // is asked for the fault switch and, as HTTPDNS's /ip, for a lab name and for a trap name.
        let script = """
            ip link set lo up; ip addr add 192.0.2.1/32 dev lo
            d=$(mktemp -d)
            \(BuiltBinary.ipdirectPath) audit --listen 192.0.2.1 --for 120 --format json --setup-file $d/setup.json > $d/out 2>/dev/null &
            audit=$!
            i=0; while [ ! -s $d/setup.json ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done
            trap=$(grep -o '"url":"https://[^:]*' $d/setup.json | head -1 | cut -d/ -f3)
            echo "trap $trap"
            for port in $(ss -Htln | awk '{print $4}' | grep '^192\\.0\\.2\\.1:' | cut -d: -f2); do
              echo "port $port fault $(curl -s -m 5 -w ' %{http_code}' http://192.0.2.1:$port/fault | tr '\\n' ' ')"
              echo "port $port lab $(curl -s -m 5 -w ' %{http_code}' 'http://192.0.2.1:'$port'/ip?host=single.lab.test' | tr '\\n' ' ')"
              echo "port $port trap $(curl -s -m 5 -w ' %{http_code}' 'http://192.0.2.1:'$port'/ip?host='$trap | tr '\\n' ' ')"
            done
            kill -INT $audit; wait $audit; echo "audit exit $?"
            """
        let run = try await ChildProcess.run("/usr/bin/unshare", ["-n", "sh", "-c", script], seconds: 120)
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("audit exit ") }, "\(run.output) \(run.errors)")
        #expect(lines.first?.hasSuffix(".audit.lab.test") == true, "\(run.output)")
        // The HTTPDNS service is there: it answers the trap's name with the listen address.
        #expect(lines.contains { $0.contains(" trap 192.0.2.1  200") }, "\(run.output)")
        // Nothing there answers the fault switch or a lab name of its own.
        #expect(!lines.contains { $0.contains(" fault ") && $0.contains(#""fault""#) }, "\(run.output)")
        #expect(!lines.contains { $0.contains(" lab ") && $0.hasSuffix(" 200") }, "\(run.output)")
        #expect(lines.contains { $0.contains(" lab no addresses for single.lab.test  404") }, "\(run.output)")
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

// The ipdirect binary's command line: bad usage exits 2 with a sentence on stderr in every
// command, and the closed sets (--format, --type, --scenario, --method) name what they accept.
import Foundation
import NameResolution
import TestSupport
import Testing

@Suite struct CommandLineTests {
    /// Runs the real binary with `arguments`; returns the exit status and stderr.
    private func run(_ arguments: [String]) async throws -> (status: Int32, errors: String) {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, arguments)
        return (result.status, result.errors)
    }

    @Test(
        "bad usage exits 2 and says what is wrong",
        arguments: [
            (["resolve"], "at least one host name"),
            (["resolve", "--format", "xml", "a.test"], "'table' and 'json'"),
            (["resolve", "--type", "v5", "a.test"], "'auto', 'v4', 'v6' or 'both'"),
            (["probe", "--method", "PUT", "a.test"], "'GET', 'HEAD' or 'POST'"),
            (["probe", "--scenario", "nope", "a.test"], "'direct-sni'"),
            (["probe", "--format", "csv", "a.test"], "'jsonl'"),
            (
                ["probe", "--input", "/nonexistent/urls.txt"],
                "cannot read --input /nonexistent/urls.txt: it does not exist"
            ),
            (["probe", "--input", "/"], "cannot read --input /: it is a directory"),
            (["agent", "--input", "-"], "--input - cannot be reloaded"),
            (["probe", "--method", "head", "--data", "x", "a.test"], "ipdirect: --data goes with POST"),
            (["probe", "--probe-timeout", "inf", "a.test"], "--probe-timeout must be"),
            // README's spelling parses: the complaint is the next problem, not an unknown option.
            (["probe", "--all-ips", "--probe-timeout", "inf", "a.test"], "--probe-timeout must be"),
            (["cache", "list", "--format", "xml"], "'table' and 'json'"),
            (["lab", "--port-base", "0"], "--port-base must be"),
            (["lab", "--listen", "0.0.0.0"], "not the wildcard '0.0.0.0'"),
            (["lab", "--service-address", "api.example.com"], "take an IPv4 or IPv6 address, not 'api.example.com'"),
            // Past a day, and far past it where the nanoseconds to sleep overflow (it trapped).
            (["probe", "--watch", "1e300", "--count", "2", "http://127.0.0.1:9/"], "at most 86400"),
            (["agent", "--rotate", "99999999999999999999G", "http://127.0.0.1:9/"], "larger than any file"),
            // An unbracketed IPv6 literal with a port is itself an IPv6 literal: refused, form given.
            (["agent", "--metrics-listen", "::1:9464", "a.test"], "[::1]:9464"),
        ])
    func badUsage(arguments: [String], says expected: String) async throws {
        let (status, errors) = try await run(arguments)
        #expect(status == 2, "\(arguments): \(errors)")
        #expect(errors.contains(expected), "\(arguments): \(errors)")
    }

    @Test("--version prints the version the HAR creator and the agent's build label carry")
    func version() async throws {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["--version"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == IPDirectVersion.string + "\n")
    }
}

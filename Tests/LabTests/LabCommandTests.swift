// `ipdirect lab` as a script meets it: one JSON line of endpoints on stdout, a working lab
// behind it, and a clean exit on SIGTERM that frees its ports.
import CurlTransport
import Foundation
import Lab
import TestSupport
import Testing

/// The `ipdirect` binary built beside the test bundle, when the build made one.
private let ipdirectBinary = BuiltBinary.ipdirect

@Suite("ipdirect lab")
struct LabCommandTests {
    @Test(
        "prints its endpoints as one JSON line, serves, and exits cleanly on SIGTERM",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary is not built"))
    func endpointsServeAndStop() async throws {
        let child = try ChildProcess(ipdirectBinary!, ["lab", "--fault", "error"], errors: .discarded)
        let line = try #require(try await child.nextLine(within: 60), "ipdirect lab printed no endpoints")
        let endpoints = try JSONDecoder().decode(LabEndpoints.self, from: Data(line.utf8))
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

        // The lab's own listeners, by socket: once it exits none may still listen (a port number
        // would not do: another test's lab may bind the freed port meanwhile).
        let sockets = ListeningSockets.held(by: child.pid).intersection(ListeningSockets.listening())
        let ports = Set(endpoints.hosts.keys.compactMap { endpoints.port(of: $0) })
        #expect(sockets.count >= ports.count, "the lab's listeners are found by socket")
        child.signal(SIGTERM)
        let status = try await child.exitStatus(within: 10)
        try #require(status != nil, "ipdirect lab did not exit on SIGTERM")
        #expect(status == 0)
        #expect(sockets.isDisjoint(with: ListeningSockets.listening()), "no listener outlives the lab")
    }

    @Test(
        "--fault takes a list: the HTTPDNS mode as before, and nat64 makes its DNS server answer ipv4only.arpa with DNS64",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary is not built"))
    func faultList() async throws {
        let child = try ChildProcess(ipdirectBinary!, ["lab", "--fault", "error,nat64"], errors: .discarded)
        defer { child.signal(SIGTERM) }
        let line = try #require(try await child.nextLine(within: 60), "ipdirect lab printed no endpoints")
        let endpoints = try JSONDecoder().decode(LabEndpoints.self, from: Data(line.utf8))
        let faulty = try await fetch(HTTPRequest(url: endpoints.httpdns + "/d?dn=single.lab.test"))
        #expect(faulty.status == 500, "--fault error is in force beside nat64")
        let server = endpoints.dns.split(separator: ":")
        let dig = try await ChildProcess.shell(
            "dig +short +time=2 +tries=1 @\(server[0]) -p \(server[1]) AAAA \(LabNAT64.discoveryName)")
        #expect(
            dig.output.split(separator: "\n").sorted() == ["64:ff9b::c000:aa", "64:ff9b::c000:ab"], "\(dig.output)")
    }
}

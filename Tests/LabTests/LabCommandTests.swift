// `ipdirect lab` as a script meets it (one JSON line of endpoints, a working lab behind it, a clean
// exit on SIGTERM that frees its ports) and as a person does: a summary whose command lines run.
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
        let status = try await child.exitStatus(within: 60)
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

    @Test(
        "on a terminal (--format text) it prints a summary, and every command line in it runs against the lab",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary is not built"))
    func summaryCommandLinesRun() async throws {
        let child = try ChildProcess(ipdirectBinary!, ["lab", "--format", "text"], errors: .discarded)
        defer { child.signal(SIGTERM) }
        var lines: [String] = []
        // The summary comes at once; once its last section has begun, a quiet second means it is whole.
        while let line = try await child.nextLine(within: lines.contains("Try from another shell:") ? 2 : 60) {
            lines.append(line)
        }
        let text = lines.joined(separator: "\n")
        #expect(lines.first?.hasPrefix("The lab is running") == true, "\(text)")
        #expect(!text.contains("{\""), "no JSON on a terminal: \(text)")
        for part in ["HTTPDNS (http)", "HTTPDNS (https)", "DNS server", "CA file", "origins"] {
            #expect(lines.contains { $0.hasPrefix("  \(part) ") }, "\(part) missing: \(text)")
        }
        #expect(lines.contains { $0.contains("https://sni-a.lab.test:") && $0.contains("chosen by SNI") }, "\(text)")

        let commands = lines.drop { $0 != "Try from another shell:" }.dropFirst()
            .filter { !$0.hasPrefix("  #") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for kind in ["ipdirect probe ", "ipdirect resolve ", "ipdirect doctor ", "curl "] {
            #expect(commands.contains { $0.hasPrefix(kind) }, "no \(kind)line: \(text)")
        }
        // As a person pastes them into another shell, with this build's ipdirect on the PATH.
        let directory = (ipdirectBinary! as NSString).deletingLastPathComponent
        let path = directory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        for command in commands {
            let result = try await ChildProcess.shell(command, environment: ["PATH": path])
            let said = "\(command): exit \(result.status)\n\(result.output)\n\(result.errors)"
            #expect(result.status != 2 && result.status < 128, "bad usage or a signal: \(said)")
            // The doctor judges the machine too (exit 1 or 3 is a finding); the others must work.
            if !command.hasPrefix("ipdirect doctor ") { #expect(result.status == 0, "\(said)") }
        }
    }
}

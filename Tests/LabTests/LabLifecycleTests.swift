// The lab as a whole: the HTTPDNS fault switch (API and control endpoint), fixed and free
// ports, two labs side by side, and a shutdown that frees every port.
import CurlTransport
import Foundation
import Lab
import TestSupport
import Testing

@Suite("Lab lifecycle and faults")
struct LabLifecycleTests {
    private func query(_ lab: Lab, timeout: Double = 5) -> HTTPRequest {
        HTTPRequest(url: lab.endpoints.httpdns + "/\(lab.endpoints.account)/d?host=sni-a.lab.test", timeout: timeout)
    }

    @Test("error answers 500 and malformed answers a body that is not JSON")
    func errorAndMalformed() async throws {
        try await withLab { lab in
            try await lab.setFault(.error)
            #expect(lab.fault == .error)
            #expect(try await fetch(query(lab)).status == 500)

            try await lab.setFault(.malformed)
            let garbled = try await fetch(query(lab))
            #expect(garbled.status == 200)
            #expect(!garbled.body.isEmpty)
            #expect(garbled.jsonObject == nil)
            let tencent = try await fetch(HTTPRequest(url: lab.endpoints.httpdns + "/d?dn=sni-a.lab.test"))
            #expect(!tencent.text.contains("127.0.0.1"))

            try await lab.setFault(.none)
            #expect(try await fetch(query(lab)).jsonObject?["ips"] as? [String] == ["127.0.0.1"])
            #expect(lab.httpdnsQueries().map(\.fault) == [.error, .malformed, .malformed, .none])
        }
    }

    @Test("slow answers after a client's short timeout")
    func slow() async throws {
        try await withLab(LabOptions(fault: .slow)) { lab in
            let error = try #require(await failure(of: query(lab, timeout: 0.5)) as? CurlError)
            #expect(error.kind == .timeout)
        }
    }

    @Test("down refuses connections but keeps its ports, and switching back listens on them again")
    func downAndBack() async throws {
        try await withLab { lab in
            #expect(try await fetch(query(lab)).status == 200)
            try await lab.setFault(.down)
            let refused = try #require(await failure(of: query(lab)) as? CurlError)
            #expect(refused.kind == .connect)
            let refusedTLS = try #require(
                await failure(of: HTTPRequest(url: lab.endpoints.httpdnsTLS + "/d?dn=x", caFile: lab.endpoints.ca))
                    as? CurlError)
            #expect(refusedTLS.kind == .connect)

            // The ports are still the lab's: another lab asking for them is told so.
            let port = try #require(URLComponents(string: lab.endpoints.httpdns)?.port)
            let taken = await #expect(throws: LabError.self) {
                try await Lab.start(LabOptions(portBase: port)).shutdown()
            }
            #expect(
                taken?.description.contains("port \(port): it is already in use") == true,
                "\(String(describing: taken))")

            try await lab.setFault(.none)
            #expect(try await fetch(query(lab)).status == 200)
        }
    }

    @Test("a lab can start down")
    func startsDown() async throws {
        try await withLab(LabOptions(fault: .down)) { lab in
            #expect((await failure(of: query(lab)) as? CurlError)?.kind == .connect)
            try await lab.setFault(.none)
            #expect(try await fetch(query(lab)).status == 200)
        }
    }

    @Test("the control endpoint reads and switches the fault")
    func controlEndpoint() async throws {
        try await withLab { lab in
            let control = lab.endpoints.control
            let initial = try await fetch(HTTPRequest(url: control + "/fault"))
            #expect(initial.jsonObject?["fault"] as? String == "none")

            let switched = try await fetch(HTTPRequest(url: control + "/fault?mode=error", method: "POST"))
            #expect(switched.status == 200)
            #expect(lab.fault == .error)
            #expect(try await fetch(query(lab)).status == 500)

            let down = try await fetch(HTTPRequest(url: control + "/fault?mode=down", method: "POST"))
            #expect(down.status == 200)
            #expect((await failure(of: query(lab)) as? CurlError)?.kind == .connect)
            _ = try await fetch(HTTPRequest(url: control + "/fault?mode=none", method: "POST"))
            #expect(try await fetch(query(lab)).status == 200)

            let bad = try await fetch(HTTPRequest(url: control + "/fault?mode=sideways", method: "POST"))
            #expect(bad.status == 400)
        }
    }

    @Test("two labs on free ports run side by side")
    func sideBySide() async throws {
        try await withLab { first in
            try await withLab { second in
                #expect(first.endpoints.httpdns != second.endpoints.httpdns)
                #expect(first.endpoints.ca != second.endpoints.ca)
                let fromFirst = try await fetch(first.pinned("sni-a.lab.test"))
                let fromSecond = try await fetch(second.pinned("sni-a.lab.test"))
                #expect(fromFirst.status == 200)
                #expect(fromSecond.status == 200)
                // Each lab's CA vouches only for its own servers.
                var crossed = second.pinned("sni-a.lab.test")
                crossed.caFile = first.endpoints.ca
                #expect(await failure(of: crossed)?.curlKind == .certificate)
            }
        }
    }

    @Test("a fixed port base lays the ports out in order, frees them at shutdown, and refuses a second lab")
    func fixedPortsAndShutdown() async throws {
        let base = try await freePortBase()
        let lab = try await Lab.start(LabOptions(portBase: base))
        #expect(lab.endpoints.httpdns == "http://127.0.0.1:\(base)")
        #expect(lab.endpoints.httpdnsTLS == "https://127.0.0.1:\(base + 1)")
        #expect(lab.endpoints.control == "http://127.0.0.1:\(base + 2)")
        #expect(lab.endpoints.hosts["plain.lab.test"] == "http://plain.lab.test:\(base + 3)/")
        let ports = lab.endpoints.hosts.values.compactMap { URLComponents(string: $0)?.port }
        // After the 16 servers: the hijacked site pair, then the DNS server (UDP and TCP).
        #expect(lab.endpoints.hosts["hijacked.lab.test"] == "https://hijacked.lab.test:\(base + 16)/")
        #expect(lab.endpoints.dns == "127.0.0.1:\(base + 17)")
        #expect(ports.allSatisfy { (base..<(base + 18)).contains($0) })

        await #expect(throws: LabError.self) { try await Lab.start(LabOptions(portBase: base)).shutdown() }

        try await lab.shutdown()
        try await lab.shutdown()  // a second call does nothing
        #expect((await failure(of: query(lab)) as? CurlError)?.kind == .connect)
        #expect(await failure(of: lab.pinned("sni-a.lab.test"))?.curlKind == .connect)
        #expect(!FileManager.default.fileExists(atPath: lab.endpoints.ca))

        let again = try await Lab.start(LabOptions(portBase: base))
        #expect(try await fetch(again.pinned("dual.lab.test", address: "::1")).status == 200)
        try await again.shutdown()
    }

    @Test("ca.pem goes to the given state directory and stays there")
    func stateDirectory() async throws {
        // A folder not made yet, inside the scratch directory: the lab creates it.
        let scratch = try ScratchDirectory("lab")
        defer { scratch.remove() }
        let directory = scratch.file("state")
        try await withLab(LabOptions(stateDirectory: directory)) { lab in
            #expect(lab.endpoints.ca == directory + "/ca.pem")
            let pem = try String(contentsOfFile: lab.endpoints.ca, encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
            #expect(pem.components(separatedBy: "BEGIN CERTIFICATE").count == 2, "only the trusted lab CA")
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/ca.pem"))
    }

    @Test("a state directory that cannot be made is refused in words, with the path and what is wrong")
    func stateDirectoryUnderAFile() async throws {
        let scratch = try ScratchDirectory("lab")
        defer { scratch.remove() }
        let file = scratch.file("plain")
        try "not a folder".write(toFile: file, atomically: true, encoding: .utf8)
        let failure = await #expect(throws: LabError.self) {
            try await Lab.start(LabOptions(stateDirectory: file + "/state")).shutdown()
        }
        #expect(
            failure?.description
                == "cannot create the lab state directory \(file)/state: a part of the path is not a directory")
    }
}

/// A port base whose next 15 ports were free a moment ago: a lab bound on free ports tells us
/// nothing about neighbours, so probe a random range by starting a lab there.
///
/// Fixed ports come from 20000-31999, below Linux's ephemeral range (32768 up), so labs on free
/// ports and client sockets never race for them; this is the only suite that uses fixed ports.
func freePortBase() async throws -> Int {
    for _ in 0..<20 {
        let base = Int.random(in: 20_000..<32_000)
        if let lab = try? await Lab.start(LabOptions(portBase: base)) {
            try await lab.shutdown()
            return base
        }
    }
    throw NoFreePorts()
}

struct NoFreePorts: Error, CustomStringConvertible {
    var description: String { "no free range of 18 ports found" }
}

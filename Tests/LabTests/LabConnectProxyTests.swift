// The lab's recording CONNECT proxy (the audit's proxy trap): a client sent through it reaches the
// origin by the name it asked for, the ledger records the CONNECT, and it reaches nothing outside.
import Foundation
import Lab
import TestSupport
import Testing

@Suite("Lab recording proxy")
struct LabConnectProxyTests {
    static let name = "proxied.t0.audit.lab.test"

    static var options: LabOptions {
        var options = LabOptions()
        options.extraNames = [LabExtraName(record: LabZoneRecord(name: name, ipv4: ["127.0.0.1"], ipv6: [], ttl: 60))]
        options.recordingProxy = true
        return options
    }

    @Test("curl through the proxy reaches the origin by name; the CONNECT and the tunnel's port are recorded")
    func tunnelsAndRecords() async throws {
        try await withLab(Self.options) { lab in
            let proxy = try #require(lab.endpoints.proxy)
            let url = try #require(lab.endpoints.hosts[Self.name])
            let run = try await ChildProcess.run(
                "/usr/bin/curl",
                ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--proxy", proxy, "--cacert", lab.endpoints.ca, url])
            #expect(run.output == "200", "\(run.errors)")
            let tunnels = lab.proxyTunnels()
            let port = try #require(URLComponents(string: url)?.port)
            #expect(tunnels.map(\.target) == ["\(Self.name):\(port)"])
            #expect(tunnels.first?.status == 200)
            let request = try #require(lab.originRequests().first { $0.origin == Self.name })
            #expect(request.remotePort != nil && request.remotePort == tunnels.first?.fromPort)
            #expect(request.sni == Self.name)
        }
    }

    @Test("a CONNECT to an address outside the lab is refused (403) and recorded; nothing is reached")
    func refusesOutside() async throws {
        try await withLab(Self.options) { lab in
            let proxy = try #require(lab.endpoints.proxy)
            let run = try await ChildProcess.run(
                "/usr/bin/curl", ["-sS", "-o", "/dev/null", "--proxy", proxy, "https://192.0.2.55:443/"])
            #expect(run.status != 0)
            #expect(run.errors.contains("403"), "\(run.errors)")
            #expect(lab.proxyTunnels().map(\.status) == [403])
            #expect(lab.proxyTunnels().first?.fromPort == nil)
        }
    }

    @Test("a CONNECT to a port of this machine that is none of the lab's is refused (403), not tried")
    func refusesOtherPorts() async throws {
        try await withLab(Self.options) { lab in
            let proxy = try #require(lab.endpoints.proxy)
            // Port 9 (discard): nothing of the lab's; a proxy that tried it would answer 502.
            for target in ["https://127.0.0.1:9/", "https://\(Self.name):9/"] {
                let run = try await ChildProcess.run(
                    "/usr/bin/curl", ["-sS", "-o", "/dev/null", "--proxy", proxy, target])
                #expect(run.errors.contains("403"), "\(target): \(run.errors)")
            }
            #expect(lab.proxyTunnels().map(\.status) == [403, 403])
        }
    }
}

// The doctor and the resolver against faults this machine makes itself, in network namespaces of
// their own: an nftables rule that stops UDP 53 on output (EPERM at sendto), and no route at all.

import Foundation
import TestSupport
import Testing

/// A network namespace with only loopback, made by `unshare -n` for one command.
enum LoopbackNamespace {
    /// Why no namespace can be made here (not root, no unshare, no nft), nil when one can.
    static let unavailable: String? = {
        guard BuiltBinary.ipdirect != nil else { return "the ipdirect binary was not built" }
        guard getuid() == 0 else { return "network namespaces need root" }
        let tools = ["/usr/bin/unshare", "/usr/sbin/nft", "/usr/sbin/ip"]
        if let missing = tools.first(where: { !FileManager.default.isExecutableFile(atPath: $0) }) {
            return "\(missing) is not installed"
        }
        return nil
    }()

    /// Runs `ipdirect ARGUMENTS` in a fresh namespace with loopback up, `rules` (nft commands,
    /// one a line) loaded and `shell` lines run; nothing can leave it.
    static func ipdirect(
        _ arguments: [String], rules: [String] = [], shell: [String] = [], seconds: Double = 60
    ) async throws
        -> ChildProcess.Result
    {
        let setup = (["ip link set lo up"] + rules.map { "nft \($0)" } + shell).joined(separator: " && ")
        return try await ChildProcess.run(
            "/usr/bin/unshare",
            ["-n", "/bin/sh", "-c", "\(setup) && exec \"$0\" \"$@\"", BuiltBinary.ipdirect ?? "ipdirect"] + arguments,
            environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": NSTemporaryDirectory()], seconds: seconds)
    }

    /// The system resolver's address (resolv.conf's first nameserver) put on loopback, with UDP 53
    /// dropped on input: queries are lost on the way and glibc waits (5 s a try, twice). Shell lines.
    static func resolverLost() -> [String] {
        let conf = (try? String(contentsOfFile: "/etc/resolv.conf", encoding: .utf8)) ?? ""
        let server =
            conf.split(separator: "\n").first { $0.hasPrefix("nameserver ") }.map {
                String($0.dropFirst("nameserver ".count)).trimmingCharacters(in: .whitespaces)
            } ?? "127.0.0.53"
        let address = server.contains(":") ? "\(server)/128" : "\(server)/32"
        return [
            "(ip addr add \(address) dev lo 2>/dev/null || true)",
            "nft add table inet filter",
            "nft 'add chain inet filter in { type filter hook input priority 0; }'",
            "nft add rule inet filter in udp dport 53 drop",
        ]
    }

    /// nft rules that drop every UDP packet this namespace sends: sendto fails at once with EPERM.
    static let udpDroppedOnOutput = [
        "add table inet filter",
        "'add chain inet filter out { type filter hook output priority 0; }'",
        "add rule inet filter out meta l4proto udp drop",
    ]
}

/// One finding of `doctor --format json`, as much as the tests read.
struct FindingJSON: Decodable {
    var check: String
    var status: String
    var seen: String
    var advice: String?
    var trace: [Line]
    var reproduce: [String]

    struct Line: Decodable {
        var direction: String
        var text: String
    }
}

struct ReportJSON: Decodable {
    var durationMs: Double
    var findings: [FindingJSON]

    func finding(_ check: String) -> FindingJSON? { findings.first { $0.check == check } }
}

extension ChildProcess.Result {
    /// The doctor's JSON report on standard output.
    func report() throws -> ReportJSON { try JSONDecoder().decode(ReportJSON.self, from: Data(output.utf8)) }
}

@Suite(
    "Local faults in network namespaces", .serialized,
    .enabled(if: LoopbackNamespace.unavailable == nil, "\(LoopbackNamespace.unavailable ?? "")"))
struct LocalFaultTests {
    @Test func udp53StoppedByThisMachinesFirewallIsNamedSoNotAsSilenceNorAsARefusal() async throws {
        let result = try await LoopbackNamespace.ipdirect(
            ["doctor", "--lab", "--timeout", "2", "--format", "json"], rules: LoopbackNamespace.udpDroppedOnOutput)
        let report = try result.report()
        let dns = try #require(report.finding("dns-paths"), "\(result.output)\(result.errors)")
        #expect(dns.status == "warn", "\(dns)")
        #expect(dns.seen.hasPrefix("UDP 53 is blocked on this machine"), "\(dns.seen)")
        #expect(dns.seen.contains("EPERM"), "\(dns.seen)")
        #expect(!dns.seen.contains("within"), "no wait was spent: \(dns.seen)")
        #expect(!dns.trace.contains { $0.text.contains("nothing listens") }, "\(dns.trace.map(\.text))")
        #expect(dns.advice?.contains("firewall") == true)
    }

    @Test func aLostSystemResolverIsNamedByTheInterceptionCheckAndTheRunKeepsItsBound() async throws {
        let result = try await LoopbackNamespace.ipdirect(
            ["doctor", "--timeout", "2", "--within", "5", "--format", "json"], shell: LoopbackNamespace.resolverLost())
        let report = try result.report()
        let interception = try #require(report.finding("interception"), "\(result.output)\(result.errors)")
        #expect(interception.status == "skipped", "\(interception)")
        #expect(
            interception.seen.contains("the system resolver did not answer for connectivitycheck.gstatic.com"),
            "\(interception.seen)")
        #expect(!report.findings.contains { $0.seen.hasPrefix("Did not finish") }, "\(report.findings.map(\.seen))")
        #expect(report.durationMs <= 5000, "the run's --within")
    }

    @Test func anHTTPDNSServiceWithNoRouteIsNotCalledARefusal() async throws {
        // Loopback only: the public start address has no route (ENETUNREACH at connect).
        let result = try await LoopbackNamespace.ipdirect(
            ["resolve", "--provider", "alicloud", "--account", "139450", "--timeout", "2", "api.example.com"])
        let said = result.output + result.errors
        #expect(!said.contains("connection refused"), "\(said)")
        #expect(said.contains("ENETUNREACH"), "\(said)")
    }
}

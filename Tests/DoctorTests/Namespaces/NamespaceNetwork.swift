// Network namespaces for one test: a "service" namespace where `ipdirect lab` stands in for the
// HTTPDNS service, a "client" namespace where the doctor runs, and the real programs that make faults.
import CurlTransport
import Doctor
import Foundation
import Lab
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Two network namespaces joined by a veth pair, with the processes started in them; torn down
/// (processes stopped, namespaces deleted, files removed) by `withNamespaces` whatever happens.
///
/// Addresses come from the documentation ranges and live only inside the namespaces: the
/// service has 192.0.2.1 (where the lab listens: start IP, DNS server) and 192.0.2.2 (the first
/// address `/ss` names), the client 192.0.2.100 with its default route through the service;
/// an IPv6-only client has 2001:db8:64::100 instead, the service 2001:db8:64::1 beside its IPv4.
final class NamespaceNetwork: @unchecked Sendable {
    static let listenAddress = "192.0.2.1"
    static let secondAddress = "192.0.2.2"
    static let clientAddress = "192.0.2.100"
    static let serviceV6 = "2001:db8:64::1"
    static let clientV6 = "2001:db8:64::100"

    /// Unique per network, so parallel tests and parallel runs never share a name.
    let tag: String
    var service: String { tag + "s" }
    var client: String { tag + "c" }
    let scratch: ScratchDirectory
    private let lock = NSLock()
    private var children: [ChildProcess] = []
    /// The lab's endpoints once `startLab` has run.
    private(set) var lab: LabEndpoints?

    private init(tag: String, scratch: ScratchDirectory) {
        self.tag = tag
        self.scratch = scratch
    }

    /// The programs the suite needs beside the kernel's namespaces, by name.
    static func has(_ program: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]).contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(program)")
        }
    }

    /// Whether this machine can make namespaces (root and `ip`) and run the lab and doctor.
    static let usable: Bool = getuid() == 0 && has("ip") && BuiltBinary.ipdirect != nil

    /// Makes the two namespaces and their link.
    ///
    /// - Parameters:
    ///   - ipv6Only: the client gets only an IPv6 address and route.
    ///   - resolver: the client's nameserver (its /etc/netns resolv.conf, which `ip netns exec` mounts).
    static func make(ipv6Only: Bool = false, resolver: String = listenAddress) async throws -> NamespaceNetwork {
        let tag = "ipd" + String(UInt32.random(in: 0...0xFF_FFFF), radix: 16)
        let network = NamespaceNetwork(tag: tag, scratch: try ScratchDirectory("netns"))
        let (s, c) = (network.service, network.client)
        var steps = [
            "ip netns add \(s)", "ip netns add \(c)",
            "ip link add \(c)0 type veth peer name \(s)0",
            "ip link set \(s)0 netns \(s)", "ip link set \(c)0 netns \(c)",
            "ip -n \(s) link set lo up", "ip -n \(c) link set lo up",
            "ip -n \(s) addr add \(listenAddress)/24 dev \(s)0", "ip -n \(s) addr add \(secondAddress)/24 dev \(s)0",
            "ip -n \(s) addr add \(serviceV6)/64 dev \(s)0 nodad",
            "ip -n \(s) link set \(s)0 up", "ip -n \(c) link set \(c)0 up",
        ]
        if ipv6Only {
            steps += [
                "ip -n \(c) addr add \(clientV6)/64 dev \(c)0 nodad",
                "ip -n \(c) -6 route add default via \(serviceV6)",
            ]
        } else {
            steps += [
                "ip -n \(c) addr add \(clientAddress)/24 dev \(c)0",
                "ip -n \(c) route add default via \(listenAddress)",
            ]
        }
        steps += ["mkdir -p /etc/netns/\(c)", "echo 'nameserver \(resolver)' > /etc/netns/\(c)/resolv.conf"]
        let made = try await ChildProcess.shell("set -e; " + steps.joined(separator: "; "))
        guard made.status == 0 else {
            await network.tearDown()
            throw NamespaceError("could not make the namespaces: \(made.errors)")
        }
        return network
    }

    /// Runs a program in a namespace to its end.
    func run(
        in namespace: String, _ arguments: [String], environment: [String: String]? = nil, seconds: Double = 30
    ) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            "/usr/sbin/ip", ["netns", "exec", namespace] + arguments, environment: environment, seconds: seconds)
    }

    /// Starts a program in a namespace, stopped by `tearDown`.
    @discardableResult
    func start(
        in namespace: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> ChildProcess {
        let child = try ChildProcess(
            "/usr/sbin/ip", ["netns", "exec", namespace] + arguments, environment: environment, errors: .toOutput)
        lock.withLock { children.append(child) }
        return child
    }

    /// Loads an nftables ruleset into a namespace.
    func nft(in namespace: String, _ ruleset: String) async throws {
        let file = scratch.file("\(namespace)-\(UUID().uuidString).nft")
        try ruleset.write(toFile: file, atomically: true, encoding: .utf8)
        let loaded = try await run(in: namespace, ["nft", "-f", file])
        guard loaded.status == 0 else { throw NamespaceError("nft refused the ruleset: \(loaded.errors)") }
    }

    /// Writes a file into the scratch directory and returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        let path = scratch.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Waits until something listens on `socket` (`ADDRESS:PORT`, `[ADDRESS]:PORT`) in
    /// `namespace` over TCP, or the time is up.
    func waitForListener(in namespace: String, _ socket: String, seconds: Double = 30) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            let listening = try await run(in: namespace, ["ss", "-Hltn", "src", socket])
            if !listening.output.isEmpty { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NamespaceError("nothing listened on \(socket) in \(namespace) within \(Int(seconds)) s")
    }

    /// Starts `ipdirect lab` in the service namespace as a stand-in service on 192.0.2.1 (and
    /// 192.0.2.2, the first address `/ss` names) on ports 80, 443 and 53, and reads its endpoints.
    ///
    /// - Parameters:
    ///   - arguments: more of the lab's arguments (`--fault captive-portal`).
    ///   - environment: more of its environment (libfaketime's).
    @discardableResult
    func startLab(_ arguments: [String] = [], environment: [String: String] = [:]) async throws -> LabEndpoints {
        let child = try start(
            in: service,
            [
                BuiltBinary.ipdirect!, "lab", "--listen", Self.listenAddress, "--service-address", Self.secondAddress,
                "--service-address", Self.listenAddress, "--well-known-ports", "--state-directory", scratch.file("lab"),
            ] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        // Its log shares the output: the endpoints are the line that is a JSON object.
        var line = try await child.nextLine(within: 60)
        while let text = line, !text.hasPrefix("{") { line = try await child.nextLine(within: 60) }
        guard let line, let endpoints = try? JSONDecoder().decode(LabEndpoints.self, from: Data(line.utf8)) else {
            throw NamespaceError("ipdirect lab printed no endpoints: \(child.outputText)")
        }
        lab = endpoints
        return endpoints
    }

    /// What one doctor run gave: its report and how long the process took, start to exit.
    struct DoctorRun {
        var findings: [DoctorCheckID: DoctorFinding]
        /// The process's time, start to exit, as the user waits for it.
        var seconds: Double
        /// The run's own time, as the report gives it.
        var reportedSeconds: Double
        var status: Int32
        var output: String

        func status(_ check: DoctorCheckID) -> DoctorStatus? { findings[check]?.status }
        func seen(_ check: DoctorCheckID) -> String { findings[check]?.seen ?? "" }
    }

    /// Runs the doctor command the lab printed, in the client namespace, with JSON output.
    ///
    /// - Parameters:
    ///   - arguments: more arguments (`--within 8`).
    ///   - environment: the client's variables (proxies); nothing else of the test's passes.
    func doctor(_ arguments: [String], environment: [String: String] = [:]) async throws -> DoctorRun {
        guard let command = lab?.doctor else { throw NamespaceError("the lab printed no doctor command") }
        // "ipdirect doctor --config FILE": the binary under test in place of the word ipdirect.
        let words = command.split(separator: " ").map(String.init).dropFirst()
        var variables = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": scratch.path]
        variables.merge(environment) { $1 }
        let started = ContinuousClock.now
        let result = try await run(
            in: client, [BuiltBinary.ipdirect!] + words + ["--format", "json", "--color", "never"] + arguments,
            environment: variables, seconds: 60)
        let seconds = (ContinuousClock.now - started).inSeconds
        struct Report: Decodable {
            var findings: [DoctorFinding]
            var durationMs: Double
        }
        guard let report = try? JSONDecoder().decode(Report.self, from: Data(result.output.utf8)) else {
            throw NamespaceError("the doctor gave no report (exit \(result.status)): \(result.output) \(result.errors)")
        }
        return DoctorRun(
            findings: Dictionary(report.findings.map { ($0.check, $0) }) { first, _ in first }, seconds: seconds,
            reportedSeconds: report.durationMs / 1000, status: result.status, output: result.output)
    }

    /// Stops every process started (SIGTERM, then SIGKILL after 5 s), deletes the namespaces
    /// and the client's resolv.conf, and removes the scratch directory.
    func tearDown() async {
        let started = lock.withLock { children }
        for child in started { child.signal(SIGTERM) }
        for child in started { _ = try? await child.exitStatus(within: 5) }
        _ = try? await ChildProcess.shell(
            "ip netns del \(service) 2>/dev/null; ip netns del \(client) 2>/dev/null; rm -rf /etc/netns/\(client)")
        scratch.remove()
    }
}

/// Runs `body` with a fresh pair of namespaces, torn down afterwards even when it throws.
func withNamespaces<T>(
    ipv6Only: Bool = false, resolver: String = NamespaceNetwork.listenAddress,
    _ body: (NamespaceNetwork) async throws -> T
) async throws -> T {
    let network = try await NamespaceNetwork.make(ipv6Only: ipv6Only, resolver: resolver)
    do {
        let result = try await body(network)
        await network.tearDown()
        return result
    } catch {
        await network.tearDown()
        throw error
    }
}

/// Why the namespaces or a program in them could not be set up.
struct NamespaceError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

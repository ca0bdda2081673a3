// `/probe` side by side with blackbox_exporter's: the same nginx origin over HTTPS, 1,000 probes
// 100 at a time through each exporter, wall and CPU time and peak RSS of each as ratios.
import Foundation
import Lab

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

enum BlackboxBenchmark {
    static let environment = ProcessInfo.processInfo.environment
    static let requests = Int(environment["BLACKBOX_BENCH_REQUESTS"] ?? "") ?? 1000
    static let atOnce = Int(environment["BLACKBOX_BENCH_AT_ONCE"] ?? "") ?? 100
    static let rounds = Int(environment["IPDIRECT_BENCH_ROUNDS"] ?? "") ?? 3
    /// The name nginx's certificate carries, the lab's HTTPDNS resolves, and both send as SNI.
    static let name = "sni-a.lab.test"
    /// The aims (issue 34): /probe no slower than blackbox_exporter's, at most 0.8 of its CPU, and
    /// no more peak RSS.
    static let wallAim = 1.0
    static let cpuAim = 0.8
    static let memoryAim = 1.0

    static func run() async throws {
        guard let binary = releaseIPDirect("probe-blackbox") else { return }
        let programs = [
            "curl": ["/usr/bin/curl"], "nginx": ["/usr/sbin/nginx", "/usr/bin/nginx"],
            "blackbox": ["/usr/bin/prometheus-blackbox-exporter", "/usr/local/bin/blackbox_exporter"],
        ]
        let found = programs.compactMapValues { $0.first(where: FileManager.default.isExecutableFile) }
        guard let curl = found["curl"], let nginx = found["nginx"], let blackbox = found["blackbox"] else {
            print(
                "probe-blackbox: skipped: it needs curl, nginx and blackbox_exporter"
                    + " (apt-get install curl nginx-light prometheus-blackbox-exporter)")
            return
        }
        let scratch = NSTemporaryDirectory() + "ipdirect-blackbox-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: scratch + "/ipdirect", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let origin = try NginxOrigin.start(nginx, names: [name], directory: scratch)
        defer { origin.stop() }
        let lab = try await Lab.start()
        var exporters: [Exporter] = []
        defer { for exporter in exporters { exporter.stop() } }
        do {
            let agent = try await Exporter.ipdirect(binary, lab: lab.endpoints, origin: origin, scratch: scratch)
            exporters.append(agent)
            let peer = try await Exporter.blackbox(blackbox, origin: origin, scratch: scratch)
            exporters.append(peer)
            try measure(agent: agent, peer: peer, curl: curl, origin: origin, scratch: scratch)
        } catch {
            try? await lab.shutdown()
            throw error
        }
        try await lab.shutdown()
    }

    /// One exporter process and the `/probe` URL that probes the nginx origin through it.
    struct Exporter {
        var label: String
        var pid: pid_t
        var probeURL: String

        /// The release agent with no targets of its own: the lab's HTTPDNS names 127.0.0.1 for
        /// the name, `module=direct_sni` pins it there below TLS (SNI and Host the name's).
        static func ipdirect(
            _ binary: String, lab: LabEndpoints, origin: NginxOrigin, scratch: String
        ) async throws -> Exporter {
            try """
            [modules.direct_sni]
            scenarios = ["direct-sni"]
            """.write(toFile: scratch + "/ipdirect/config.toml", atomically: true, encoding: .utf8)
            var variables = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
            variables["IPDIRECT_HTTPDNS_SECRET"] = lab.secret
            variables["XDG_CONFIG_HOME"] = scratch
            variables["XDG_CACHE_HOME"] = scratch
            let port = try NginxOrigin.freePort()
            // As many probes at once as requests come at once: blackbox_exporter has no bound.
            let pid = try ChildRun.spawn(
                binary,
                [
                    "agent", "--metrics-listen", "127.0.0.1:\(port)", "--probe-concurrency", String(atOnce),
                    "--provider", "alicloud", "--endpoint", lab.httpdns, "--account", lab.account, "--dns-server",
                    lab.dns, "--cacert", origin.caFile, "--log-format", "json",
                ], environment: variables, stdout: "/dev/null", stderr: scratch + "/ipdirect.log")
            let target = "https://\(name):\(origin.port)/".addingPercentEncoding(withAllowedCharacters: .alphanumerics)
            return try await ready(
                Exporter(
                    label: "ipdirect agent", pid: pid,
                    probeURL: "http://127.0.0.1:\(port)/probe?module=direct_sni&target=\(target ?? "")"),
                log: scratch + "/ipdirect.log")
        }

        /// blackbox_exporter's http module pinned to the IP as its users pin it: the target is the
        /// address, `Host` and `tls_config.server_name` carry the name.
        static func blackbox(_ binary: String, origin: NginxOrigin, scratch: String) async throws -> Exporter {
            let configuration = scratch + "/blackbox.yml"
            try """
            modules:
              http_2xx:
                prober: http
                timeout: 10s
                http:
                  preferred_ip_protocol: ip4
                  headers:
                    Host: \(name)
                  tls_config:
                    server_name: \(name)
                    ca_file: \(origin.caFile)
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
            let port = try NginxOrigin.freePort()
            let pid = try ChildRun.spawn(
                binary,
                ["--config.file=\(configuration)", "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn"],
                environment: ProcessInfo.processInfo.environment, stdout: "/dev/null",
                stderr: scratch + "/blackbox.log")
            let target = "https://127.0.0.1:\(origin.port)/".addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)
            return try await ready(
                Exporter(
                    label: "blackbox_exporter", pid: pid,
                    probeURL: "http://127.0.0.1:\(port)/probe?module=http_2xx&target=\(target ?? "")"),
                log: scratch + "/blackbox.log")
        }

        /// Waits (10 s at most) until a probe through it answers `probe_success 1`.
        private static func ready(_ exporter: Exporter, log: String) async throws -> Exporter {
            for _ in 0..<100 {
                if let body = await fetch(exporter.probeURL), body.contains("\nprobe_success 1") { return exporter }
                try await Task.sleep(for: .milliseconds(100))
            }
            let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            exporter.stop()
            throw BenchError("\(exporter.label) did not answer probe_success 1 within 10 s: \(said.suffix(500))")
        }

        /// User plus system CPU seconds the process has used (/proc/PID/stat utime + stime).
        var cpuSeconds: Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return 0 }
            // After "pid (comm) ": state is field 3, utime 14 and stime 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        /// The process's peak resident memory so far, in MB (VmHWM).
        var peakMegabytes: Double { AgentBenchmark.residentMegabytes(pid, field: "VmHWM:") }

        func stop() { ChildRun.stop(pid, with: SIGTERM) }
    }

    /// One round of one exporter: the requests' wall time, the exporter's CPU, each answer.
    struct Round {
        var wall: Double
        var cpu: Double
        var times: [Double]
        var statuses: [Int: Int]
    }

    private static func measure(
        agent: Exporter, peer: Exporter, curl: String, origin: NginxOrigin, scratch: String
    ) throws {
        print(
            "\(requests) /probe requests, \(atOnce) at a time, to each exporter, alternating, \(rounds) rounds;"
                + " both probe the same nginx over HTTPS (SNI \(name)); CPU is the exporter's (utime+stime);"
                + " then curl alone makes the same \(requests) HTTPS requests straight to nginx, \(atOnce) at a time")
        print("round   exporter              wall       cpu    p50     p99   not 200   load average")
        var results: [String: [Round]] = [:]
        var floors: [Round] = []
        // Handshakes nginx saw resumed, by who made them: all three should make full ones.
        var resumed: [String: Int] = [:]
        for round in 1...rounds {
            // Alternate who goes first, so neither always meets a warm or a cold machine.
            for exporter in round % 2 == 1 ? [agent, peer] : [peer, agent] {
                origin.clearLog()
                let result = try load(exporter, curl: curl, scratch: scratch)
                resumed[exporter.label, default: 0] += origin.resumedHandshakes() ?? 0
                results[exporter.label, default: []].append(result)
                print(row(round, exporter.label, result))
            }
            origin.clearLog()
            let floor = try floor(curl: curl, origin: origin, scratch: scratch)
            resumed["curl", default: 0] += origin.resumedHandshakes() ?? 0
            floors.append(floor)
            print(row(round, "curl alone (floor)", floor))
        }
        let mine = results[agent.label] ?? []
        let theirs = results[peer.label] ?? []
        let wall = median(zip(mine, theirs).map { $0.wall / $1.wall })
        let cpu = median(zip(mine, theirs).map { $0.cpu / $1.cpu })
        let floorCPU = median(zip(floors, theirs).map { $0.cpu / $1.cpu })
        let memory = agent.peakMegabytes / max(peer.peakMegabytes, 0.001)
        print(
            String(
                format: "peak RSS (VmHWM): ipdirect agent %.1f MB, blackbox_exporter %.1f MB", agent.peakMegabytes,
                peer.peakMegabytes))
        print(
            String(
                format:
                    "median ratio ipdirect/blackbox: wall %.2fx (aim <= %.2fx: %@), CPU %.2fx (aim <= %.2fx: %@), peak RSS %.2fx (aim <= %.2fx: %@)",
                wall, wallAim, wall <= wallAim ? "met" : "not met", cpu, cpuAim, cpu <= cpuAim ? "met" : "not met",
                memory, memoryAim, memory <= memoryAim ? "met" : "not met"))
        // The floor: the client side of the same HTTPS requests on the same libcurl and OpenSSL,
        // with no exporter around it: what a prober built on them spends before any work of its own.
        print(
            String(
                format: "the floor: curl alone spends %.2fx blackbox_exporter's CPU on the same requests", floorCPU))
        print(
            "handshakes resumed, of \(requests * rounds) each: ipdirect agent \(resumed[agent.label] ?? 0),"
                + " blackbox_exporter \(resumed[peer.label] ?? 0), curl alone \(resumed["curl"] ?? 0)")
    }

    private static func row(_ round: Int, _ label: String, _ result: Round) -> String {
        let failed = result.statuses.filter { $0.key != 200 }.values.reduce(0, +)
        return String(
            format: "%5d   %@ %6.2f s %7.2f s %5.3f s %5.3f s %7d   %@", round,
            label.padding(toLength: 20, withPad: " ", startingAt: 0), result.wall, result.cpu,
            percentile(result.times, 0.5), percentile(result.times, 0.99), failed, loadAverage())
    }

    /// curl alone: the same `requests` HTTPS GETs straight to nginx, `atOnce` at a time, each on a
    /// connection of its own with a full handshake (no session reuse, as both exporters make them),
    /// the certificate checked against the name. Its CPU is curl's own (wait4's rusage).
    private static func floor(curl: String, origin: NginxOrigin, scratch: String) throws -> Round {
        let url = "https://\(name):\(origin.port)/"
        return try requestAll(
            url, curl: curl, scratch: scratch,
            options: [
                "--resolve", "\(name):\(origin.port):127.0.0.1", "--cacert", origin.caFile, "--no-sessionid",
                "--header", "Connection: close",
            ]
        ) { run in run.cpu }
    }

    /// `requests` GETs of the exporter's `/probe`, `atOnce` at a time, by curl (a C client, so the
    /// load costs neither exporter anything but the requests).
    private static func load(_ exporter: Exporter, curl: String, scratch: String) throws -> Round {
        let before = exporter.cpuSeconds
        return try requestAll(exporter.probeURL, curl: curl, scratch: scratch, options: []) { _ in
            exporter.cpuSeconds - before
        }
    }

    /// `requests` GETs of `url` by curl, `atOnce` at a time: the round's wall time, the CPU that
    /// `cpu` reads from curl's run, each answer's status and time. (curl's own peak RSS is not
    /// read from wait4: after posix_spawn, ru_maxrss counts this process's size before the exec.)
    private static func requestAll(
        _ url: String, curl: String, scratch: String, options: [String], cpu: (ChildRun) -> Double
    ) throws -> Round {
        let config = scratch + "/curl.conf"
        try Array(repeating: "url = \"\(url)\"\noutput = \"/dev/null\"", count: requests)
            .joined(separator: "\n").write(toFile: config, atomically: true, encoding: .utf8)
        let answers = scratch + "/answers.txt"
        let run = try ChildRun.run(
            curl,
            [
                "--parallel", "--parallel-immediate", "--parallel-max", String(atOnce), "--silent", "--noproxy", "*",
                "--max-time", "30", "--write-out", "%{http_code} %{time_total}\\n",
            ] + options + ["--config", config], environment: ProcessInfo.processInfo.environment, scratch: scratch,
            stdout: answers)
        let lines = ((try? String(contentsOfFile: answers, encoding: .utf8)) ?? "").split(separator: "\n")
        var statuses: [Int: Int] = [:]
        var times: [Double] = []
        for line in lines {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let status = Int(parts[0]), let time = Double(parts[1]) else { continue }
            statuses[status, default: 0] += 1
            times.append(time)
        }
        // A request curl gave no line for counts as failed (status 0).
        statuses[0, default: 0] += max(requests - times.count, 0)
        if statuses[0] == 0 { statuses[0] = nil }
        return Round(wall: run.wall, cpu: cpu(run), times: times, statuses: statuses)
    }

    /// One GET on loopback, the body; nil when it did not answer 200.
    private static func fetch(_ url: String) async -> String? {
        guard let url = URL(string: url), let (data, response) = try? await URLSession.shared.data(from: url),
            (response as? HTTPURLResponse)?.statusCode == 200
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

}

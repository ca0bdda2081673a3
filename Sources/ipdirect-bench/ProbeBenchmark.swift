// 600 HTTPS URLs on an nginx origin (a C server, so the origin does not hide the client's cost)
// through the release `ipdirect probe --scenario direct-sni` against `curl --parallel` with the
// same --resolve pins, alternating, wall and CPU time. The lab only answers the HTTPDNS queries.
import Foundation
import FoundationGaps
import Lab

enum ProbeBenchmark {
    static let urlCount = 600
    static let rounds = ProcessInfo.processInfo.environment["IPDIRECT_BENCH_ROUNDS"].flatMap { Int($0) } ?? 5
    static let concurrency = 16
    static let names = [
        "single.lab.test", "sni-a.lab.test", "sni-b.lab.test", "default.lab.test", "short-ttl.lab.test",
    ]
    static let aim = 1.10

    static func run() async throws {
        guard let binary = releaseIPDirect("probe") else { return }
        guard let curl = ["/usr/bin/curl", "/usr/local/bin/curl"].first(where: FileManager.default.isExecutableFile)
        else {
            print("skipped: curl is not installed")
            return
        }
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile)
        else {
            print("skipped: nginx is not installed (make bench installs nginx-light)")
            return
        }
        let scratch = NSTemporaryDirectory() + "ipdirect-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }

        let origin = try NginxOrigin.start(nginx, names: names, directory: scratch)
        defer { origin.stop() }
        let lab = try await Lab.start(LabOptions())
        do {
            try measure(lab, origin: origin, binary: binary, curl: curl, scratch: scratch)
        } catch {
            try? await lab.shutdown()
            throw error
        }
        try await lab.shutdown()
    }

    private static func measure(_ lab: Lab, origin: NginxOrigin, binary: String, curl: String, scratch: String) throws {
        let e = lab.endpoints
        let urls = (0..<urlCount).map { index in
            "https://\(names[index % names.count]):\(origin.port)/echo?n=\(index)"
        }
        let pins = names.map { "\($0):\(origin.port):127.0.0.1" }
        let urlFile = scratch + "/urls.txt"
        try urls.joined(separator: "\n").write(toFile: urlFile, atomically: true, encoding: .utf8)
        // curl reads the URLs from a config file; -o /dev/null for each.
        let curlConfig = scratch + "/curl.conf"
        try urls.map { "url = \"\($0)\"\noutput = \"/dev/null\"" }.joined(separator: "\n")
            .write(toFile: curlConfig, atomically: true, encoding: .utf8)

        // The lab's HTTPDNS says 127.0.0.1 for every lab name; ipdirect pins the name there.
        // JSON Lines writes every trace field (headers, chain, curl's log); the table only a summary.
        let ipdirectArguments = { (format: String) in
            [
                "probe", "--input", urlFile, "--scenario", "direct-sni", "--concurrency", String(concurrency),
                "--provider", "alicloud", "--endpoint", e.httpdns, "--account", e.account, "--cacert",
                origin.caFile, "--timeout", "10", "--format", format,
            ]
        }
        // The peer opens a fresh connection with a full handshake for every request, as ipdirect
        // does (Connection: close; ipdirect turns libcurl's session cache off so every attempt
        // measures a whole handshake): curl --no-sessionid. curl's default, which resumes TLS
        // sessions, runs too and is reported apart. nginx's log counts the resumed handshakes.
        let curlArguments = { (resume: Bool) in
            ["--parallel", "--parallel-max", String(concurrency), "--silent", "--show-error", "--fail"]
                + ["--cacert", origin.caFile, "-H", "Connection: close", "--noproxy", "*"]
                + (resume ? [] : ["--no-sessionid"]) + pins.flatMap { ["--resolve", $0] } + ["--config", curlConfig]
        }
        // Own configuration and cache directories, so the user's files play no part.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        environment["XDG_CONFIG_HOME"] = scratch
        environment["XDG_CACHE_HOME"] = scratch

        print(
            "\(urlCount) HTTPS URLs on nginx, direct-sni, \(concurrency) at a time, \(rounds) rounds, alternating;"
                + " CPU = user+sys of the client process")
        print("round   side                    wall      cpu  resumed   ratio to curl: wall   cpu")
        let formats = ["jsonl", "table"]
        let labels = [
            "curl": "curl --no-sessionid", "curl-resume": "curl (resumes)", "jsonl": "ipdirect jsonl",
            "table": "ipdirect table",
        ]
        var runs: [String: [ChildRun]] = [:]
        var ratios: [String: (wall: [Double], cpu: [Double])] = [:]
        for round in 1...rounds {
            // Alternate who goes first, so neither always meets a warm or a cold machine.
            let sides = ["curl"] + formats + ["curl-resume"]
            var results: [String: ChildRun] = [:]
            var resumed: [String: Int] = [:]
            for side in round % 2 == 1 ? sides : sides.reversed() {
                origin.clearLog()
                switch side {
                case "curl", "curl-resume":
                    results[side] = try ChildRun.run(
                        curl, curlArguments(side == "curl-resume"), environment: environment, scratch: scratch)
                default:
                    results[side] = try ChildRun.run(
                        binary, ipdirectArguments(side), environment: environment, scratch: scratch)
                }
                resumed[side] = origin.resumedHandshakes()
            }
            // Every side ran this round: the loop above ran each.
            guard let peer = results["curl"] else { continue }
            for side in sides {
                guard let run = results[side] else { continue }
                runs[side, default: []].append(run)
                var line = String(
                    format: "%5d   %@ %6.0f ms %6.0f ms %8d", round,
                    labels[side, default: side].padding(toLength: 21, withPad: " ", startingAt: 0),
                    run.wall * 1000, run.cpu * 1000, resumed[side] ?? -1)
                if side != "curl" {
                    ratios[side, default: ([], [])].wall.append(run.wall / peer.wall)
                    ratios[side, default: ([], [])].cpu.append(run.cpu / peer.cpu)
                    line += String(format: "        %5.2fx %6.2fx", run.wall / peer.wall, run.cpu / peer.cpu)
                }
                print(line)
            }
        }
        let perRequest = { (side: String) in median(runs[side, default: []].map(\.cpu)) / Double(urlCount) * 1e6 }
        let wallMs = { (side: String) in median(runs[side, default: []].map(\.wall)) * 1000 }
        for side in formats {
            let wall = median(ratios[side]?.wall ?? [])
            let cpu = median(ratios[side]?.cpu ?? [])
            print(
                String(
                    format: "median ratio ipdirect (--format %@)/curl: wall %.2fx, CPU %.2fx (aim <= %.2fx: %@)", side,
                    wall, cpu, aim, wall <= aim && cpu <= aim ? "met" : "not met"))
        }
        print(
            String(
                format: "median ratio curl (resumes)/curl --no-sessionid: wall %.2fx, CPU %.2fx (not the peer:"
                    + " a resumed handshake is less work)", median(ratios["curl-resume"]?.wall ?? []),
                median(ratios["curl-resume"]?.cpu ?? [])))
        for side in ["jsonl", "table", "curl", "curl-resume"] {
            print(
                String(
                    format: "%@: median wall %.0f ms, CPU per request %.0f us (user+sys)",
                    labels[side, default: side].padding(toLength: 21, withPad: " ", startingAt: 0), wallMs(side),
                    perRequest(side)))
        }
        let failed = runs.values.joined().filter { $0.status != 0 }.count
        if failed > 0 { print("\(failed) runs exited non-zero: the numbers above are not comparable") }
    }
}

/// One child process run to completion: its wall time and its own CPU time (from wait4's rusage).
struct ChildRun {
    var wall: Double
    /// User plus system seconds of the child (and any children it waited for).
    var cpu: Double
    /// The exit status, or 128 + the signal that ended it.
    var status: Int32

    /// Runs a program, stdout discarded (or written to `stdout`), stderr kept in `scratch` and
    /// shown when it fails.
    static func run(
        _ path: String, _ arguments: [String], environment: [String: String], scratch: String,
        stdout: String = "/dev/null"
    ) throws
        -> ChildRun
    {
        let errors = scratch + "/stderr.txt"
        let start = DispatchTime.now().uptimeNanoseconds
        let pid = try spawn(path, arguments, environment: environment, stdout: stdout, stderr: errors)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        let signal = status & 0x7f
        let code = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        if code != 0 {
            let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            print("\(URL(fileURLWithPath: path).lastPathComponent) exited \(code): \(text.prefix(500))")
        }
        return ChildRun(wall: wall, cpu: cpu, status: code)
    }

    /// Starts a program (FoundationGaps' spawnProgram, so wait4 can report its rusage), output to files.
    static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String], stdout: String, stderr: String
    ) throws -> pid_t {
        do {
            return try spawnProgram(
                path, arguments, environment: environment, output: .file(stdout), errors: .file(stderr))
        } catch {
            throw BenchError("cannot start \(path): \(error)")
        }
    }

    /// Sends `signal` to a child started by `spawn` and waits for it: 5 s, then SIGKILL.
    static func stop(_ pid: pid_t, with signal: Int32) {
        kill(pid, signal)
        var status: Int32 = 0
        for _ in 0..<100 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }

    private static func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
}

/// nginx on loopback for the benchmark: its own prefix and configuration in a temporary
/// directory, an unprivileged port, in the foreground (no daemon), with a certificate for the lab
/// names from a lab-style CA. Every path answers 200 with a short body; the access log says
/// whether each request's TLS session was resumed. TLS 1.3 as a current server speaks it (nginx
/// 1.22 offers only up to 1.2 unless told), with a session cache so that a client which asks
/// to resume can.
struct NginxOrigin {
    let pid: pid_t
    let port: Int
    let caFile: String
    /// One line per request: "r" when the TLS session was resumed, "." for a full handshake.
    let logFile: String

    /// Empties the access log (nginx appends, so it keeps writing at the new end).
    func clearLog() {
        truncate(logFile, 0)
    }

    /// How many requests since `clearLog` came on a resumed TLS session.
    func resumedHandshakes() -> Int? {
        usleep(100_000)  // nginx writes the line after the response has gone out
        guard let text = try? String(contentsOfFile: logFile, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").filter { $0 == "r" }.count
    }

    static func start(_ nginx: String, names: [String], directory: String) throws -> NginxOrigin {
        let prefix = directory + "/nginx"
        try FileManager.default.createDirectory(atPath: prefix + "/temp", withIntermediateDirectories: true)
        let files = try LabCertificateFiles.write(dnsNames: names, to: prefix)
        let port = try freePort()
        let configuration = """
            daemon off;
            master_process on;
            worker_processes auto;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log warn;
            events { worker_connections 4096; }
            http {
                log_format handshake "$ssl_session_reused";
                access_log \(prefix)/access.log handshake;
                client_body_temp_path \(prefix)/temp/body;
                proxy_temp_path \(prefix)/temp/proxy;
                fastcgi_temp_path \(prefix)/temp/fastcgi;
                uwsgi_temp_path \(prefix)/temp/uwsgi;
                scgi_temp_path \(prefix)/temp/scgi;
                server {
                    listen 127.0.0.1:\(port) ssl;
                    server_name \(names.joined(separator: " "));
                    ssl_certificate \(files.certificateFile);
                    ssl_certificate_key \(files.keyFile);
                    ssl_protocols TLSv1.2 TLSv1.3;
                    ssl_session_cache shared:bench:1m;
                    location / { default_type text/plain; return 200 "origin=nginx ; host=$host ; sni=$ssl_server_name\\n"; }
                }
            }
            """
        let configFile = prefix + "/nginx.conf"
        try configuration.write(toFile: configFile, atomically: true, encoding: .utf8)
        let pid = try ChildRun.spawn(
            nginx, ["-p", prefix, "-c", configFile, "-e", prefix + "/error.log"],
            environment: ProcessInfo.processInfo.environment, stdout: prefix + "/stdout.txt",
            stderr: prefix + "/stderr.txt")
        let origin = NginxOrigin(pid: pid, port: port, caFile: files.caFile, logFile: prefix + "/access.log")
        // Ready when it accepts a connection; give up after 10 s.
        for _ in 0..<200 {
            if canConnect(port) { return origin }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let log = (try? String(contentsOfFile: prefix + "/error.log", encoding: .utf8)) ?? ""
                throw BenchError("nginx exited at start: \(log.suffix(500))")
            }
            usleep(50_000)
        }
        origin.stop()
        throw BenchError("nginx did not listen on 127.0.0.1:\(port) within 10 s")
    }

    /// Asks nginx to quit (SIGQUIT: finish what runs, then exit) and waits for it.
    func stop() { ChildRun.stop(pid, with: SIGQUIT) }

    /// A port nobody listens on now (the kernel's pick for port 0); the other benchmarks' servers
    /// take theirs here too.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("cannot open a socket to find a free port") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchError("cannot bind a socket to find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

/// A benchmark that cannot run, with the reason.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

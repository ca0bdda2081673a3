// The console's costs: render time of the cache view at 10,000 entries and of the traces view
// at 100,000 traces (each against the floor of filling the same frame), memory with 100,000
// traces kept, and the CPU the real binary uses while idle for 10 seconds under tmux.
import Console
import CurlTransport
import Foundation
import NameResolution
import Probe

enum ConsoleBenchmark {
    static let sizes = [TerminalSize(width: 80, height: 24), TerminalSize(width: 120, height: 40)]
    static let frames = ProcessInfo.processInfo.environment["IPDIRECT_BENCH_FRAMES"].flatMap { Int($0) } ?? 300
    static let start = Date(timeIntervalSince1970: 1_795_420_800)
    static let engine = EngineDescription(provider: "alicloud", endpoint: "http://127.0.0.1:18080", lab: true)

    static func run() async throws {
        cacheView()
        let rssBefore = residentBytes()
        var state = tracesState(count: 100_000, keep: 100_000)
        let rssAfter = residentBytes()
        tracesView(&state)
        print(
            String(
                format:
                    "memory: 100,000 traces kept (the newest 2,000 with headers, chain and log): %.1f MB resident more (%.2f KB a trace); aim under 200 MB",
                Double(rssAfter - rssBefore) / 1_048_576, Double(rssAfter - rssBefore) / 100_000 / 1024))
        var bounded = tracesState(count: 150_000, keep: 100_000)
        print("retention: 150,000 recorded with --max-traces 100000 keeps \(bounded.traces.count)")
        _ = reduce(into: &bounded, action: .key(.character("q")))
        idleCPU()
    }

    // MARK: Render

    /// Mean milliseconds a frame over `frames` renders.
    static func timeFrames(_ body: () -> CellBuffer) -> Double {
        var sink = 0
        let begin = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<frames { sink &+= Int(body().cells.count) }
        let elapsed = DispatchTime.now().uptimeNanoseconds - begin
        precondition(sink > 0)
        return Double(elapsed) / Double(frames) / 1_000_000
    }

    /// The floor any frame pays: a buffer of that size with every row written once.
    static func floorFrame(_ size: TerminalSize) -> CellBuffer {
        var buffer = CellBuffer(width: size.width, height: size.height)
        let row = String(repeating: "x", count: size.width)
        for y in 0..<size.height { buffer.put(row, x: 0, y: y) }
        return buffer
    }

    static func report(_ label: String, _ size: TerminalSize, ours: Double) {
        let floor = timeFrames { floorFrame(size) }
        print(
            String(
                format: "%@ %dx%d: %.3f ms a frame; floor (fill the frame) %.3f ms; ratio %.1fx; aim under 5 ms",
                label, size.width, size.height, ours, floor, ours / floor))
    }

    static func cacheView() {
        var state = ConsoleState(size: sizes[0], now: start, engine: engine, timeZone: .gmt)
        _ = reduce(into: &state, action: .key(.escape))
        _ = reduce(into: &state, action: .key(.character("2")))
        let entries = (0..<10_000).map { index -> CacheEntrySnapshot in
            let ip = IPAddress(index % 3 == 0 ? "2001:db8::\(index % 250 + 1)" : "192.0.2.\(index % 250 + 1)")
            return CacheEntrySnapshot(
                host: "host-\(index).bench.test", family: index % 3 == 0 ? .v6 : .v4,
                ips: ip.map { [$0] } ?? [],
                ttl: 60 + index % 600, resolvedAt: start.addingTimeInterval(-Double(index % 300)),
                source: index % 7 == 0 ? .stale : .httpdns, hits: index % 50, refreshing: index % 97 == 0)
        }
        // What a second of the live console costs besides drawing: a new snapshot, sorted again.
        let sortBegin = DispatchTime.now().uptimeNanoseconds
        _ = reduce(into: &state, action: .cacheEntries(entries))
        let sortMs = Double(DispatchTime.now().uptimeNanoseconds - sortBegin) / 1_000_000
        print(String(format: "cache view: taking a 10,000-entry snapshot (sorted by name): %.2f ms", sortMs))
        _ = reduce(into: &state, action: .key(.character("G")))  // the last page, cursor at the bottom
        for size in sizes {
            _ = reduce(into: &state, action: .resize(size))
            var tick = 0
            let ours = timeFrames {
                tick += 1
                _ = reduce(into: &state, action: .tick(start.addingTimeInterval(Double(tick))))
                return render(state)
            }
            report("cache view, 10,000 entries,", size, ours: ours)
        }
    }

    static func tracesView(_ state: inout ConsoleState) {
        _ = reduce(into: &state, action: .key(.escape))
        _ = reduce(into: &state, action: .key(.character("3")))
        for size in sizes {
            _ = reduce(into: &state, action: .resize(size))
            report("traces view, 100,000 traces,", size, ours: timeFrames { render(state) })
        }
        _ = reduce(into: &state, action: .key(.enter))
        report(
            "trace detail (waterfall, headers, 2 certs, 20 log lines),", sizes[1], ours: timeFrames { render(state) })
        _ = reduce(into: &state, action: .key(.escape))
        let filterBegin = DispatchTime.now().uptimeNanoseconds
        for character in "/sni" { _ = reduce(into: &state, action: .key(.character(character))) }
        let filterMs = Double(DispatchTime.now().uptimeNanoseconds - filterBegin) / 1_000_000
        print(
            String(
                format:
                    "traces filter over 100,000 traces (3 keystrokes: one scan, then narrowing): %.1f ms in all; %d match",
                filterMs, state.traceListCount))
        report("traces view, filtered,", sizes[1], ours: timeFrames { render(state) })
    }

    // MARK: Memory

    /// A console state holding `count` realistic traces (each with its own strings), keeping `keep`.
    static func tracesState(count: Int, keep: Int) -> ConsoleState {
        var state = ConsoleState(
            size: sizes[1], now: start, engine: engine, timeZone: .gmt, maxTraces: keep,
            maxTraceDetails: ConsoleOptions.defaultMaxTraceDetails)
        for index in 0..<count { recordTrace(attempt(index), runID: index / 4 + 1, state: &state) }
        return state
    }

    static let scenarios: [Scenario] = [.systemDNS, .directHTTP, .directHTTPS, .directSNI]

    /// An attempt shaped like the lab's direct-sni ones: one hop, headers, a chain of two, curl's log.
    static func attempt(_ index: Int) -> Attempt {
        let host = "host-\(index % 5000).bench.test"
        let url = "https://\(host):8443/path/\(index)"
        let scenario = scenarios[index % 4]
        let timings = PhaseTimings(
            nameLookup: 0.02, connect: 0.3, tlsDone: 3.1, preTransfer: 3.2, firstByte: 4.9, total: 5.3)
        let now = start.addingTimeInterval(Double(index) / 100)
        let chain = [
            CertificateSummary(
                subject: "CN=\(host),O=ipdirect lab", subjectAlternativeNames: [host], issuer: "CN=ipdirect lab CA",
                notBefore: now, notAfter: now.addingTimeInterval(86_400 * 30),
                sha256: (0..<32).map { String(format: "%02x", ($0 + index) & 0xff) }.joined(separator: ":")),
            CertificateSummary(
                subject: "CN=ipdirect lab CA", subjectAlternativeNames: [], issuer: "CN=ipdirect lab CA",
                notBefore: now, notAfter: now.addingTimeInterval(86_400 * 365),
                sha256: (0..<32).map { String(format: "%02x", ($0 * 7 + index) & 0xff) }.joined(separator: ":")),
        ]
        let certificate = CertificateReport(chain: chain, verifyResult: 0, verifyMessage: "ok")
        let log = (0..<20).map { line in
            CurlLogLine(
                atMs: Double(line) * 0.25, kind: line % 3 == 0 ? .ssl : .info,
                text: "line \(line) of attempt \(index): TLSv1.3 (IN), TLS handshake, Finished (20)")
        }
        let hop = Hop(
            url: url, originalURL: url, method: "GET",
            requestHeaders: [
                HeaderField(name: "Host", value: "\(host):8443"),
                HeaderField(name: "User-Agent", value: "ipdirect/0.1"),
                HeaderField(name: "Accept", value: "*/*"),
            ],
            remoteIP: IPAddress("127.0.0.\(index % 250 + 1)"), remotePort: 8443, resolver: .httpdns, sni: host,
            checkedName: host,
            outcome: .ok, status: 200, httpVersion: "HTTP/1.1",
            responseHeaders: [
                HeaderField(name: "Content-Type", value: "text/plain; charset=utf-8"),
                HeaderField(name: "Content-Length", value: "60"),
                HeaderField(name: "Date", value: "Mon, 23 Nov 2026 08:00:\(index % 60) GMT"),
            ],
            responseBytes: 60, bodyPreview: "hello from \(host) over TLS with SNI \(index)", timings: timings,
            certificate: certificate, log: log, startedAt: now)
        return Attempt(
            url: url, scenario: scenario, ip: hop.remoteIP, ipSource: .httpdns, sni: host, checkedName: host,
            outcome: .ok, status: 200, httpVersion: "HTTP/1.1", timings: timings, certificate: certificate, hops: [hop])
    }

    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kilobytes * 1024
    }

    // MARK: Idle CPU

    /// Runs the real console under a private tmux server and reads its CPU time over 10 s idle.
    static func idleCPU() {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            print("idle CPU: skipped (needs /usr/bin/tmux)")
            return
        }
        guard let binary = releaseIPDirect("idle CPU") else { return }
        let socket = "ipdirect-bench-\(getpid())"
        let tmux = "/usr/bin/tmux -L \(socket) -f /dev/null"
        defer {
            _ = system("\(tmux) kill-server >/dev/null 2>&1")
            unlink("/tmp/tmux-\(getuid())/\(socket)")
        }
        for (label, keys) in [("probe view, idle", ""), ("cache view with an entry counting down", "sni-a.lab.test")] {
            _ = system("\(tmux) kill-server >/dev/null 2>&1")
            Thread.sleep(forTimeInterval: 0.5)
            let started = system(
                "\(tmux) new-session -d -s bench -x 120 -y 40 'exec \(binary) --lab' >/dev/null 2>&1 </dev/null")
            guard started == 0 else {
                print("idle CPU: could not start tmux")
                return
            }
            Thread.sleep(forTimeInterval: 2)
            if !keys.isEmpty {
                _ = system("\(tmux) send-keys -t bench -l '\(keys)'; \(tmux) send-keys -t bench Enter")
                Thread.sleep(forTimeInterval: 2)
                _ = system("\(tmux) send-keys -t bench 2")
                Thread.sleep(forTimeInterval: 1)
            }
            let pidFile = NSTemporaryDirectory() + "\(socket).pid"
            _ = system("\(tmux) display-message -p -t bench '#{pane_pid}' > \(pidFile)")
            let pid =
                (try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                ?? ""
            unlink(pidFile)
            guard let before = cpuTicks(pid) else {
                print("idle CPU: no process \(pid)")
                return
            }
            Thread.sleep(forTimeInterval: 10)
            guard let after = cpuTicks(pid) else { return }
            let seconds = Double(after - before) / Double(sysconf(Int32(_SC_CLK_TCK)))
            print(
                String(
                    format: "idle CPU, %@: %.2f%% of one core over 10 s (%.0f ms of CPU); aim under 1%%", label,
                    seconds / 10 * 100, seconds * 1000))
        }
    }

    /// utime + stime of a process, in clock ticks.
    static func cpuTicks(_ pid: String) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
}

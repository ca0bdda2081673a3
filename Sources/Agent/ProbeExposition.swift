// One `/probe` answer in the Prometheus text format: the series of a single probe, under
// blackbox_exporter's names and units where they mean the same, beside ipdirect's own per scenario.
import CurlTransport
import FoundationEssentials
import NameResolution
import Probe

/// Writes the series of one probe as `/probe` answers them, with no target label (the scraper
/// adds it by relabeling, as with blackbox_exporter).
///
/// Written afresh per answer: nothing of one probe outlives its answer, so the series of the
/// targets Prometheus asks about never accumulate in the agent.
///
/// Not a `ReportExporter`: that is a sink for a stream of reports, finished once; this is a pure
/// function of one answer, which needs what a report does not hold (the module's judgement, the
/// wall time within the scrape's budget) and must answer when the probe ran out of budget and
/// made no report at all.
public enum ProbeExposition {
    /// What the answer says of one probe besides the report.
    public struct Facts: Sendable {
        /// Wall time of the whole probe, resolution included.
        public var seconds: Double
        /// The probe's outcome as the module judges it (`probe_success`).
        public var success: Bool

        public init(seconds: Double, success: Bool) {
            self.seconds = seconds
            self.success = success
        }
    }

    /// The exposition of one probe.
    ///
    /// - Parameters:
    ///   - report: what the probe found; nil when it did not finish within its budget (only
    ///     `probe_success 0` and `probe_duration_seconds` are said then).
    ///   - facts: duration and success.
    /// - Returns: the text format's bytes.
    public static func render(_ report: URLReport?, _ facts: Facts) -> [UInt8] {
        var registry = Gauges()
        func set(_ name: String, _ help: String, _ labels: [(String, String)] = [], _ value: Double) {
            registry.set(name, help, labels, value)
        }
        set("probe_success", "1 when the technique the verdict recommends works.", [], facts.success ? 1 : 0)
        set("probe_duration_seconds", "How long the probe took, resolution included.", [], facts.seconds)
        guard let report else { return exposition(registry) }

        let primary = primaryAttempt(report)
        let hops = primary?.hops ?? []
        set(
            "probe_http_status_code", "The HTTP status of the last response of the recommended attempt (0 for none).",
            [], Double(primary?.status ?? 0))
        set(
            "probe_http_redirects", "Redirects the recommended attempt followed.", [],
            Double(max(hops.count - 1, 0)))
        set(
            "probe_http_version", "The HTTP version of the last response (1.1, 2).", [],
            primary?.httpVersion.flatMap(httpVersion) ?? 0)
        set(
            "probe_http_ssl", "1 when the last response came over TLS.", [],
            hops.last.map { $0.url.lowercased().hasPrefix("https:") ? 1 : 0 } ?? 0)
        for (phase, seconds) in httpPhases(hops) {
            set(
                "probe_http_duration_seconds", "Time of each phase of the recommended attempt, summed over redirects.",
                [("phase", phase)], seconds)
        }
        if let expiry = primary?.certificate?.chain.map(\.notAfter).min() {
            set(
                "probe_ssl_earliest_cert_expiry", "When the earliest certificate of the chain expires, in Unix time.",
                [], expiry.timeIntervalSince1970)
        }
        if let version = hops.last.flatMap(tlsVersion) {
            set("probe_tls_version_info", "The TLS version of the last response; always 1.", [("version", version)], 1)
        }
        if let ip = primary?.ip {
            set(
                "probe_ip_protocol", "4 or 6: the address family the recommended attempt connected over.", [],
                ip.family == .v6 ? 6 : 4)
            set(
                "probe_ip_addr_hash", "FNV-1a 32-bit hash of the address connected to, to see it change.", [],
                Double(fnv1a32(ip.text)))
        }
        set(
            "probe_dns_lookup_time_seconds", "How long the resolution the recommended attempt used took.", [],
            lookupSeconds(report.resolution, source: primary?.ipSource))

        for scenario in Scenario.allCases {
            guard let attempt = report.decidingAttempt(scenario) else { continue }
            let labels = [("scenario", scenario.rawValue)]
            set(
                "ipdirect_probe_scenario_success",
                "1 when the scenario got a 2xx or 3xx answer (or another as system DNS did).",
                labels,
                report.verdict.works.contains(scenario) || (scenario == .systemDNS && attempt.outcome == .ok) ? 1 : 0)
            set(
                "ipdirect_probe_scenario_status_code", "The HTTP status the scenario got (0 for none).", labels,
                Double(attempt.status ?? 0))
            for phase in AgentMetrics.Phase.allCases {
                guard let seconds = phase.seconds(attempt.timings) else { continue }
                set(
                    "ipdirect_probe_scenario_phase_seconds",
                    "Time from the start of the scenario's request to the end of a phase (curl's cumulative timings).",
                    labels + [("phase", phase.rawValue)], seconds)
            }
        }
        for attempt in report.attempts {
            // An IPAddress: a parsed literal, safe as a label.
            guard let ip = attempt.ip, let source = attempt.ipSource else { continue }
            set(
                "ipdirect_probe_address_info",
                "The address each scenario connected to and where it came from; always 1.",
                [("scenario", attempt.scenario.rawValue), ("address", ip.text), ("source", source.rawValue)], 1)
        }

        let resolution = report.resolution
        for value in Agreement.reported {
            set(
                "ipdirect_probe_dns_agreement", "1 for how system DNS and HTTPDNS compared, 0 for the others.",
                [("agreement", value.rawValue)], value == resolution.agreement ? 1 : 0)
        }
        set(
            "ipdirect_probe_httpdns_success", "1 when HTTPDNS gave addresses.", [],
            resolution.httpdns.error == nil ? 1 : 0)
        set(
            "ipdirect_probe_httpdns_lookup_seconds", "How long the HTTPDNS answer took (a cached answer takes none).",
            [], resolution.httpdns.ms / 1000)
        set(
            "ipdirect_probe_system_dns_lookup_seconds", "How long system DNS (or the chosen DNS server) took.", [],
            resolution.system.ms / 1000)
        return exposition(registry)
    }

    private static func exposition(_ registry: Gauges) -> [UInt8] { registry.text() }

    /// The gauges of one answer, written as swift-prometheus's registry writes them (`# HELP`,
    /// `# TYPE NAME gauge`, then each series, label values escaped), families in the order they
    /// were set. A registry per answer was 5 % of the agent's CPU under 100 /probe at once: a
    /// locked dictionary, a gauge object and an atomic per series, for text written once.
    struct Gauges {
        private var families: [(name: String, help: String, series: [(labels: [UInt8], value: Double)])] = []

        /// Sets a series; the same name and labels again replaces its value, as the registry's.
        mutating func set(_ name: String, _ help: String, _ labels: [(String, String)], _ value: Double) {
            var rendered: [UInt8] = []
            for (index, (key, text)) in labels.enumerated() {
                if index > 0 { rendered.append(UInt8(ascii: ",")) }
                rendered.append(contentsOf: key.utf8)
                rendered.append(contentsOf: #"=""#.utf8)
                for byte in text.utf8 {
                    switch byte {
                    case UInt8(ascii: "\\"): rendered.append(contentsOf: #"\\"#.utf8)
                    case UInt8(ascii: "\""): rendered.append(contentsOf: #"\""#.utf8)
                    case UInt8(ascii: "\n"): rendered.append(contentsOf: #"\n"#.utf8)
                    default: rendered.append(byte)
                    }
                }
                rendered.append(UInt8(ascii: "\""))
            }
            guard let family = families.firstIndex(where: { $0.name == name }) else {
                families.append((name, help, [(rendered, value)]))
                return
            }
            if let series = families[family].series.firstIndex(where: { $0.labels == rendered }) {
                families[family].series[series].value = value
            } else {
                families[family].series.append((rendered, value))
            }
        }

        /// The text format's bytes.
        func text() -> [UInt8] {
            var buffer: [UInt8] = []
            buffer.reserveCapacity(4096)
            for family in families {
                buffer.append(contentsOf: "# HELP \(family.name) ".utf8)
                for byte in family.help.utf8 {
                    if byte == UInt8(ascii: "\\") {
                        buffer.append(contentsOf: #"\\"#.utf8)
                    } else {
                        buffer.append(byte)
                    }
                }
                buffer.append(contentsOf: "\n# TYPE \(family.name) gauge\n".utf8)
                for series in family.series {
                    buffer.append(contentsOf: family.name.utf8)
                    if !series.labels.isEmpty {
                        buffer.append(UInt8(ascii: "{"))
                        buffer.append(contentsOf: series.labels)
                        buffer.append(UInt8(ascii: "}"))
                    }
                    buffer.append(contentsOf: " \(series.value)\n".utf8)
                }
            }
            return buffer
        }
    }

    /// The attempt blackbox's names describe: the recommended technique's, else the first that
    /// reached a server, else the first made.
    public static func primaryAttempt(_ report: URLReport) -> Attempt? {
        if let recommended = report.verdict.recommended, let attempt = report.decidingAttempt(recommended) {
            return attempt
        }
        return report.attempts.first { $0.outcome.reachedServer } ?? report.attempts.first { $0.outcome != .skipped }
    }

    /// blackbox's five phases from curl's cumulative timings, each hop's share summed: resolve,
    /// connect, tls, processing (request sent to first byte), transfer (first byte to end).
    static func httpPhases(_ hops: [Hop]) -> [(String, Double)] {
        var sums = [0.0, 0, 0, 0, 0]
        for timing in hops.map(\.timings) {
            let lookup = timing.nameLookup ?? 0
            let connect = timing.connect ?? lookup
            let tls = timing.tlsDone ?? connect
            let sent = max(timing.preTransfer ?? tls, tls)
            let firstByte = timing.firstByte ?? timing.total
            let ends = [lookup, connect, tls, firstByte, timing.total]
            let starts = [0, lookup, connect, sent, firstByte]
            for index in sums.indices { sums[index] += max(ends[index] - starts[index], 0) / 1000 }
        }
        return zip(["resolve", "connect", "tls", "processing", "transfer"], sums).map { ($0, $1) }
    }

    /// `HTTP/1.1` as 1.1, `HTTP/2` as 2.
    static func httpVersion(_ text: String) -> Double? {
        Double(text.hasPrefix("HTTP/") ? String(text.dropFirst(5)) : text)
    }

    /// The TLS version a hop used as blackbox labels it (`TLS 1.3`), from OpenSSL's name for it
    /// (`TLSv1.3`, the version libcurl's log names in "SSL connection using TLSv1.3 / ...").
    static func tlsVersion(_ hop: Hop) -> String? {
        guard let name = hop.tlsVersion, name.hasPrefix("TLSv") else { return nil }
        let number = name.utf8.dropFirst(4).prefix {
            $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
        }
        return number.isEmpty ? nil : "TLS \(String(decoding: number, as: UTF8.self))"
    }

    /// Seconds the resolution behind an address took: HTTPDNS's for its answers and the cache's,
    /// system DNS's for its own.
    static func lookupSeconds(_ resolution: HostResolution, source: IPSource?) -> Double {
        source == .system ? resolution.system.ms / 1000 : resolution.httpdns.ms / 1000
    }

    /// blackbox_exporter's `probe_ip_addr_hash`: FNV-1a, 32 bits, over the address as text.
    static func fnv1a32(_ text: String) -> UInt32 {
        text.utf8.reduce(UInt32(2_166_136_261)) { hash, byte in (hash ^ UInt32(byte)) &* 16_777_619 }
    }
}

extension Agreement {
    /// Every value, in the order the `agreement` label lists them.
    static let reported: [Agreement] = [.same, .overlap, .disjoint, .systemFailed, .httpdnsFailed, .bothFailed]
}

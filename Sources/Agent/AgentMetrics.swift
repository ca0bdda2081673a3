// The agent's Prometheus metrics, kept in a swift-prometheus registry: outcomes and phase times
// per target and scenario, HTTPDNS and cache health, certificate expiry; labels stay bounded.
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe
import Prometheus

/// A vantage-point label (`--label region=cn-hangzhou`), added to every metric and span.
public struct AgentLabel: Sendable, Hashable {
    public var name: String
    public var value: String

    /// The label names the agent's own metrics use; a vantage label may not take one.
    public static let reserved: Set<String> = [
        "target", "scenario", "outcome", "phase", "provider", "agreement", "event", "version", "exporter", "le",
        "reason", "resource",
    ]

    /// Parses `NAME=VALUE`.
    ///
    /// - Throws: a sentence saying what a label looks like, when `text` is not one.
    public init(parsing text: String) throws(AgentSettingError) {
        guard let equals = text.firstIndex(of: "=") else {
            throw AgentSettingError(.label, " takes NAME=VALUE, not '\(text)'")
        }
        let name = String(text[..<equals])
        let value = String(text[text.index(after: equals)...])
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic),
            name.unicodeScalars.allSatisfy({
                $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
            })
        else {
            throw AgentSettingError(
                .label, value: text, ": a label name is letters, digits and '_', and does not start with a digit")
        }
        guard !name.hasPrefix("__"), !Self.reserved.contains(name) else {
            throw AgentSettingError(
                .label, value: text,
                ": '\(name)' is a label of ipdirect's own; choose another name (region, carrier, site ...)")
        }
        self.name = name
        self.value = value
    }

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A setting of the agent that cannot work: the setting, the value given, and the sentence
/// around them, which each front end finishes with its own name for the setting.
public struct AgentSettingError: Error, Sendable, CustomStringConvertible {
    /// The setting that cannot work.
    public var setting: Setting
    /// The value it was given, when the sentence shows it.
    public var value: String?
    /// The sentence before the setting's name (`cannot open `) and after it (`: no such file`).
    let lead: String
    let rest: String

    public init(_ setting: Setting, value: String? = nil, _ rest: String) {
        self.init("", setting, value: value, rest)
    }

    /// The sentence with `lead` before the setting's name (`cannot open `).
    public init(_ lead: String, _ setting: Setting, value: String? = nil, _ rest: String) {
        self.lead = lead
        self.setting = setting
        self.value = value
        self.rest = rest
    }

    /// The sentence with the setting named in `voice`.
    public func sentence(_ voice: SettingVoice) -> String { lead + setting.named(voice, value: value) + rest }

    /// In the command line's words: the agent's settings are its flags, and the command line
    /// reports a wrong one when it starts.
    public var description: String { sentence(.commandLine) }
}

/// Where an export's failures are counted (`ipdirect_export_failures_total{exporter=...}`).
public enum AgentExporter: String, Sendable, CaseIterable {
    case otlp, jsonl
}

/// The agent's metrics. Every series carries the vantage labels; per-target series are taken
/// out of the registry when their target leaves the list, so a long-running agent whose list
/// changes does not grow without end.
public final class AgentMetrics: ReportExporter {
    /// The registry `/metrics` is rendered from.
    public let registry: PrometheusCollectorRegistry
    private let labels: [(String, String)]
    private let perTarget = Locked([String: [Series]]())
    /// The labels of the targets in force once a list has been reloaded (nil before: all are).
    /// `record` holds it for its whole body, so a report from a round that began before a reload
    /// cannot bring back a removed target's series after `keep(only:)` took them out.
    private let inForce = Locked<Set<String>?>(nil)
    /// The resolver cache's counters by event, each made at its first event and kept: asking the
    /// registry for one per event (a descriptor built, the registry's lock, its dictionary) was
    /// paid by every `/probe` (issue 34). They are never unregistered, so the kept one is the
    /// registry's.
    private let resolverEventCounters = Locked([ResolverEvent.Kind: Counter]())

    /// Phase-time buckets, in seconds: a LAN probe takes milliseconds, a bad carrier seconds.
    static let durationBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    private enum Series: @unchecked Sendable {
        case counter(Counter)
        case gauge(Gauge)
        case histogram(DurationHistogram)
    }

    /// The phases a histogram is kept for, named as the `phase` label says them.
    enum Phase: String, CaseIterable {
        case connect, tls
        case firstByte = "first_byte"
        case total

        func seconds(_ timings: PhaseTimings) -> Double? {
            let ms: Double? =
                switch self {
                case .connect: timings.connect
                case .tls: timings.tlsDone
                case .firstByte: timings.firstByte
                case .total: timings.total
                }
            return ms.flatMap { $0 > 0 ? $0 / 1000 : nil }
        }
    }

    /// - Parameters:
    ///   - labels: the vantage labels.
    ///   - version: the build, for `ipdirect_build_info`.
    public init(labels: [AgentLabel], version: String = IPDirectVersion.string) {
        registry = PrometheusCollectorRegistry()
        self.labels = labels.map { ($0.name, $0.value) }
        gauge("build_info", "", "Always 1; the labels say which ipdirect build is running.", [("version", version)])
            .set(to: 1.0)
        for exporter in AgentExporter.allCases {
            _ = counter(
                "export_failures", "total", "Records an exporter could not deliver.",
                [("exporter", exporter.rawValue)])
        }
        _ = counter("rounds", "total", "Probe rounds completed.", [])
        for shortage in ResourceShortage.allCases { _ = resourceErrors(shortage) }
    }

    // MARK: Instruments

    private func descriptor(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "ipdirect", metricName: name, unitName: unit, helpText: help)
    }

    func counter(_ name: String, _ unit: String, _ help: String, _ own: [(String, String)]) -> Counter {
        registry.makeCounter(descriptor: descriptor(name, unit, help), labels: own + labels)
    }

    func gauge(_ name: String, _ unit: String, _ help: String, _ own: [(String, String)]) -> Gauge {
        registry.makeGauge(descriptor: descriptor(name, unit, help), labels: own + labels)
    }

    private func histogram(
        _ name: String, _ unit: String, _ help: String, _ own: [(String, String)]
    )
        -> DurationHistogram
    {
        registry.makeDurationHistogram(
            descriptor: descriptor(name, unit, help), labels: own + labels, buckets: Self.durationBuckets)
    }

    /// Notes a per-target series so it can be taken out when the target goes.
    private func owned(_ target: String, _ series: Series) {
        perTarget.withLock { table in
            var list = table[target] ?? []
            let known = list.contains { existing in
                switch (existing, series) {
                case (.counter(let a), .counter(let b)): a === b
                case (.gauge(let a), .gauge(let b)): a === b
                case (.histogram(let a), .histogram(let b)): a === b
                default: false
                }
            }
            if !known { list.append(series) }
            table[target] = list
        }
    }

    // MARK: Recording

    /// Records one probed URL. A report that says nothing of its target (attempts that could not
    /// start for want of the agent's own descriptors or memory, and nothing else worked) leaves
    /// the target's series at their last values, so no alert pages for a target that is fine.
    ///
    /// - Parameters:
    ///   - report: what the probe found.
    ///   - context: the target it was for.
    public func record(_ report: URLReport, context: ReportContext) {
        guard report.judgesTarget else { return }
        inForce.withLock { wanted in
            guard wanted?.contains(context.target) ?? true else { return }
            recordSeries(report, target: context.target)
        }
    }

    /// Nothing to do: `/metrics` is read from the registry as it is.
    public func finish(within budget: Duration) async {}

    /// Writes the series of one report.
    private func recordSeries(_ report: URLReport, target name: String) {
        let targetLabel = [("target", name)]
        for scenario in Scenario.allCases {
            guard let attempt = report.decidingAttempt(scenario), attempt.outcome != .skipped else { continue }
            let scenarioLabels = targetLabel + [("scenario", scenario.rawValue)]
            let outcomes = counter(
                "probe_outcomes", "total", "Probe outcomes per target and scenario, one per round.",
                scenarioLabels + [("outcome", attempt.outcome.rawValue)])
            outcomes.increment()
            owned(name, .counter(outcomes))
            if !attempt.hops.isEmpty {
                for phase in Phase.allCases {
                    guard let seconds = phase.seconds(attempt.timings) else { continue }
                    let histogram = histogram(
                        "probe_phase", "seconds",
                        "Time from the start of a request to the end of a phase (curl's cumulative timings).",
                        scenarioLabels + [("phase", phase.rawValue)])
                    histogram.record(.nanoseconds(Int64(seconds * 1e9)))
                    owned(name, .histogram(histogram))
                }
            }
            // A timestamp in seconds, as blackbox's probe_ssl_earliest_cert_expiry: promtool's lint
            // wants base units, and an alert subtracts time() from it.
            if let leaf = attempt.certificate?.chain.first {
                let expiry = gauge(
                    "certificate_expiry_timestamp", "seconds",
                    "When the certificate the server presented expires, in Unix time.", scenarioLabels)
                expiry.set(to: leaf.notAfter.timeIntervalSince1970)
                owned(name, .gauge(expiry))
            }
        }
        let working = gauge(
            "target_direct_working", "", "1 when at least one IP-direct technique worked in the last round.",
            targetLabel)
        working.set(to: report.verdict.works.isEmpty ? 0.0 : 1.0)
        owned(name, .gauge(working))

        let agreement = report.resolution.agreement
        for value in Agreement.reported {
            let series = gauge(
                "dns_agreement", "", "1 for how system DNS and HTTPDNS compared in the last round, 0 otherwise.",
                targetLabel + [("agreement", value.rawValue)])
            series.set(to: value == agreement ? 1.0 : 0.0)
            owned(name, .gauge(series))
        }

        let httpdns = report.resolution.httpdns
        // Each family's TTL apart, as the SDKs keep them: an AAAA that expires first shows as such.
        for family in IPFamily.allCases {
            guard let seconds = httpdns.ttl[family] else { continue }
            let ttl = gauge(
                "httpdns_ttl", "seconds", "The TTL HTTPDNS gave the target's host in the last round, per family.",
                targetLabel + [("family", family.rawValue)])
            ttl.set(to: Double(seconds))
            owned(name, .gauge(ttl))
        }
        // Only a fresh answer measures the service; a cache hit measures the cache.
        if httpdns.source == .httpdns || httpdns.error != nil {
            let provider = [("provider", httpdns.provider.rawValue)]
            if httpdns.error != nil {
                counter("httpdns_errors", "total", "HTTPDNS queries that failed, per provider.", provider).increment()
            } else {
                histogram("httpdns_answer", "seconds", "How long the HTTPDNS service took to answer.", provider)
                    .record(.nanoseconds(Int64(httpdns.ms * 1e6)))
            }
        }
    }

    /// Counts one thing the resolver cache did.
    public func record(_ event: ResolverEvent) {
        let counter = resolverEventCounters.withLock { counters in
            if let kept = counters[event.kind] { return kept }
            let made = self.counter(
                "resolver_cache_events", "total",
                "What the resolver cache did: hit, miss, expired (an expired answer reused), refresh, fallback, error.",
                [("event", event.kind.rawValue)])
            counters[event.kind] = made
            return made
        }
        counter.increment()
    }

    /// Counts records an exporter could not deliver.
    public func exportFailed(_ exporter: AgentExporter, count: Int = 1) {
        counter(
            "export_failures", "total", "Records an exporter could not deliver.", [("exporter", exporter.rawValue)]
        ).increment(by: Int64(count))
    }

    /// Records a finished round.
    ///
    /// - Parameters:
    ///   - seconds: how long it took.
    ///   - targets: how many targets it probed.
    public func roundFinished(seconds: Double, targets: Int) {
        counter("rounds", "total", "Probe rounds completed.", []).increment()
        gauge("round_duration", "seconds", "How long the last round took.", []).set(to: seconds)
        gauge("targets", "", "Targets in the list in force.", []).set(to: Double(targets))
    }

    /// Takes out the series of targets no longer in the list.
    ///
    /// - Parameter targets: the list now in force.
    public func keep(only targets: [AgentTarget]) {
        let wanted = Set(targets.map(\.label))
        inForce.withLock { inForce in
            inForce = wanted
            let gone = perTarget.withLock { table -> [Series] in
                let names = table.keys.filter { !wanted.contains($0) }
                return names.flatMap { table.removeValue(forKey: $0) ?? [] }
            }
            for series in gone {
                switch series {
                case .counter(let counter): registry.unregisterCounter(counter)
                case .gauge(let gauge): registry.unregisterGauge(gauge)
                case .histogram(let histogram): registry.unregisterDurationHistogram(histogram)
                }
            }
        }
    }

    /// The exposition text, as `/metrics` serves it.
    public func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}

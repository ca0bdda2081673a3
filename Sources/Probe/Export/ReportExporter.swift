// The one seam every export goes through: each probed URL's report in, in whatever form the
// exporter writes (a file, a metrics registry, traces), and a finish that completes and flushes it.
import FoundationEssentials

/// What an exporter is told beside the report: which target it was for and when its probe began.
public struct ReportContext: Sendable, Equatable {
    /// The name the target goes by in series and spans: `host`, or `host:port` when the agent's
    /// target names a port (the URL's path never becomes a label).
    public var target: String
    /// When the probe of the URL began, its resolution included.
    public var started: Date

    public init(target: String, started: Date) {
        self.target = target
        self.started = started
    }

    /// The context of a report made outside the agent (`probe`, the console): the report's host,
    /// and the start of its first request (now, when no request was made).
    public init(_ report: URLReport) {
        target = report.host
        started = report.attempts.compactMap { $0.hops.first?.startedAt }.min() ?? Date()
    }
}

/// Takes each probed URL's report as it is made, and completes its output when told to finish.
///
/// `ReportWriter` (the table, a JSON array, JSON Lines, HAR) conforms, and so do the agent's
/// metrics, traces and rotating JSON Lines; `probe`, the console's export and the agent hand
/// reports to exporters only through this protocol.
///
/// To add an exporter (Prometheus remote write, say):
/// 1. Write a type here in Probe/Export when any command may write it, or in Agent when it
///    needs the agent's registry or labels, and conform it. `record` gets every report,
///    from several tasks at once, and must neither block on the network nor throw: queue what
///    is slow, count and report what fails (the agent counts in
///    `ipdirect_export_failures_total`). Reports from the engine are redacted already unless
///    `--no-redact`; an exporter that may get others redacts them itself (`Redaction.report`).
///    `finish` completes the output (closes a document, sends what is queued) within the time
///    it is given; later reports are ignored.
/// 2. Hand it over where it is wanted: for the agent, start it in `AgentExporters` (the
///    `agent` command), whose list goes to `AgentSinks(metrics:exporters:)`; for `probe`, the
///    writers `ProbeBatch` opens; for the console's `e`, `LiveConsoleEngine.export`.
/// 3. Test it against the lab through the command that uses it, as `ExportTests` and
///    `AgentLoopTests` do.
public protocol ReportExporter: Sendable {
    /// Takes one report.
    ///
    /// - Parameters:
    ///   - report: what the probe found for one URL.
    ///   - context: which target it was for and when its probe began.
    func record(_ report: URLReport, context: ReportContext)

    /// Completes the output and flushes what is pending; idempotent.
    ///
    /// - Parameter budget: how long the exporter may take (a collector that does not answer
    ///   costs what is still queued, not the caller's time).
    func finish(within budget: Duration) async
}

extension ReportExporter {
    /// Takes one report made outside the agent, its context read from the report.
    public func record(_ report: URLReport) {
        record(report, context: ReportContext(report))
    }
}

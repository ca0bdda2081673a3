// The `--host` names at the end of a doctor run: each probed every IP-direct way, kept as the
// verdict and one result per attempt, so one report says both "the network" and "this host".

import CurlTransport
import FoundationEssentials
import NameResolution
import Probe

/// One `--host` name's probe, as the doctor's report keeps it.
public struct DoctorHostProbe: Sendable, Codable, Equatable {
    /// One attempt of the probe: a scenario against one address.
    public struct Attempt: Sendable, Codable, Equatable {
        public var scenario: Scenario
        /// The address connected to; nil for an attempt without one (skipped, no address).
        public var ip: String?
        /// Where the address came from: httpdns, system or cache.
        public var ipSource: IPSource?
        public var outcome: Outcome
        /// The HTTP status, when an answer came.
        public var status: Int?
        /// Why it failed, in words; nil when it worked or was skipped without a reason.
        public var error: String?

        public init(
            scenario: Scenario, ip: String?, ipSource: IPSource?, outcome: Outcome, status: Int?, error: String?
        ) {
            self.scenario = scenario
            self.ip = ip
            self.ipSource = ipSource
            self.outcome = outcome
            self.status = status
            self.error = error
        }
    }

    /// The name as given with `--host`.
    public var host: String
    /// The URL probed; nil when it could not be probed at all.
    public var url: String?
    /// pass when some direct technique works, fail when none does or the probe did not finish.
    public var status: DoctorStatus
    /// The probe's verdict sentence, or why there is none.
    public var verdict: String
    /// The technique to use; nil when none works.
    public var recommended: Scenario?
    /// Every direct technique that worked.
    public var works: [Scenario]
    public var attempts: [Attempt]

    public init(
        host: String, url: String?, status: DoctorStatus, verdict: String, recommended: Scenario? = nil,
        works: [Scenario] = [], attempts: [Attempt] = []
    ) {
        self.host = host
        self.url = url
        self.status = status
        self.verdict = verdict
        self.recommended = recommended
        self.works = works
        self.attempts = attempts
    }

    /// What a finished probe found for `host`.
    public init(host: String, report: URLReport) {
        self.init(
            host: host, url: report.url, status: report.verdict.works.isEmpty ? .fail : .pass,
            verdict: report.verdict.summary, recommended: report.verdict.recommended, works: report.verdict.works,
            attempts: report.attempts.map {
                Attempt(
                    scenario: $0.scenario, ip: $0.ip?.text, ipSource: $0.ipSource, outcome: $0.outcome,
                    status: $0.status, error: $0.error?.sentence)
            })
    }
}

/// Probes the `--host` names within what is left of the run's bound.
public enum DoctorHostProbes {
    /// Probes every name at once with `engine`, each as `https://NAME/` unless it is a URL.
    ///
    /// - Parameters:
    ///   - hosts: the names (or URLs) in the order given.
    ///   - target: where to send each name (the lab's port for a lab name); the name itself by default.
    ///   - engine: the probe engine, resolving through the run's provider.
    ///   - limit: the time the probes have; a probe still running then is a fail that says so.
    /// - Returns: one probe per name, in the order given.
    public static func run(
        _ hosts: [String], target: @escaping @Sendable (String) -> String = { $0 }, engine: ProbeEngine,
        within limit: Duration
    ) async -> [DoctorHostProbe] {
        await withTaskGroup(of: (Int, DoctorHostProbe).self) { group in
            for (index, host) in hosts.enumerated() {
                group.addTask {
                    let probed = await Deadline.first(within: limit) {
                        await engine.report(target(host)) { _ in }
                    }
                    switch probed {
                    case .some(.some(let report)):
                        return (index, DoctorHostProbe(host: host, report: report))
                    case .some(.none):
                        let verdict = "\(host) is not a URL or host name that can be probed."
                        return (index, DoctorHostProbe(host: host, url: nil, status: .fail, verdict: verdict))
                    case .none:
                        let seconds = ResolutionError.format(limit.inSeconds)
                        return (
                            index,
                            DoctorHostProbe(
                                host: host, url: nil, status: .fail,
                                verdict: "The probe of \(host) did not finish within the \(seconds) s left of the run."
                            )
                        )
                    }
                }
            }
            var probes: [(Int, DoctorHostProbe)] = []
            for await probe in group { probes.append(probe) }
            return probes.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }
}

// Absent values are null in the report's JSON, as in probe's: a script reads `"ip": null`.
extension DoctorHostProbe: AbsentAsNull {}
extension DoctorHostProbe.Attempt: AbsentAsNull {}

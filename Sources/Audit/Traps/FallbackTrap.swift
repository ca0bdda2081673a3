// The fallback traps: HTTPDNS fails for the name until its origin is reached (HTTP 500 at once, or
// no answer for 6 s: a time-out), so the app must fall back to the system DNS (the lab's DNS server
// sees the query), and once the request arrived HTTPDNS recovers and must be used again.
import Lab

/// HTTPDNS failing (an error, or a time-out) leads to system DNS, and back to HTTPDNS once it recovers.
public struct FallbackTrap: AuditTrap {
    /// The TTL of the name's answers (HTTPDNS and system DNS alike), in seconds.
    public static let ttl = 2
    /// How long the time-out trap's HTTPDNS holds each answer, in seconds: past the few seconds
    /// the SDKs wait.
    public static let hold = 6.0

    public let id: AuditTrapID
    /// Seconds each failing HTTPDNS answer is held; 0 for an error at once.
    let delay: Double

    /// The trap whose HTTPDNS answers an error at once, or (`timesOut`) nothing for `hold` seconds.
    public init(timesOut: Bool = false) {
        id = timesOut ? .fallbackTimeout : .fallback
        delay = timesOut ? Self.hold : 0
    }

    public var exercises: String {
        "When HTTPDNS \(delay > 0 ? "does not answer in time" : "answers an error") the app falls back to the system DNS, and uses HTTPDNS again once it recovers."
    }

    public var asks: String {
        "Request the URL through your IP-direct path (HTTPDNS \(delay > 0 ? "holds its answer \(Int(Self.hold)) s" : "fails") for it: fall back to the system DNS, which must be the lab's DNS server), then again after \(Self.ttl) s (HTTPDNS answers by then)."
    }

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [
            LabExtraName(
                record: run.record(run.name(id), ttl: Self.ttl), failsHTTPDNS: true, failureDelay: delay)
        ]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let name = run.name(id)
        let queries = evidence.queries(for: name)
        let failed = queries.filter { $0.status != 200 }
        let requests = evidence.requests(at: name)
        let systemDNS = evidence.dnsQueries(for: name)
        guard !failed.isEmpty || !requests.isEmpty else { return notExercised(evidence, names: [name]) }
        let advice =
            "When HTTPDNS errs or times out, resolve the name with the system resolver (getaddrinfo, the platform's default path) and send the request anyway, as the SDKs' degradation rule says; ask HTTPDNS again once the fallback answer's TTL runs out."
        guard let firstRequest = requests.first else {
            let tail = systemDNS.isEmpty ? "asked no system DNS" : "asked the system DNS but never connected"
            return finding(
                .fail,
                "HTTPDNS \(delay > 0 ? "did not answer in time" : "failed") \(failed.count) time\(failed.count == 1 ? "" : "s") and the app \(tail): no fallback.",
                advice: advice, evidence: evidence, names: [name])
        }
        let fellBack = systemDNS.contains { $0.time <= firstRequest.time }
        if !fellBack {
            return finding(
                .fail,
                "A request arrived with no system DNS query before it after HTTPDNS failed: the address came from somewhere else (a hard-coded IP?).",
                advice: advice, evidence: evidence, names: [name])
        }
        let returned = queries.contains { query in
            query.status == 200 && query.time > firstRequest.time
                && requests.contains { $0.time >= query.time }
        }
        if !returned {
            return finding(
                .warn,
                "The app fell back to the system DNS and reached the origin, but never used HTTPDNS again after it recovered.",
                advice:
                    "Go back to HTTPDNS once the fallback answer's TTL (\(Self.ttl) s here) runs out; a fallback must not become permanent.",
                evidence: evidence, names: [name])
        }
        return finding(
            .pass, "HTTPDNS failed, the app fell back to the system DNS, and returned to HTTPDNS once it recovered.",
            evidence: evidence, names: [name])
    }
}

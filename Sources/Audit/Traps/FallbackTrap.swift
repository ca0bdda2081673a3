// The fallback trap: HTTPDNS fails (HTTP 500) for the name until its origin is reached, so the
// app must fall back to the system DNS (the lab's DNS server sees the query), and once the request
// arrived HTTPDNS recovers and the app must use it again after the fallback answer's TTL.
import Lab

/// HTTPDNS failing leads to system DNS, and back to HTTPDNS once it recovers.
public struct FallbackTrap: AuditTrap {
    /// The TTL of the name's answers (HTTPDNS and system DNS alike), in seconds.
    public static let ttl = 2

    public let id = AuditTrapID.fallback
    public let exercises =
        "When HTTPDNS fails the app falls back to the system DNS, and uses HTTPDNS again once it recovers."
    public let asks =
        "Request the URL through your IP-direct path (HTTPDNS fails for it, so fall back to the system DNS, which must be the lab's DNS server), then again after \(FallbackTrap.ttl) s (HTTPDNS answers by then)."

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [LabExtraName(record: run.record(run.name(id), ttl: Self.ttl), failsHTTPDNS: true)]
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
                "HTTPDNS failed \(failed.count) time\(failed.count == 1 ? "" : "s") and the app \(tail): no fallback.",
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

// The TTL trap: the name's answer lives a few seconds, so an app that keeps it forever (or asks
// HTTPDNS before every request) shows in the times of its queries and requests.
import FoundationEssentials
import Lab

/// A short TTL is honoured: asked again after it, not before every request.
public struct TTLTrap: AuditTrap {
    /// The answer's TTL, in seconds.
    public static let ttl = 3
    /// Slack for a query and a request the clocks place a moment apart.
    static let slack = 0.5

    public let id = AuditTrapID.ttl
    public let exercises = "A short TTL (\(TTLTrap.ttl) s) is honoured: asked again after it, not on every request."
    public let asks =
        "Request the URL twice within \(TTLTrap.ttl) s, then again more than \(TTLTrap.ttl) s after the first, through your IP-direct path."

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [LabExtraName(record: run.record(run.name(id), ttl: Self.ttl))]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let name = run.name(id)
        let requests = evidence.requests(at: name).sorted { $0.time < $1.time }
        let answers = evidence.queries(for: name).filter { $0.status == 200 }.sorted { $0.time < $1.time }
        let ttl = Double(Self.ttl)
        guard let first = requests.first, let last = requests.last, last.time.timeIntervalSince(first.time) > ttl
        else { return notExercised(evidence, names: [name]) }
        // Each request's answer: the latest query before it.
        let stale = requests.first { request in
            guard let answer = answers.last(where: { $0.time <= request.time }) else { return true }
            return request.time.timeIntervalSince(answer.time) > ttl + Self.slack
        }
        if let stale {
            let seen =
                answers.contains(where: { $0.time <= stale.time })
                ? "A request at \(evidence.at(stale.time)) used an answer older than its \(Self.ttl) s TTL."
                : "A request at \(evidence.at(stale.time)) came with no HTTPDNS answer before it (an address kept from elsewhere)."
            return finding(
                .fail, seen,
                advice:
                    "Cache each answer for its TTL and ask again when it runs out (the SDKs' cache does; a --resolve or a pinned IP must be refreshed).",
                evidence: evidence, names: [name])
        }
        // Two requests within the TTL with a query between them: asked on every request.
        let eager = zip(requests, requests.dropFirst()).contains { earlier, later in
            later.time.timeIntervalSince(earlier.time) < ttl
                && answers.contains { $0.time > earlier.time && $0.time <= later.time }
        }
        if eager {
            return finding(
                .warn, "The app asked HTTPDNS again for a request within the answer's \(Self.ttl) s TTL.",
                advice: "Cache each answer for its TTL instead of asking HTTPDNS before every request.",
                evidence: evidence, names: [name])
        }
        return finding(
            .pass, "The answer was reused within its \(Self.ttl) s TTL and asked for again after it.",
            evidence: evidence, names: [name])
    }
}

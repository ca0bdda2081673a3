// The Host trap: the origin listens on a port that is not 443, so the Host header must carry the
// name and the port (RFC 9110 7.2), not the IP and not the name alone.
import Lab

/// `Host: NAME:PORT` on every request.
public struct HostTrap: AuditTrap {
    public let id = AuditTrapID.host
    public let exercises = "The Host header carries the name and the non-default port."
    public let asks = "Request the URL once through your IP-direct path; it must succeed."

    public func names(_ run: AuditNames) -> [LabExtraName] { [LabExtraName(record: run.record(run.name(id)))] }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let name = run.name(id)
        let requests = evidence.requests(at: name)
        guard !requests.isEmpty else { return notExercised(evidence, names: [name]) }
        let expected = "\(name):\(evidence.port(of: name) ?? 443)"
        let advice =
            "Keep the name and port in the URL and resolve below it (CURLOPT_RESOLVE, a Node lookup, an adapter); if you must rewrite the URL to the IP, set Host to \(expected) with the port."
        if let wrong = requests.first(where: { $0.host.lowercased() != expected }) {
            let seen: String
            if wrong.host.isEmpty {
                seen = "A request arrived without a Host header."
            } else if wrong.host.lowercased() == name {
                seen =
                    "A request arrived with Host \(wrong.host), without the port \(expected.split(separator: ":").last ?? "")."
            } else {
                seen = "A request arrived with Host \(wrong.host) instead of \(expected)."
            }
            return finding(.fail, seen, advice: advice, evidence: evidence, names: [name])
        }
        return finding(.pass, "Every request arrived with Host \(expected).", evidence: evidence, names: [name])
    }
}

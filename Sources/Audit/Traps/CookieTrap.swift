// The cookie trap: the name sets a cookie, and another name on the same IP is served beside it, so
// a cookie stored for the IP (not the name) is sent to the other name, or lost.
import Lab

/// A cookie set for the name comes back to it and goes to no other name on the same IP.
public struct CookieTrap: AuditTrap {
    public let id = AuditTrapID.cookie
    public let exercises =
        "A cookie set for the name comes back to that name and is not sent to another name on the same IP."
    public let asks =
        "Request the URL twice, then the other name's URL (cookie-other) once, through your IP-direct path with your cookie store."

    func otherName(_ run: AuditNames) -> String { run.name("cookie-other") }
    func cookie(_ run: AuditNames) -> String { "audit-\(run.token)=session" }

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [
            LabExtraName(record: run.record(run.name(id)), behaviour: .setsCookie(cookie(run))),
            LabExtraName(record: run.record(otherName(run))),
        ]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let name = run.name(id)
        let other = otherName(run)
        let names = [name, other]
        let urls = names.compactMap { evidence.urls[$0] }
        let requests = evidence.requests(at: name)
        guard requests.count >= 2 else {
            var finding = notExercised(evidence, names: names)
            finding.urls = urls
            return finding
        }
        let advice =
            "Store cookies for the name, not the IP: keep the name in the URL and resolve below it (CURLOPT_RESOLVE, a Node lookup, an adapter), or on Apple platforms set and read HTTPCookieStorage for the original URL when the request goes to the IP."
        let marker = "audit-\(run.token)="
        if let leak = evidence.requests(at: other).first(where: { $0.cookie?.contains(marker) == true }) {
            return finding(
                .fail, "The cookie set for \(name) was sent to \(other) on the same IP (\(leak.cookie ?? "")).",
                advice: advice, evidence: evidence, names: names, urls: urls)
        }
        if !requests.dropFirst().contains(where: { $0.cookie?.contains(marker) == true }) {
            return finding(
                .fail, "The cookie set for \(name) never came back to it.", advice: advice, evidence: evidence,
                names: names, urls: urls)
        }
        if evidence.requests(at: other).isEmpty {
            return finding(
                .warn, "The cookie came back to \(name), but \(other) was never requested, so a leak went unchecked.",
                advice: asks, evidence: evidence, names: names, urls: urls)
        }
        return finding(
            .pass, "The cookie came back to \(name) and was not sent to \(other) on the same IP.", evidence: evidence,
            names: names, urls: urls)
    }
}

// The redirect trap: the first name answers 302 to another name whose HTTPDNS answer, LocalDNS
// answer and the first name's IP are three different addresses (on loopback) of one origin, so the
// address the followed request lands on tells how the app resolved it.
import Lab

/// A redirect to another host is resolved again through HTTPDNS.
public struct RedirectTrap: AuditTrap {
    /// The target's HTTPDNS answer on loopback (the first name's is 127.0.0.1, LocalDNS's the
    /// lab's hijack address, 127.0.0.2).
    static let targetAddress = "127.0.0.4"

    public let id = AuditTrapID.redirect
    public let exercises =
        "A redirect to another host is resolved again through HTTPDNS, not sent to the first host's IP nor resolved by the system DNS."
    public let asks =
        "Request the URL through your IP-direct path and follow its redirect to the other host the same way; it must succeed."

    func target(_ run: AuditNames) -> String { run.name("redirect-target") }

    public func names(_ run: AuditNames) -> [LabExtraName] {
        var target = run.record(target(run), ipv4: run.onLoopback ? [Self.targetAddress] : nil)
        var addresses: [String] = []
        if run.onLoopback {
            target.localDNS = .hijack
            addresses = [run.listen, LabLocalDNS.hijackAddress, Self.targetAddress]
        }
        return [
            LabExtraName(record: run.record(run.name(id)), behaviour: .redirect(to: self.target(run))),
            LabExtraName(record: target, addresses: addresses),
        ]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let first = run.name(id)
        let target = target(run)
        let names = [first, target]
        guard !evidence.requests(at: first).isEmpty else { return notExercised(evidence, names: names) }
        let advice =
            "Resolve the redirect's host through HTTPDNS before following it: handle the redirect yourself (URLSessionTaskDelegate willPerformHTTPRedirection, CURLOPT_FOLLOWLOCATION off with a new CURLOPT_RESOLVE entry, a Node lookup that every request goes through) instead of reusing the first IP or the system resolver."
        let asked = !evidence.queries(for: target).filter { $0.status == 200 }.isEmpty
        let viaLocalDNS = !evidence.dnsQueries(for: target).isEmpty
        let landed = evidence.requests(at: target)
        let handshakes = evidence.handshakes(at: target)
        let addresses = Set(landed.compactMap(\.localAddress) + handshakes.compactMap(\.localAddress))
        if run.onLoopback, addresses.contains(run.listen) {
            return finding(
                .fail, "The redirect was followed to the first host's IP \(run.listen), not to \(target)'s own.",
                advice: advice, evidence: evidence, names: names)
        }
        if run.onLoopback, addresses.contains(LabLocalDNS.hijackAddress) {
            return finding(
                .fail,
                "The redirect was followed to \(LabLocalDNS.hijackAddress), the system DNS (LocalDNS) answer, not HTTPDNS's \(Self.targetAddress).",
                advice: advice, evidence: evidence, names: names)
        }
        if !landed.isEmpty && asked {
            return finding(
                .pass, "The redirect to \(target) was resolved through HTTPDNS and landed on its answer.",
                evidence: evidence, names: names)
        }
        if !landed.isEmpty {
            return finding(
                .fail, "The redirect reached \(target) without an HTTPDNS query for it.", advice: advice,
                evidence: evidence, names: names)
        }
        if viaLocalDNS && !asked {
            return finding(
                .fail,
                "The app asked the system DNS (LocalDNS) for \(target), not HTTPDNS, and the request did not arrive.",
                advice: advice, evidence: evidence, names: names)
        }
        return finding(
            .fail, "The redirect to \(target) was not followed through HTTPDNS: no request reached it.",
            advice: advice, evidence: evidence, names: names)
    }
}

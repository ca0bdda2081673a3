// The SNI trap: a shared-IP origin (as a CDN's) presents the name's certificate only when the
// ClientHello's SNI asks for the name, and another site's otherwise.
import Lab

/// The SNI must carry the name: the origin records the SNI of every handshake and request.
public struct SNITrap: AuditTrap {
    public let id = AuditTrapID.sni
    public let exercises =
        "The TLS SNI carries the name, so a shared-IP origin (a CDN) presents the right site's certificate."
    public let asks = "Request the URL once through your IP-direct path; it must succeed."

    func sharedName(_ run: AuditNames) -> String { run.name("shared") }

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [LabExtraName(record: run.record(run.name(id)), certificate: .bySNI(otherName: sharedName(run)))]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let name = run.name(id)
        let advice =
            "Send the name as SNI while connecting to the IP: with libcurl use CURLOPT_RESOLVE (curl --resolve) and keep the name in the URL; on Apple platforms keep the host in the URL and resolve below it; in Node give the agent a lookup; in Python wrap the socket with server_hostname=host."
        let requests = evidence.requests(at: name)
        if let wrong = requests.first(where: { $0.sni?.lowercased() != name }) {
            return finding(
                .fail,
                "A request arrived with SNI \(wrong.sni ?? "none"): the origin presented \(sharedName(run))'s certificate and the app used it.",
                advice: advice, evidence: evidence, names: [name])
        }
        if !requests.isEmpty {
            return finding(
                .pass, "Every request arrived with SNI \(name).", evidence: evidence, names: [name])
        }
        if let bare = evidence.handshakes(at: name).first(where: { $0.sni?.lowercased() != name }) {
            return finding(
                .fail,
                "A handshake arrived with SNI \(bare.sni ?? "none"): the shared-IP origin presented another site's certificate and the request never went.",
                advice: advice, evidence: evidence, names: [name])
        }
        return notExercised(evidence, names: [name])
    }
}

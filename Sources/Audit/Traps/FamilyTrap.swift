// The address-family trap: one name answers an IPv6 address alone (an IPv6-only network, as App
// Review's NAT64), another both families, so an app that only ever uses IPv4 answers is caught.
import Lab

/// An IPv6-only answer is used, and the family a dual-stack answer led to is shown.
public struct FamilyTrap: AuditTrap {
    public let id = AuditTrapID.family
    public let exercises =
        "An IPv6-only answer is used (an IPv6-only network), and a dual-stack answer leads to a working family."
    public let asks =
        "Request the URL (its name has an IPv6 address only), then the dual-stack name's URL, through your IP-direct path."

    func dualName(_ run: AuditNames) -> String { run.name("dual") }

    public func names(_ run: AuditNames) -> [LabExtraName] {
        guard run.onLoopback else {
            return [LabExtraName(record: run.record(run.name(id))), LabExtraName(record: run.record(dualName(run)))]
        }
        return [
            LabExtraName(
                record: LabZoneRecord(name: run.name(id), ipv4: [], ipv6: ["::1"], ttl: 60), addresses: ["::1"]),
            LabExtraName(
                record: LabZoneRecord(name: dualName(run), ipv4: [run.listen], ipv6: ["::1"], ttl: 60),
                addresses: [run.listen, "::1"]),
        ]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let only = run.name(id)
        let dual = dualName(run)
        let names = [only, dual]
        let urls = names.compactMap { evidence.urls[$0] }
        let reached = evidence.requests(at: only)
        let dualFamilies = Set(evidence.requests(at: dual).compactMap(\.localAddress)).sorted()
        let dualSeen =
            dualFamilies.isEmpty
            ? "the dual-stack name was not requested"
            : "the dual-stack name over \(dualFamilies.joined(separator: " and "))"
        if !reached.isEmpty {
            return finding(
                .pass, "The IPv6-only name was reached over IPv6; \(dualSeen).", evidence: evidence, names: names,
                urls: urls)
        }
        if !evidence.queries(for: only).isEmpty || !evidence.handshakes(at: only).isEmpty {
            return finding(
                .fail,
                "HTTPDNS answered the IPv6-only name and no request reached it: the app used IPv4 answers alone (or asked for A records only); \(dualSeen).",
                advice:
                    "Ask HTTPDNS for both families (alicloud query=4,6, v2 q=4,6, DoH type=AAAA) and connect to an IPv6 answer when there is no IPv4 one, as on an IPv6-only network with NAT64.",
                evidence: evidence, names: names, urls: urls)
        }
        var finding = notExercised(evidence, names: names)
        finding.urls = urls
        return finding
    }
}

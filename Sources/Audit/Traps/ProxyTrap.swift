// The proxy trap: the setup says a proxy is configured (the audit's recording proxy), so the app
// must send the request through it naming the host, not go IP-direct around it or through it.
import Lab

/// With a proxy configured, IP-direct is skipped: the request goes through the proxy with
/// `CONNECT NAME:PORT` (the SDK guides' rule), never straight to the origin nor to the IP.
public struct ProxyTrap: AuditTrap {
    public let id = AuditTrapID.proxy
    public let exercises =
        "With a proxy configured, the request goes through it with CONNECT naming the host: IP-direct is skipped."
    public let asks =
        "Request the URL once as your app does when the user has configured the HTTP proxy in the setup's `proxy`."

    public func names(_ run: AuditNames) -> [LabExtraName] { [LabExtraName(record: run.record(run.name(id)))] }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let name = run.name(id)
        let requests = evidence.requests(at: name)
        guard !requests.isEmpty else { return notExercised(evidence, names: [name]) }
        let port = evidence.port(of: name) ?? 443
        let tunnels = evidence.tunnels(to: port).filter { $0.status == 200 }
        let advice =
            "When the user has configured a proxy, skip IP-direct: send the request to the proxy with the original URL (CONNECT \(name):\(port)) and let the proxy resolve the name, as the HTTPDNS SDK guides say."
        let direct = requests.filter { request in
            !tunnels.contains { $0.fromPort != nil && $0.fromPort == request.remotePort }
        }
        if !direct.isEmpty {
            return finding(
                .fail,
                "\(direct.count) of \(requests.count) requests arrived at the origin directly, around the configured proxy.",
                advice: advice, evidence: evidence, names: [name])
        }
        let used = tunnels.filter { tunnel in requests.contains { $0.remotePort == tunnel.fromPort } }
        if let byIP = used.first(where: { $0.host != name }) {
            return finding(
                .fail,
                "The request went through the proxy with CONNECT \(byIP.target): IP-direct through the proxy, which then cannot apply its own policy to the name.",
                advice: advice, evidence: evidence, names: [name])
        }
        return finding(
            .pass, "Every request came through the proxy with CONNECT \(name):\(port).", evidence: evidence,
            names: [name])
    }
}

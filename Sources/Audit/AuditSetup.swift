// What an app under audit needs, as `ipdirect audit` prints it: the lab's HTTPDNS endpoints in
// every format (NAME stands for the name asked), the system DNS, the CA, the token and the traps.
import FoundationEssentials
import Lab

/// The endpoints, CA, token and trap URLs of one audit run.
public struct AuditSetup: Sendable, Codable, Equatable {
    /// One trap as the app meets it.
    public struct Trap: Sendable, Codable, Equatable {
        public var trap: AuditTrapID
        /// The URL the app requests (the first of `urls`).
        public var url: String
        /// Every URL the trap uses (the redirect's target, the cookie's other name).
        public var urls: [String]
        public var exercises: String
        public var asks: String
    }

    /// The run's token, in every trap name.
    public var token: String
    /// The HTTPDNS endpoint per protocol, NAME standing for the name asked.
    public var httpdns: [String: String]
    /// The same service over HTTPS (its certificate is for `httpdns.lab.test` and the address).
    public var httpdnsTLS: String
    /// The alicloud account and its signing secret (the lab's own, made for this run).
    public var account: String
    public var secret: String
    /// The lab's DNS server, ADDRESS:PORT, UDP and TCP: the app's system DNS for the fallback trap.
    public var dns: String
    /// The lab CA as PEM and as DER.
    public var caPEM: String
    public var caDER: String
    /// The recording HTTP proxy, `http://ADDRESS:PORT`: the proxy the app is to take as configured for the proxy trap.
    public var proxy: String
    public var traps: [Trap]

    /// The setup of a run whose lab serves every trap's names.
    public static func make(_ endpoints: LabEndpoints, names: AuditNames, traps: [any AuditTrap]) -> AuditSetup {
        let base = endpoints.httpdns
        let account = endpoints.account
        let httpdns = [
            "alicloud-v2": "\(base)/v2/d?id=\(account)&m=0&dn=NAME",
            "alicloud-legacy": "\(base)/\(account)/d?host=NAME",
            "alicloud-legacy-signed": "\(base)/\(account)/sign_d?host=NAME&t=EXPIRY&s=SIGNATURE",
            "tencent": "\(base)/d?dn=NAME&ttl=1",
            "doh-json": "\(base)/resolve?name=NAME&type=A",
            "doh-wire": "\(base)/dns-query",
            "ip": "\(base)/ip?host=NAME",
        ]
        let entries = traps.map { trap -> Trap in
            let urls = trap.names(names).compactMap { endpoints.hosts[$0.record.name.lowercased()] }
            let shown = trap.id == .redirect ? Array(urls.prefix(1)) : urls
            return Trap(
                trap: trap.id, url: shown.first ?? "", urls: shown, exercises: trap.exercises, asks: trap.asks)
        }
        return AuditSetup(
            token: names.token, httpdns: httpdns, httpdnsTLS: endpoints.httpdnsTLS, account: account,
            secret: endpoints.secret, dns: endpoints.dns, caPEM: endpoints.ca, caDER: endpoints.caDER ?? "",
            proxy: endpoints.proxy ?? "", traps: entries)
    }
}

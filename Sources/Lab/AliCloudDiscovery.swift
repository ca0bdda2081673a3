// The lab's alicloud service discovery: `GET /{account}/ss` names its service addresses (127.0.0.2
// first, then 127.0.0.1, unless started with others; same ports, plain and TLS), one of which can fail.
import FoundationEssentials
import WireCiphers

extension HTTPDNSService {
    /// The service IPs the lab's `/ss` names by default, in order: the first is the one that can fail.
    public static let labServiceIPs = ["127.0.0.2", "127.0.0.1"]

    /// `GET /{account}/ss?region=..&platform=..&sdk_version=..&sid=..[&s=..&t=..&n=..]`, or nil for
    /// any other path. Signed (the C SDK 2.2.5 signs it when it has a secret, src/hdns_scheduler.c)
    /// it is answered only when `s` = md5(n-secret-t); unsigned, as before.
    ///
    /// The answer carries `service_port` beside the SDK's `service_ip`/`service_ipv6`: the real
    /// service IPs listen on 80/443, the lab's on the ports of its listeners, the same at every
    /// service address; it names the port the question came to, which serves the scheme it was
    /// asked over (TLS on the TLS port), whatever the Host header says.
    func discovery(_ request: LabRequest) -> Answer? {
        let parts = request.path.split(separator: "/").map(String.init)
        guard parts.count == 2, parts[1] == "ss" else { return nil }
        guard parts[0] == account || parts[0] == keys.signedOnlyAccount else {
            return AliCloudCode.invalidAccount.refusal(format: "alicloud-ss", host: "")
        }
        if let s = request.query["s"] {
            guard let t = request.query["t"], let n = request.query["n"] else {
                return AliCloudCode.missingArgument.refusal(format: "alicloud-ss", host: "")
            }
            // `t` is when the client signed, not an expiry; the SDK sources do not say how far
            // from its clock the service lets it be, so the lab checks the signature alone.
            guard s.lowercased() == AliCloudLegacySigning.serviceListSignature(nonce: n, secret: secret, time: t) else {
                return AliCloudCode.invalidSignature.refusal(format: "alicloud-ss", host: "")
            }
        }
        let port = request.localPort ?? request.host.split(separator: ":").last.flatMap { Int($0) } ?? 80
        let v4 = serviceAddresses.filter { LabAddress.bytes($0)?.count == 4 }
        let v6 = serviceAddresses.filter { LabAddress.bytes($0)?.count == 16 }
        return Answer(
            response: .json(
                200, #"{"service_ip":\#(json(v4)),"service_ipv6":\#(json(v6)),"service_port":\#(port)}"#),
            format: "alicloud-ss", host: "", isJSON: true)
    }
}

// The lab's RFC 8484 endpoint: `GET /dns-query?dns=BASE64URL` and `POST /dns-query` with an
// application/dns-message body, answered from the zone (CNAME chains included) as DNS messages.
import FoundationEssentials
import NIOHTTP1

extension HTTPDNSService {
    static let dnsMessage = "application/dns-message"

    /// The RFC 8484 answer to `request`, or nil when it is not a wire-format query (DoH JSON then).
    func dohWire(_ request: LabRequest) -> Answer? {
        let message: [UInt8]
        let format: String
        if request.method == "POST" {
            let type = request.headers.first(name: "content-type")?.lowercased() ?? ""
            guard type.hasPrefix(Self.dnsMessage) else { return nil }
            message = request.body
            format = "doh-wire-post"
        } else if let encoded = request.query["dns"] {
            guard let bytes = Self.base64URLDecoded(encoded) else {
                return Answer(
                    response: .text(400, "the dns parameter is not base64url\n"), format: "doh-wire", host: "",
                    isJSON: false)
            }
            message = bytes
            format = "doh-wire"
        } else {
            return nil
        }
        guard let query = LabDNSQuery(message) else {
            return Answer(
                response: .text(400, "the body is not a DNS query\n"), format: format, host: "", isJSON: false)
        }
        let reply = LabDNSReply.answer(query, zone: zone)
        let ttl = zone.record(for: query.name)?.ttl ?? 60
        let response = LabResponse(
            status: 200, headers: [("Content-Type", Self.dnsMessage), ("Cache-Control", "max-age=\(ttl)")], body: reply)
        // Not JSON: the `malformed` fault replaces it with bytes that are no DNS message.
        return Answer(response: response, format: format, host: query.name, isJSON: false, dnsQuery: query)
    }

    /// Base64url without padding (RFC 4648 section 5), as RFC 8484 sends it.
    static func base64URLDecoded(_ text: String) -> [UInt8]? {
        var standard = text.replacing("-", with: "+").replacing("_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { Array($0) }
    }
}

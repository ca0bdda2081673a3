// The lab's HTTPDNS service: the Alibaba Cloud legacy API, Tencent's text format, DoH JSON and wire,
// all answered from the zone. Pure request-to-answer logic; the fault switch is applied on top.
import FoundationEssentials
import FoundationGaps
import LabFaults
import NIOHTTP1
import WireCiphers

/// Answers HTTPDNS queries the way the real services do.
struct HTTPDNSService: Sendable {
    var zone: LabZone
    var account: String
    var secret: String
    /// The AES/DES keys, tokens and extra ids (alicloud v2, tencent encrypted).
    var keys: LabKeys
    /// The clock for signature expiry, in seconds since 1970.
    var now: @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
    /// Refuses unsigned queries of every account with `UnsignedInterfaceDisabled`, as an account
    /// whose console turned the unsigned interface off (the `unsigned-refused` fault).
    var refusesUnsigned = false
    /// The service addresses `/ss` names, in order (`LabOptions.effectiveServiceAddresses`).
    var serviceAddresses = HTTPDNSService.labServiceIPs

    /// An answer and what it was about, for the query log.
    struct Answer: Sendable {
        var response: LabResponse
        var format: String
        var host: String
        /// Whether the body is JSON, so the `malformed` fault knows how to garble it.
        var isJSON: Bool
        /// The RFC 8484 query, for the ledger.
        var dnsQuery: LabDNSQuery? = nil
    }

    func answer(_ request: LabRequest) -> Answer {
        if request.path == "/ip" { return plainIP(request) }
        let parts = request.path.split(separator: "/").map(String.init)
        guard let format = LabWireFormat.serving(parts) else { return Self.noSuchEndpoint }
        switch format {
        case .tencent:
            return tencentForms(request)
        case .dohJSON:
            return dohJSON(request)
        case .dohWire:
            if let wire = dohWire(request) { return wire }
            let accept = request.headers.first(name: "accept") ?? ""
            guard accept.contains("application/dns-json") || request.query["ct"] == "application/dns-json" else {
                return Answer(
                    response: .text(
                        415,
                        "send Accept: application/dns-json (JSON) or ?dns= / a POST of application/dns-message (RFC 8484)\n"
                    ),
                    format: "doh-json", host: request.query["name"] ?? "", isJSON: false)
            }
            return dohJSON(request)
        case .alicloudV2:
            return alicloudV2(request)
        case .alicloudLegacy:
            return alicloud(request, account: parts[0], endpoint: parts[1])
        }
    }

    /// `GET /ip?host=NAME`: the addresses alone, one a line (IPv4 first), the TTL as
    /// `Cache-Control: max-age`, for an app that wraps its own resolver around any service.
    private func plainIP(_ request: LabRequest) -> Answer {
        let host = request.query["host"] ?? ""
        guard let record = zone.record(for: host) else {
            return Answer(
                response: .text(404, "no addresses for \(host.isEmpty ? "an empty name (give ?host=NAME)" : host)\n"),
                format: "plain-ip", host: host, isJSON: false)
        }
        let ips = record.ipv4(forClient: request.remoteAddress ?? "127.0.0.1") + record.ipv6
        var response = LabResponse.text(200, ips.map { $0 + "\n" }.joined())
        response.headers.append(("Cache-Control", "max-age=\(record.ttl)"))
        return Answer(response: response, format: "plain-ip", host: host, isJSON: false)
    }

    private static var noSuchEndpoint: Answer {
        Answer(response: .text(404, "no such HTTPDNS endpoint\n"), format: "unknown", host: "", isJSON: false)
    }

    // MARK: Alibaba Cloud legacy API

    private func alicloud(_ request: LabRequest, account: String, endpoint: String) -> Answer {
        let formats = [
            "d": "alicloud", "sign_d": "alicloud-signed", "resolve": "alicloud-batch",
            "sign_resolve": "alicloud-batch-signed",
        ]
        guard let format = formats[endpoint] else { return Self.noSuchEndpoint }
        let host = request.query["host"] ?? ""
        func failure(_ code: AliCloudCode) -> Answer { code.refusal(format: format, host: host) }
        guard account == self.account else { return failure(.invalidAccount) }
        guard !host.isEmpty else { return failure(.missingArgument) }
        let wanted = request.query["query"] ?? "4"
        let families = Set(wanted.split(separator: ","))
        guard !families.isEmpty, families.isSubset(of: ["4", "6"]) else { return failure(.invalidQuery) }
        if endpoint.hasPrefix("sign_") {
            // A batch signs its names as sent, comma-joined (C SDK 2.2.5, src/hdns_sign.c).
            guard let t = request.query["t"], let s = request.query["s"] else { return failure(.missingArgument) }
            guard s.lowercased() == AliCloudLegacySigning.signature(host: host, secret: secret, expiry: t) else {
                return failure(.invalidSignature)
            }
            guard let expiry = Int(t), expiry >= now() else { return failure(.signatureExpired) }
        } else if refusesUnsigned {
            return failure(.unsignedInterfaceDisabled)
        }
        // `ip=` asks for the answer of another client address (the C SDK's client_ip).
        let clientIP = request.query["ip"] ?? request.remoteAddress ?? "127.0.0.1"
        if endpoint.hasSuffix("resolve") {
            let names = host.split(separator: ",").map(String.init)
            var entries: [String] = []
            for name in names {
                let record = zone.record(for: name)
                // One record per type, each with its own TTL (the C SDK's batch answer shape).
                for (family, v6) in [(Substring("4"), false), ("6", true)] where families.contains(family) {
                    let ttl = record?.ttl(v6) ?? 60
                    let ips = (v6 ? record?.ipv6 : record?.ipv4(forClient: clientIP)) ?? []
                    entries.append(
                        #"{"host":\#(json(name)),"client_ip":\#(json(clientIP)),"ips":\#(json(ips)),"type":\#(v6 ? 28 : 1),"ttl":\#(ttl),"origin_ttl":\#(record?.originTTL ?? ttl)}"#
                    )
                }
            }
            return Answer(
                response: .json(200, #"{"dns":[\#(entries.joined(separator: ","))]}"#), format: format, host: host,
                isJSON: true)
        }
        let record = zone.record(for: host)
        let ttl = record?.ttl ?? 60
        var fields = [#""host":\#(json(host))"#]
        fields.append(#""ips":\#(json(families.contains("4") ? record?.ipv4(forClient: clientIP) ?? [] : []))"#)
        if families.contains("6") { fields.append(#""ipsv6":\#(json(record?.ipv6 ?? []))"#) }
        fields.append(#""ttl":\#(ttl)"#)
        fields.append(#""origin_ttl":\#(record?.originTTL ?? ttl)"#)
        fields.append(#""client_ip":\#(json(clientIP))"#)
        if let extra = record?.extra { fields.append(#""extra":\#(json(extra))"#) }
        return Answer(
            response: .json(200, "{" + fields.joined(separator: ",") + "}"), format: format, host: host, isJSON: true)
    }

    // MARK: Tencent DNSPod D+

    /// Answers as DNSPod D+ documents it: `ip;ip[,ttl]`, A and AAAA joined by `-` with
    /// `type=addrs` (`0` for a family with no record), `name.:` prefixes for `query=1` and for a
    /// batch (`dn=a,b`, one line each), `|client-ip` with `clientip=1`; an unknown single name
    /// gets an empty body. `dn` is the opened name when the query came sealed.
    func tencent(_ request: LabRequest, dn opened: String? = nil) -> Answer {
        let dn = opened ?? request.query["dn"] ?? ""
        guard !dn.isEmpty else {
            return Answer(response: .text(200, ""), format: "tencent", host: dn, isJSON: false)
        }
        let withTTL = request.query["ttl"] == "1"
        let type = request.query["type"]?.lowercased() ?? "a"
        let names = dn.split(separator: ",").map(String.init)
        let batch = names.count > 1
        let lines = names.map { name -> String in
            let record = zone.record(for: name)
            func part(_ ips: [String], emptyAs empty: String, v6: Bool = false) -> String {
                guard let record, !ips.isEmpty else { return empty }
                return ips.joined(separator: ";") + (withTTL ? ",\(record.ttl(v6))" : "")
            }
            let missing = batch ? "0" : ""
            let result: String
            switch type {
            case "addrs":
                result = part(record?.ipv4 ?? [], emptyAs: "0") + "-" + part(record?.ipv6 ?? [], emptyAs: "0", v6: true)
            case "aaaa": result = part(record?.ipv6 ?? [], emptyAs: missing, v6: true)
            default: result = part(record?.ipv4 ?? [], emptyAs: missing)
            }
            // With clientip=1 every line ends in |client-ip (DNSPod SDK `ResponseParser` patterns).
            let clientIP = request.query["clientip"] == "1" ? "|" + (request.remoteAddress ?? "127.0.0.1") : ""
            return (batch || request.query["query"] == "1" ? "\(name).:\(result)" : result) + clientIP
        }
        let body = lines.joined(separator: "\n")
        return Answer(response: .text(200, body), format: "tencent", host: dn, isJSON: false)
    }

    // MARK: DoH JSON

    private func dohJSON(_ request: LabRequest) -> Answer {
        let host = request.query["name"] ?? ""
        guard !host.isEmpty else {
            return Answer(
                response: .json(400, #"{"Status":1,"Comment":"missing name"}"#), format: "doh-json", host: host,
                isJSON: true)
        }
        let type: Int
        switch (request.query["type"] ?? "1").uppercased() {
        case "1", "A": type = 1
        case "28", "AAAA": type = 28
        case let other: type = Int(other) ?? 1
        }
        let fqdn = host.hasSuffix(".") ? host : host + "."
        let question = #""Question":[{"name":\#(json(fqdn)),"type":\#(type)}]"#
        let flags = #""TC":false,"RD":true,"RA":true,"AD":false,"CD":false"#
        guard let record = zone.record(for: host) else {
            return Answer(
                response: .json(200, #"{"Status":3,\#(flags),\#(question)}"#), format: "doh-json", host: host,
                isJSON: true)
        }
        if let rcode = record.rcode {
            return Answer(
                response: .json(200, #"{"Status":\#(rcode.code),\#(flags),\#(question)}"#), format: "doh-json",
                host: host, isJSON: true)
        }
        let data = type == 1 ? record.ipv4 : type == 28 ? record.ipv6 : []
        let answers = data.map {
            #"{"name":\#(json(fqdn)),"type":\#(type),"TTL":\#(record.ttl(type == 28)),"data":\#(json($0))}"#
        }
        let answerField = answers.isEmpty ? "" : #","Answer":[\#(answers.joined(separator: ","))]"#
        return Answer(
            response: .json(200, #"{"Status":0,\#(flags),\#(question)\#(answerField)}"#), format: "doh-json",
            host: host, isJSON: true)
    }
}

/// A JSON string literal.
func json(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20: out += String(cFormat: "\\u%04x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// A JSON array of strings.
func json(_ texts: [String]) -> String { "[" + texts.map { json($0) }.joined(separator: ",") + "]" }

// The lab's Alibaba Cloud HTTPDNS v2 service: /v2/d plain, signed and sealed (AES-CBC, AES-GCM)
// with the service's error codes, answered from the zone. Keys are made at lab start-up.
import FoundationEssentials
import FoundationGaps
import WireCiphers

/// The keys and ids a lab made at start-up; `ipdirect lab` prints them all.
public struct LabKeys: Sendable, Codable, Equatable {
    /// An alicloud account that refuses unsigned requests (`UnsignedInterfaceDisabled`).
    public var signedOnlyAccount: String
    /// The alicloud AES key, 32 hex digits, for `--cipher aes-cbc|aes-gcm`.
    public var aesKey: String
    /// Tencent's enterprise id (`--account`).
    public var tencentID: String
    /// Tencent's DES key (8 characters).
    public var tencentDESKey: String
    /// Tencent's AES key (16 characters or fewer: the SDK pads it with '0').
    public var tencentAESKey: String
    /// Tencent's HTTPS token.
    public var tencentToken: String

    public init(
        signedOnlyAccount: String, aesKey: String, tencentID: String, tencentDESKey: String, tencentAESKey: String,
        tencentToken: String
    ) {
        self.signedOnlyAccount = signedOnlyAccount
        self.aesKey = aesKey
        self.tencentID = tencentID
        self.tencentDESKey = tencentDESKey
        self.tencentAESKey = tencentAESKey
        self.tencentToken = tencentToken
    }

    /// Fresh random keys.
    static func generate() -> LabKeys {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        func word(_ count: Int) -> String {
            String((0..<count).map { _ in alphabet[Int.random(in: alphabet.indices)] })
        }
        return LabKeys(
            signedOnlyAccount: "139451", aesKey: Hex.encode(WireCipher.randomBytes(16)), tencentID: "10086",
            tencentDESKey: word(8), tencentAESKey: word(12), tencentToken: word(24))
    }
}

extension HTTPDNSService {
    /// The alicloud error codes the lab answers with (v2 and the legacy API share them), with the
    /// HTTP status the lab sends each with.
    enum AliCloudCode: String {
        case invalidAccount = "InvalidAccount"
        case missingArgument = "MissingArgument"
        /// Legacy API only: `query` is not 4, 6 or 4,6.
        case invalidQuery = "InvalidQuery"
        case invalidHost = "InvalidHost"
        case tooManyHosts = "TooManyHosts"
        case invalidSignature = "InvalidSignature"
        case signatureExpired = "SignatureExpired"
        case invalidDuration = "InvalidDuration"
        case unsignedInterfaceDisabled = "UnsignedInterfaceDisabled"

        var status: Int {
            switch self {
            case .missingArgument, .invalidQuery, .invalidHost, .tooManyHosts: return 400
            default: return 403
            }
        }

        /// The service's refusal, `{"code":"..."}` with the code's status, about `host`.
        func refusal(format: String, host: String) -> Answer {
            Answer(response: .json(status, #"{"code":"\#(rawValue)"}"#), format: format, host: host, isJSON: true)
        }
    }

    /// A signature may not reach further ahead than this (the service's `InvalidDuration`).
    static let v2MaximumDuration = 24 * 3600

    /// `GET /v2/d?id=&m=&dn=&q=[&v=][&exp=&s=]...` as the service answers it: `v` optional and
    /// `exp` only with a signature (the Node.js SDK 1.0 sends neither unsigned, and no `v` at all:
    /// its src/network.ts), the signature checked over exactly the signable parameters present.
    func alicloudV2(_ request: LabRequest) -> Answer {
        let query = request.query
        let mode = AliCloudV2Mode(rawValue: Int(query["m"] ?? "0") ?? -1)
        let format = mode == .aesCBC ? "alicloud-v2-cbc" : mode == .aesGCM ? "alicloud-v2-gcm" : "alicloud-v2"
        var hosts = query["dn"] ?? ""
        let date = Self.httpDate(now())
        func failure(_ code: AliCloudCode) -> Answer {
            var response = LabResponse.json(code.status, #"{"code":"\#(code.rawValue)"}"#)
            response.headers.append(("Date", date))
            return Answer(response: response, format: format, host: hosts, isJSON: true)
        }
        let account = query["id"] ?? ""
        guard account == self.account || account == keys.signedOnlyAccount else { return failure(.invalidAccount) }
        guard let mode else { return failure(.missingArgument) }
        if let s = query["s"] {
            guard let exp = query["exp"].flatMap(Int.init) else { return failure(.missingArgument) }
            let signed = query.filter { AliCloudV2Signing.isSigned($0.key) }
            guard s.lowercased() == AliCloudV2Signing.signature(signed, secret: secret) else {
                return failure(.invalidSignature)
            }
            guard exp >= now() else { return failure(.signatureExpired) }
            guard exp <= now() + Self.v2MaximumDuration else { return failure(.invalidDuration) }
        } else if account == keys.signedOnlyAccount || refusesUnsigned {
            return failure(.unsignedInterfaceDisabled)
        }
        // Everything that travels in the clear, and what `enc` carried when sealed.
        var parameters = query
        let key = Hex.decode(keys.aesKey) ?? []
        // `cip` asks for the answer of another client address; the lab answers it as that address's.
        var clientIP = query["cip"] ?? request.remoteAddress ?? "127.0.0.1"
        if mode != .plain {
            guard let enc = query["enc"], let sealed = Hex.decode(enc), let plain = try? mode.open(sealed, key: key),
                let members = JSONValue(parsing: plain)?.object,
                case let object = members.compactMapValues(\.string), object.count == members.count
            else {
                // The client sealed with another key, so no name can be read. The SDK sources do not
                // say what the service answers then; the lab answers nothing, sealed with the
                // account's key, so the client's side of a wrong key is what shows.
                let data = #"{"cip":\#(json(clientIP)),"answers":[]}"#
                let sealedData = (try? mode.seal(Array(data.utf8), key: key)) ?? []
                var response = LabResponse.json(
                    200,
                    #"{"code":"success","mode":\#(mode.rawValue),"data":"\#(Data(sealedData).base64EncodedString())"}"#)
                response.headers.append(("Date", date))
                return Answer(response: response, format: format, host: "", isJSON: true)
            }
            for (name, value) in object where ["dn", "q", "tags", "cip"].contains(name) || name.hasPrefix("sdns-") {
                parameters[name] = value
            }
            hosts = parameters["dn"] ?? ""
            clientIP = parameters["cip"] ?? clientIP
        }
        let names = hosts.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !hosts.isEmpty else { return failure(.missingArgument) }
        guard names.count <= 5 else { return failure(.tooManyHosts) }
        guard names.allSatisfy(Self.isHostName) else { return failure(.invalidHost) }
        let families = Set((parameters["q"] ?? "4").split(separator: ","))
        guard !families.isEmpty, families.isSubset(of: ["4", "6"]) else { return failure(.missingArgument) }
        let sdns = parameters.filter { $0.key.hasPrefix("sdns-") }.sorted { $0.key < $1.key }
        let extra = sdns.isEmpty ? nil : sdns.map { "\($0.key.dropFirst(5))=\($0.value)" }.joined(separator: "&")

        let answers = names.map { name -> String in
            let record = zone.record(for: name)
            func part(_ ips: [String]?, v6: Bool) -> String {
                var fields = [#""ips":\#(json(ips ?? []))"#, #""ttl":\#(record?.ttl(v6) ?? 60)"#]
                if record == nil {
                    fields.append(#""no_ip_code":"DomainNotFound""#)
                } else if ips?.isEmpty ?? true {
                    fields.append(#""no_ip_code":"NoRecord""#)
                }
                if let extra { fields.append(#""extra":\#(json(extra))"#) }
                return "{" + fields.joined(separator: ",") + "}"
            }
            var fields = [#""dn":\#(json(name))"#]
            if families.contains("4") {
                fields.append(#""v4":\#(part(record?.ipv4(forClient: clientIP), v6: false))"#)
            }
            if families.contains("6") { fields.append(#""v6":\#(part(record?.ipv6, v6: true))"#) }
            return "{" + fields.joined(separator: ",") + "}"
        }
        let data = #"{"cip":\#(json(clientIP)),"answers":[\#(answers.joined(separator: ","))]}"#
        let body: String
        if mode == .plain {
            body = #"{"code":"success","mode":0,"data":\#(data)}"#
        } else {
            let sealed = (try? mode.seal(Array(data.utf8), key: key)) ?? []
            body = #"{"code":"success","mode":\#(mode.rawValue),"data":"\#(Data(sealed).base64EncodedString())"}"#
        }
        var response = LabResponse.json(200, body)
        response.headers.append(("Date", date))
        return Answer(response: response, format: format, host: hosts, isJSON: true)
    }

    /// Letters, digits, '-' and '.', as the service accepts names.
    static func isHostName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 253
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
    }

    /// An RFC 9110 IMF-fixdate for the `Date` header.
    static func httpDate(_ seconds: Int) -> String {
        HTTPDate.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

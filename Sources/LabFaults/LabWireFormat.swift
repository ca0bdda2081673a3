// The HTTPDNS wire formats the lab's service speaks and the paths each lives on, as one closed set:
// the provider registry's lab routes name one, the lab's service dispatches on it.

/// A wire format of the lab's HTTPDNS service.
///
/// A provider's registry row names the format the lab answers it in (`LabRoute.format`); the lab
/// picks the handler of a request by the format its path asks for. A new format fails to compile
/// in the lab until it has a handler.
public enum LabWireFormat: String, Sendable, CaseIterable {
    /// Alibaba Cloud v2: `/v2/d`.
    case alicloudV2 = "alicloud-v2"
    /// Alibaba Cloud's legacy API: `/{account}/d`, `/sign_d`, `/resolve`, `/sign_resolve`.
    case alicloudLegacy = "alicloud-legacy"
    /// Tencent DNSPod D+: `/d`.
    case tencent
    /// DoH JSON: `/resolve?name=`.
    case dohJSON = "doh-json"
    /// DoH wire (RFC 8484): `/dns-query`, which also answers JSON when asked for it.
    case dohWire = "doh-wire"

    /// What a provider's endpoint adds to the service's base URL: the providers of the formats
    /// with no path here add their own (`/v2/d`, `/{account}/d`, `/d`).
    public var endpointPath: String {
        switch self {
        case .alicloudV2, .alicloudLegacy, .tencent: return ""
        case .dohJSON: return "/resolve"
        case .dohWire: return "/dns-query"
        }
    }

    /// The legacy API's endpoints after the account.
    public static let legacyEndpoints = ["d", "sign_d", "resolve", "sign_resolve"]

    /// The format a request path asks for; nil for a path no format lives on.
    ///
    /// - Parameter parts: the path's non-empty segments.
    public static func serving(_ parts: [String]) -> LabWireFormat? {
        switch parts.count {
        case 1 where parts[0] == "d": return .tencent
        case 1 where parts[0] == "resolve": return .dohJSON
        case 1 where parts[0] == "dns-query": return .dohWire
        case 2 where parts == ["v2", "d"]: return .alicloudV2
        case 2 where legacyEndpoints.contains(parts[1]): return .alicloudLegacy
        default: return nil
        }
    }
}

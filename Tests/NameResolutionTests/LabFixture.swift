// What the resolution tests share: a lab started per test (free ports, shut down after) and
// configurations pointed at each of its HTTPDNS formats.
import ConfigurationSources
import Foundation
import Lab
import NameResolution

/// The HTTPDNS formats the lab speaks, each as a configuration a user could write.
enum LabFormat: String, CaseIterable, CustomStringConvertible {
    case alicloud, alicloudSigned, alicloudAESCBC, alicloudAESGCM
    case alicloudLegacy, alicloudLegacySigned, alicloudLegacyTLS, tencent, tencentDES, tencentAES, tencentToken
    case dohResolve, dohQuery, dohWire, dohWirePost

    var description: String { rawValue }

    /// Whether the format carries addresses as text, so a service can send junk in their place.
    /// DNS messages carry them as 4 or 16 bytes: a wire answer cannot hold 'not-an-ip'.
    var carriesText: Bool { self != .dohWire && self != .dohWirePost }

    /// The formats that carry a DNS RCODE (RFC 8484 messages, DoH JSON's `Status`): the lab's
    /// SERVFAIL, REFUSED, NOTIMP and FORMERR names fail through them, by name.
    static let answeringRCodes: [LabFormat] = [.dohWire, .dohWirePost, .dohResolve, .dohQuery]

    /// - Parameter timeout: wide by default: only tests that wait for a timeout on purpose shorten it.
    ///   60 s: parameterized cases start a lab each at once, and while they make their certificates
    ///   an answer waits for a cooperative thread, more than 10 s on a loaded machine (read as a timeout).
    func configuration(_ lab: Lab, timeout: Double = 60) -> ResolverConfiguration {
        let e = lab.endpoints
        switch self {
        case .alicloud:
            return ResolverConfiguration(provider: .alicloud, endpoint: e.httpdns, account: e.account, timeout: timeout)
        case .alicloudSigned:
            return ResolverConfiguration(
                provider: .alicloud, endpoint: e.httpdnsTLS, account: e.account, secret: e.secret, caFile: e.ca,
                timeout: timeout)
        case .alicloudAESCBC, .alicloudAESGCM:
            var configuration = ResolverConfiguration(
                provider: .alicloud, endpoint: e.httpdns, account: e.account, secret: e.secret, timeout: timeout)
            configuration.cipher = self == .alicloudAESCBC ? .aesCBC : .aesGCM
            configuration.key = e.keys.aesKey
            return configuration
        case .alicloudLegacy:
            return ResolverConfiguration(
                provider: .alicloudLegacy, endpoint: e.httpdns, account: e.account, timeout: timeout)
        case .alicloudLegacySigned:
            return ResolverConfiguration(
                provider: .alicloudLegacy, endpoint: e.httpdns, account: e.account, secret: e.secret, timeout: timeout)
        case .alicloudLegacyTLS:
            return ResolverConfiguration(
                provider: .alicloudLegacy, endpoint: e.httpdnsTLS, account: e.account, secret: e.secret, caFile: e.ca,
                timeout: timeout)
        case .tencent:
            return ResolverConfiguration(provider: .tencent, endpoint: e.httpdns, timeout: timeout)
        case .tencentDES, .tencentAES:
            var configuration = ResolverConfiguration(
                provider: .tencent, endpoint: e.httpdns, account: e.keys.tencentID, timeout: timeout)
            configuration.cipher = self == .tencentDES ? .des : .aesCBC
            configuration.key = self == .tencentDES ? e.keys.tencentDESKey : e.keys.tencentAESKey
            return configuration
        case .tencentToken:
            var configuration = ResolverConfiguration(
                provider: .tencent, endpoint: e.httpdnsTLS, account: e.keys.tencentID, caFile: e.ca, timeout: timeout)
            configuration.token = e.keys.tencentToken
            return configuration
        case .dohResolve:
            return ResolverConfiguration(
                provider: .dohJSON, endpoint: e.httpdnsTLS + "/resolve", caFile: e.ca, timeout: timeout)
        case .dohQuery:
            return ResolverConfiguration(provider: .dohJSON, endpoint: e.httpdns + "/dns-query", timeout: timeout)
        case .dohWire:
            return ResolverConfiguration(
                provider: .doh, endpoint: e.httpdnsTLS + "/dns-query", caFile: e.ca, timeout: timeout)
        case .dohWirePost:
            var configuration = ResolverConfiguration(
                provider: .doh, endpoint: e.httpdns + "/dns-query", timeout: timeout)
            configuration.dohMethod = .post
            return configuration
        }
    }

    func provider(_ lab: Lab) throws -> any HTTPDNSProvider {
        try ProviderFactory.make(configuration(lab))
    }
}

// Whose requests the Alibaba providers send (`--sdk`, `sdk` in the configuration): ipdirect's own,
// or byte for byte what one of Alibaba's SDKs sends, so a user reproduces their app's exact request.
import FoundationEssentials

/// A client whose HTTPDNS requests ipdirect can send exactly: parameters and their order, `v`,
/// the signature's lifetime, identity parameters, User-Agent and the encoding of `q`/`query`.
///
/// Each fact comes from the SDK's source or from its requests captured on the wire
/// (`Tests/SDKVectors/alibaba.json`); the file is named where the fact is used.
public enum SDKProfile: String, Sendable, Codable, CaseIterable {
    /// ipdirect's own requests (the iOS layout, ipdirect's identity).
    case ipdirect
    /// iOS SDK 3.4.2, v2 API (AlicloudHttpDNS/HttpdnsRemoteResolver.m).
    case ios34 = "ios-3.4"
    /// Android SDK 2.6, v2 API (httpdns-sdk/.../resolve/ResolveHostHelper.java).
    case android26 = "android-2.6"
    /// C SDK 2.2.5 for Linux, legacy API (src/hdns_resolver.c, src/hdns_sign.c, src/hdns_scheduler.c).
    case c22 = "c-2.2"
    /// Node.js SDK 1.0.0, v2 API (src/network.ts `buildSingleResolveURL`, src/auth.ts).
    case node10 = "node-1.0"

    /// The API the SDK speaks; nil for ipdirect, which speaks both.
    public var provider: ProviderKind? {
        switch self {
        case .ipdirect: nil
        case .ios34, .android26, .node10: .alicloud
        case .c22: .alicloudLegacy
        }
    }

    /// The User-Agent header every HTTPDNS request carries.
    public var userAgent: String {
        switch self {
        case .ipdirect: "ipdirect/\(IPDirectVersion.string)"
        // HttpdnsUtil.generateUserAgent: "HttpdnsSDK/VERSION (model; iOS systemVersion; systemName)",
        // here for an iPhone on iOS 17.0 (the SDK fills in the device's).
        case .ios34: "HttpdnsSDK/3.4.2 (iPhone; iOS 17.0; iOS)"
        // ResolveHostHelper sets config.getUA(); the HttpDnsConfig read sets none, so this is
        // HttpURLConnection's own (Android 14 here).
        case .android26: "Dalvik/2.1.0 (Linux; U; Android 14)"
        // alibaba.json, c_sdk_2_2_5_legacy.user_agent.
        case .c22: "alibabacloud-httpdns-c-sdk-2.2.5"
        // alibaba.json, nodejs_sdk_1_0_0_v2.user_agent.
        case .node10: "httpdns-nodejs-sdk/1.0.0"
        }
    }

    /// Seconds a signature stays valid: v2 `exp`, legacy `t`, from now.
    public var signatureLifetime: Int {
        switch self {
        // iOS HTTPDNS_DEFAULT_AUTH_TIMEOUT_INTERVAL, Android SignService.EXPIRATION_TIME: 10 minutes.
        case .ipdirect, .ios34, .android26: 600
        // alibaba.json rules: the C SDK's t = now + 1800, the Node.js SDK's exp = now + 300.
        case .c22: 1800
        case .node10: 300
        }
    }

    /// The `platform` and `sdk_version` of a legacy request and of `/ss`.
    var platform: (name: String, version: String) {
        switch self {
        case .c22: ("linux", "alibabacloud-httpdns-c-sdk-2.2.5")
        // Scheduler/HttpdnsScheduleExecutor.m: platform=ios&sdk_version=HTTPDNS_IOS_SDK_VERSION.
        case .ios34: ("ios", "3.4.2")
        case .android26: ("android", "2.6.0")
        case .node10: ("nodejs", "1.0.0")
        case .ipdirect: ("ipdirect", IPDirectVersion.string)
        }
    }

    /// What a provider's name adds for the profile and the client address asked for: the traces,
    /// the reproduce panel, the status bar and every export name the provider, so they say it.
    func nameParts(clientIP: String?) -> [String] {
        (self == .ipdirect ? [] : ["sdk \(rawValue)"]) + (clientIP.map { ["for client \($0)"] } ?? [])
    }

    /// Refuses a profile whose SDK does not speak `provider`'s API.
    ///
    /// - Throws: `.setup(.sdkSpeaksAnotherAPI)`, which names the provider the SDK speaks.
    public func check(for provider: ProviderKind) throws(ResolutionError) {
        guard let speaks = self.provider, speaks != provider else { return }
        throw .setup(.sdkSpeaksAnotherAPI(self, provider: provider))
    }
}

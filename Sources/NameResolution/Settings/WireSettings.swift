// The settings the production wire formats add: which cipher seals a query, Alibaba's regions
// and their start IPs, and the `sdk` tag ipdirect sends. One place for each.

/// How a query and its answer are sealed on the wire (`--cipher`).
public enum HTTPDNSCipher: String, Sendable, Codable, CaseIterable {
    /// In the clear (signed when a secret is set).
    case none
    /// alicloud `m=1`, tencent `alg=aes`: AES-CBC with a random IV.
    case aesCBC = "aes-cbc"
    /// alicloud `m=2`: AES-GCM with a random IV and a tag.
    case aesGCM = "aes-gcm"
    /// tencent `alg=des` (its SDK's default): single DES, ECB.
    case des
}

/// ipdirect's version: what `--version` prints, the HAR creator and the agent's build label say,
/// and what it calls itself on the wire (the SDKs send `ios_3.4.2`, `android_2.6.x`).
public enum IPDirectVersion {
    public static let string = "0.1.0"
    /// The `sdk` parameter of alicloud v2 requests.
    public static var sdkTag: String { "ipdirect_" + string }
}

/// Alibaba Cloud HTTPDNS regions and the start IPs the SDKs ask for service IPs
/// (iOS SDK 3.4.2 `HttpdnsRegionConfigLoader`).
public struct AliCloudRegion: Sendable, Equatable {
    public var name: String
    public var startIPv4: [String]
    public var startIPv6: [String]

    /// Every region the SDK knows, `cn` first (the default).
    public static let all: [AliCloudRegion] = [
        AliCloudRegion(
            name: "cn",
            startIPv4: [
                "203.107.1.1", "203.107.1.97", "203.107.1.100", "203.119.238.240", "106.11.25.239", "59.82.99.47",
            ],
            startIPv6: ["2401:b180:7001::31d", "2401:b180:2000:30::1c", "2401:b180:2000:20::10"]),
        AliCloudRegion(
            name: "hk", startIPv4: ["47.56.234.194", "47.56.119.115"],
            startIPv6: ["240b:4000:f10::178", "240b:4000:f10::188"]),
        AliCloudRegion(
            name: "sg", startIPv4: ["161.117.200.122", "47.74.222.190"],
            startIPv6: ["240b:4000:f10::178", "240b:4000:f10::188"]),
        AliCloudRegion(
            name: "de", startIPv4: ["47.89.80.182", "47.246.146.77"],
            startIPv6: ["2404:2280:3000::176", "2404:2280:3000::188"]),
        AliCloudRegion(
            name: "us", startIPv4: ["47.246.131.175", "47.246.131.141"],
            startIPv6: ["2404:2280:4000::2bb", "2404:2280:4000::23e"]),
    ]

    /// The region with this name, if the SDK knows it.
    public static func named(_ name: String) -> AliCloudRegion? { all.first { $0.name == name.lowercased() } }

    /// The name the SDKs check the service's certificate against, whatever IP they connect to.
    public static let certificateName = "203.107.1.1"
}

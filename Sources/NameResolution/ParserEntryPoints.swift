// Public doors onto the parsers that take bytes from outside (each HTTPDNS answer format, the
// persistent cache file), for the fuzz targets and their corpus replay test; nothing else calls them.
import Foundation

/// Runs one parser over untrusted bytes and throws the result away: a fuzz target only looks
/// for traps, hangs and memory errors.
public enum ParserEntryPoints {
    /// Alibaba Cloud: the single-name JSON answer and the batch (`/resolve`) answer.
    public static func aliCloud(_ body: [UInt8]) {
        _ = try? AliCloudProvider.parseSingle(body, host: "fuzz.lab.test", families: [.v4, .v6], ms: 0)
        _ = try? AliCloudProvider.parseBatch(
            body, hosts: ["fuzz.lab.test", "b.lab.test"], families: [.v4, .v6], ms: 0)
    }

    /// Tencent DNSPod D+: the text answer, for each family set it is asked with.
    public static func tencent(_ body: [UInt8]) {
        for families: Set<IPFamily> in [[.v4], [.v6], [.v4, .v6]] {
            _ = try? TencentProvider.parse(body, host: "fuzz.lab.test", families: families, ms: 0)
        }
    }

    /// DoH JSON (`application/dns-json`), for each family.
    public static func dohJSON(_ body: [UInt8]) {
        _ = try? DoHJSONProvider.parse(body, host: "fuzz.lab.test", family: .v4)
        _ = try? DoHJSONProvider.parse(body, host: "fuzz.lab.test", family: .v6)
    }

    /// The persistent cache file, loaded from `path` after `bytes` are written there.
    public static func cacheFile(_ bytes: [UInt8], path: String) {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return }
        _ = CacheFile.load(path, identity: "fuzz", now: Date(timeIntervalSince1970: 1_800_000_000), keepExpired: true)
        _ = CacheFile.load(path, identity: "fuzz", now: Date(timeIntervalSince1970: 1_800_000_000), keepExpired: false)
    }

    /// The TOML configuration file.
    public static func configuration(_ bytes: [UInt8]) {
        _ = try? ConfigurationLayer.toml(String(decoding: bytes, as: UTF8.self), path: "fuzz.toml")
    }
}

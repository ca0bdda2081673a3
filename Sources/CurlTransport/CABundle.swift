// A CA file for the user's extra CAs (--cacert, ca_file): the system's bundle with the extra ones
// appended, so they add trust instead of replacing it (libcurl's CAINFO replaces).
internal import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Combined CA bundles, built once per extra file for the life of the process.
///
/// The lab's own CA is not combined: lab transfers need no public CA.
public enum CABundle {
    /// The bundle libcurl trusts by default (its compiled-in `CURLINFO_CAINFO`), else the usual places.
    public static let system: String? = {
        let candidates =
            [(try? EasyHandle())?.string(CURLINFO_CAINFO)].compactMap { $0 } + [
                "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
                "/etc/ssl/cert.pem",
            ]
        return candidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }()

    /// The CA file and directory libcurl trusts when told nothing (`CURLINFO_CAINFO`,
    /// `CURLINFO_CAPATH`); a transfer given its own CA file keeps the directory, as libcurl does.
    static let libcurlDefaults: (file: String?, directory: String?) = {
        let easy = try? EasyHandle()
        return (easy?.string(CURLINFO_CAINFO), easy?.string(CURLINFO_CAPATH))
    }()

    private final class Built: @unchecked Sendable {
        let lock = NSLock()
        var paths: [String: String] = [:]
        let directory = NSTemporaryDirectory() + "ipdirect-ca-\(getpid())"
    }
    private static let built = Built()

    /// The file to hand libcurl for `extra`: the system bundle followed by `extra`. When there
    /// is no system bundle, or the combined file cannot be written, `extra` itself (libcurl
    /// then says what is wrong with it, as before).
    public static func path(adding extra: String, system: String? = CABundle.system) -> String {
        guard let system, system != extra else { return extra }
        built.lock.lock()
        defer { built.lock.unlock() }
        if let known = built.paths[extra] { return known }
        guard let systemPEM = FileManager.default.contents(atPath: system),
            let extraPEM = FileManager.default.contents(atPath: extra)
        else { return extra }
        mkdir(built.directory, 0o700)
        let combined = built.directory + "/\(built.paths.count).pem"
        var data = systemPEM
        data.append(contentsOf: Array("\n".utf8))
        data.append(extraPEM)
        guard FileManager.default.createFile(atPath: combined, contents: data, attributes: [.posixPermissions: 0o600])
        else { return extra }
        if built.paths.isEmpty { atexit { CABundle.removeAll() } }
        built.paths[extra] = combined
        return combined
    }

    /// Removes the combined files at exit.
    private static func removeAll() {
        try? FileManager.default.removeItem(atPath: built.directory)
    }
}

// A CA file for the user's extra CAs (--cacert, ca_file): the system's bundle with the extra ones
// appended, so they add trust instead of replacing it (libcurl's CAINFO replaces).
internal import CCurl
import FoundationEssentials
import FoundationGaps

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

    private struct Built {
        var paths: [String: String] = [:]
        /// Made by `mkdtemp` (0700, a fresh random name) when the first bundle is built: a
        /// guessable name another local user could create first would let them choose the
        /// CAs libcurl trusts.
        var directory: String?
    }
    private static let built = Locked(Built())

    /// The file to hand libcurl for `extra`: the system bundle followed by `extra`. When there
    /// is no system bundle, or the combined file cannot be written, `extra` itself (libcurl
    /// then says what is wrong with it, as before).
    public static func path(adding extra: String, system: String? = CABundle.system) -> String {
        guard let system, system != extra else { return extra }
        return built.withLock { built in
            if let known = built.paths[extra] { return known }
            guard let systemPEM = FileManager.default.contents(atPath: system),
                let extraPEM = FileManager.default.contents(atPath: extra)
            else { return extra }
            guard let directory = built.directory ?? makeDirectory() else { return extra }
            built.directory = directory
            let combined = directory + "/\(built.paths.count).pem"
            var data = systemPEM
            data.append(contentsOf: Array("\n".utf8))
            data.append(extraPEM)
            guard
                FileManager.default.createFile(atPath: combined, contents: data, attributes: [.posixPermissions: 0o600])
            else { return extra }
            if built.paths.isEmpty { atexit { CABundle.removeAll() } }
            built.paths[extra] = combined
            return combined
        }
    }

    /// A new directory of our own, mode 0700, under the temporary directory; nil when it cannot be made.
    private static func makeDirectory() -> String? {
        // The temporary directory honours TMPDIR, as NSTemporaryDirectory did.
        let base = FileManager.default.temporaryDirectory.path
        var template = Array(base.appendingPathComponent("ipdirect-ca-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }
        }
        guard made != nil else { return nil }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes the combined files at exit.
    private static func removeAll() {
        guard let directory = built.withLock({ $0.directory }) else { return }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

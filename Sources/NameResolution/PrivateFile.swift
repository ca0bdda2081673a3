// Files ipdirect writes whole (the resolver cache, the console's exports): readable by the user
// only, written to a temporary file, flushed to disk, then renamed, so no one sees half a file.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a file atomically with mode 0600.
public enum PrivateFile {
    /// Writes `data` to `path`: a temporary file beside it (mode 0600), fsync, rename over `path`.
    ///
    /// - Throws: `ConfigurationError.io` with the path and the system's reason.
    public static func write(_ data: Data, to path: String) throws(ConfigurationError) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary =
            (directory.isEmpty ? "" : directory + "/") + ".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        func failure(_ what: String) -> ConfigurationError {
            let reason = strerror(errno).flatMap { String(validatingCString: $0) } ?? "errno \(errno)"
            return .io("cannot \(what) \(path): \(reason)")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("write") }
        var written = 0
        let complete = data.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let count = Foundation.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
        guard complete, fsync(descriptor) == 0 else {
            let error = failure("write")
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let error = failure("replace")
            unlink(temporary)
            throw error
        }
    }
}

// Every file ipdirect creates is the user's alone (mode 0600, less if the umask asks): files written
// whole go to a temporary file, flushed to disk, then renamed, so no one sees half a file.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one way ipdirect creates a file: mode 0600, so the umask can only take more away.
public enum PrivateFile {
    /// The mode every file is created with.
    public static let mode: mode_t = 0o600

    /// Opens `path` for writing as open(2) does, creating it with mode 0600 when it is new (an
    /// existing file keeps the mode its owner gave it): files written as they go (exports, the
    /// agent's JSON Lines and each file it rotates to).
    ///
    /// - Parameter flags: `O_WRONLY` or `O_RDWR`, with `O_APPEND` or `O_TRUNC` as wanted;
    ///   `O_CREAT` and `O_CLOEXEC` are added.
    /// - Returns: the descriptor (the caller closes it), or -1 with `errno` set.
    public static func open(_ path: String, flags: Int32) -> Int32 {
        Foundation.open(path, flags | O_CREAT | O_CLOEXEC, mode)
    }

    /// Writes `data` to `path`: a temporary file beside it (mode 0600), fsync, rename over `path`.
    ///
    /// - Throws: `ConfigurationError.io` with the path and the system's reason.
    public static func write(_ data: Data, to path: String) throws(ConfigurationError) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary =
            (directory.isEmpty ? "" : directory + "/") + ".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        func failure(_ what: String) -> ConfigurationError {
            return .io("cannot \(what) \(path): \(SystemReason.words(errno))")
        }
        let descriptor = open(temporary, flags: O_WRONLY | O_EXCL)
        guard descriptor >= 0 else { throw failure("write") }
        var written = 0
        let complete = data.withUnsafeBytes { buffer -> Bool in
            // Only an empty buffer has no address, and it has nothing to write.
            guard let base = buffer.baseAddress else { return true }
            while written < buffer.count {
                let count = Foundation.write(descriptor, base + written, buffer.count - written)
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

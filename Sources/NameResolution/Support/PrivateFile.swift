// Every file ipdirect writes is a regular file it creates or replaces, the user's alone (mode 0600): whole
// files go to a temporary file, flushed, then renamed; a device, FIFO or socket at the path is refused.
import FoundationEssentials
import FoundationGaps

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

    /// Why a file cannot be written: a sentence after the path ("it is a FIFO, not a regular
    /// file", "No such file or directory").
    public struct Unwritable: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var reason: String

        public var description: String { "cannot write \(path): \(reason)" }
    }

    /// Opens `path` for writing, creating it with mode 0600 when it is new (an existing file keeps
    /// the mode its owner gave it): files written as they go (exports, the agent's JSON Lines
    /// and each file it rotates to).
    ///
    /// Only a regular file is opened: a device node, FIFO or socket at the path (or where a
    /// symlink leads) is refused before it is opened, and again after (a swap in between), so
    /// it is never truncated, chmodded or blocked on. A symlink is written through, as curl -o
    /// does; a dangling one creates its target.
    ///
    /// - Parameter flags: `O_WRONLY` or `O_RDWR`, with `O_APPEND` or `O_TRUNC` as wanted;
    ///   `O_CREAT` and `O_CLOEXEC` are added, and `O_TRUNC` waits until the file is known regular.
    /// - Returns: the descriptor (the caller closes it).
    /// - Throws: `Unwritable` with the reason.
    public static func open(_ path: String, flags: Int32) throws(Unwritable) -> Int32 {
        try refuseSpecial(path)
        let descriptor = Glibc.open(path, (flags & ~O_TRUNC) | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, mode)
        guard descriptor >= 0 else {
            let code = errno
            try refuseSpecial(path)
            throw Unwritable(path: path, reason: SystemReason.words(code))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = SystemReason.words(errno)
            close(descriptor)
            throw Unwritable(path: path, reason: reason)
        }
        if let kind = TextFile.notRegular(info.st_mode) {
            close(descriptor)
            throw Unwritable(path: path, reason: kind)
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        if flags & O_TRUNC != 0, ftruncate(descriptor, 0) != 0 {
            let reason = SystemReason.words(errno)
            close(descriptor)
            throw Unwritable(path: path, reason: reason)
        }
        return descriptor
    }

    /// Refuses a path that names (itself or through symlinks) something other than a regular
    /// file; an absent one (or a dangling symlink) is fine: it is created.
    static func refuseSpecial(_ path: String) throws(Unwritable) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        if let kind = TextFile.notRegular(info.st_mode) { throw Unwritable(path: path, reason: kind) }
    }

    /// Where a write to `path` lands: symlinks followed to the file they name (which may not
    /// exist yet), so the file put in place is theirs and the links stay links.
    static func destination(_ path: String) -> String {
        var current = path
        // 40 hops, as the kernel's own limit (ELOOP); past it the path is written as named.
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK,
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: current)
            else { return current }
            current =
                target.hasPrefix("/")
                ? target : current.deletingLastPathComponent.appendingPathComponent(target)
        }
        return current
    }

    /// Writes `data` to `path`: a temporary file beside it (mode 0600), fsync, rename over `path`.
    /// A device, FIFO or socket at `path` is refused, never renamed over; through a symlink the
    /// file it names is replaced and the link kept.
    ///
    /// - Throws: `ConfigurationError.io` with the path and the system's reason.
    public static func write(_ data: Data, to path: String) throws(ConfigurationError) {
        do {
            try refuseSpecial(path)
        } catch {
            throw .io(error.description)
        }
        // Through a symlink to the file it names: the link is kept, its file replaced.
        let target = destination(path)
        let directory = target.deletingLastPathComponent
        let name = target.lastPathComponent
        let temporary =
            (directory.isEmpty ? "" : directory + "/") + ".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        func failure(_ what: String) -> ConfigurationError {
            return .io("cannot \(what) \(path): \(SystemReason.words(errno))")
        }
        let descriptor = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw failure("write") }
        var written = 0
        let complete = data.withUnsafeBytes { buffer -> Bool in
            // Only an empty buffer has no address, and it has nothing to write.
            guard let base = buffer.baseAddress else { return true }
            while written < buffer.count {
                let count = Glibc.write(descriptor, base + written, buffer.count - written)
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
        // A special file put at the target since the check is still not renamed over.
        var info = stat()
        if lstat(target, &info) == 0, let kind = TextFile.notRegular(info.st_mode), info.st_mode & S_IFMT != S_IFLNK {
            unlink(temporary)
            throw .io("cannot write \(path): \(kind)")
        }
        guard rename(temporary, target) == 0 else {
            let error = failure("replace")
            unlink(temporary)
            throw error
        }
    }
}

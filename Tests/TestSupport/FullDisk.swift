// A directory on a file system with no room left (a tiny tmpfs, filled), for the tests of what
// ipdirect says when a disk is full: /dev/full is a device, which ipdirect refuses to write.
import Foundation

/// A filled tmpfs mounted on a scratch directory of its own; `remove()` unmounts it. Needs root.
public final class FullDisk: Sendable {
    /// The mounted directory: creating a file there works, writing a byte to it fails (ENOSPC).
    public let path: String

    /// Whether this process may mount one (root).
    public static var available: Bool { geteuid() == 0 }

    /// Mounts and fills it.
    ///
    /// - Throws: when the directory cannot be made or the mount fails.
    public init() async throws {
        let scratch = try ScratchDirectory("full-disk")
        path = scratch.path
        let fill =
            "mount -t tmpfs -o size=64k,nr_inodes=64 ipdirect-full '\(path)' && "
            + "(dd if=/dev/zero of='\(path)/filler' bs=4k 2>/dev/null; true)"
        let result = try await ChildProcess.run("/bin/sh", ["-c", fill], seconds: 30)
        guard result.status == 0 else {
            scratch.remove()
            throw POSIXError(.EPERM)
        }
    }

    /// Unmounts the file system and removes the directory.
    public func remove() {
        _ = umount2(path, Int32(MNT_DETACH))
        _ = rmdir(path)
    }
}

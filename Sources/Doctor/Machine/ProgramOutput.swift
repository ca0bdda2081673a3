// What a program the doctor asks about the machine (`resolvectl status`) writes, run with
// posix_spawn: its standard output read to the end, its errors discarded, nothing else passed on.
import FoundationGaps

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program's standard output.
enum ProgramOutput {
    /// Runs `path` with `arguments` and returns the first `limit` bytes it writes to standard
    /// output, once it has closed its output and exited; nil when it cannot be started.
    ///
    /// It blocks the calling thread until then, so callers run it on a thread of their own behind
    /// a deadline. The program reads /dev/null, its standard error goes to /dev/null, and it gets
    /// no other descriptor of ipdirect's (the lab's sockets, the cache file) and default signal
    /// handling, whatever the calling thread blocks.
    static func of(_ path: String, _ arguments: [String], limit: Int = 1 << 16) -> String? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        // Not into other programs ipdirect starts meanwhile (the Glibc module has no pipe2).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }

        let pid: pid_t
        do {
            pid = try spawnProgram(path, arguments, output: .descriptor(writeEnd))
        } catch {
            close(writeEnd)
            close(readEnd)
            return nil
        }
        close(writeEnd)

        // Read to the end (a program blocked on a full pipe would never exit), keep `limit`.
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                output += buffer.prefix(min(count, max(limit - output.count, 0)))
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(readEnd)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }
}

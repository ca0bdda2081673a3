// What a program the doctor asks about the machine (`resolvectl status`) writes, run with
// posix_spawn: its standard output read to the end, its errors discarded, nothing else passed on.
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

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        _ = closeFrom?(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signalNumber) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            return nil
        }

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

/// glibc's posix_spawn_file_actions_addclosefrom_np (2.34 and later), which Swift's Glibc module
/// does not export; nil where the C library lacks it.
private let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt)? = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt).self)
}()

// Starting a program with posix_spawn, as Foundation's Process does underneath: its three standard
// descriptors chosen, no other descriptor of ours passed on, default signal handling.
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a started program's standard input, output or error goes.
public enum ProgramStream: Sendable, Equatable {
    /// /dev/null.
    case null
    /// A file opened for it: read for input; created or emptied (mode 0600) for output.
    case file(String)
    /// A descriptor of ours (a pipe's end), duplicated onto it.
    case descriptor(Int32)
    /// Standard error only: the same as its standard output (`2>&1`).
    case sameAsOutput
}

/// Starts `path` with `arguments`, running apart from ipdirect; the caller collects its exit with
/// `waitpid`.
///
/// The program gets `input`, `output` and `errors` as its standard descriptors and none of ours
/// besides (NIO does not mark its sockets close-on-exec, and a program that outlives us would
/// hold them), and default handling of the signals the caller may ignore or block.
///
/// - Parameters:
///   - path: the program's path.
///   - arguments: its arguments (without the program name).
///   - environment: its whole environment; nil passes ours on.
///   - directory: its working directory; nil keeps ours.
/// - Returns: its process id.
/// - Throws: `POSIXError` when it cannot be started (ENOSYS: a working directory asked of a C
///   library that cannot set one).
public func spawnProgram(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
    input: ProgramStream = .null, output: ProgramStream = .null, errors: ProgramStream = .null
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (descriptor, stream) in [(Int32(0), input), (1, output), (2, errors)] {
        let mode = descriptor == 0 ? O_RDONLY : O_WRONLY
        switch stream {
        case .null: posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", mode, 0)
        case .file(let file):
            let flags = descriptor == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
            posix_spawn_file_actions_addopen(&actions, descriptor, file, flags, 0o600)
        case .descriptor(let own): posix_spawn_file_actions_adddup2(&actions, own, descriptor)
        case .sameAsOutput: posix_spawn_file_actions_adddup2(&actions, 1, descriptor)
        }
    }
    _ = closeFrom?(&actions, 3)
    if let directory {
        guard let changeDirectory else { throw POSIXError(.ENOSYS) }
        _ = changeDirectory(&actions, directory)
    }
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
    let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
    defer { for pointer in envp ?? [] { free(pointer) } }
    var pid: pid_t = 0
    let spawned =
        if let envp {
            posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        } else {
            posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        }
    guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
    return pid
}

/// glibc's posix_spawn_file_actions_addclosefrom_np (2.34 and later), which Swift's Glibc module
/// does not export; nil where the C library lacks it.
private let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt)? = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt).self)
}()

/// glibc's posix_spawn_file_actions_addchdir_np (2.29 and later), looked up the same way.
private let changeDirectory:
    (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> CInt)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else { return nil }
        return unsafeBitCast(
            symbol,
            to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> CInt)
                .self)
    }()

// The one way the test suites run a program (the ipdirect binary, /bin/sh, tmux, python3) and wait
// for it without holding a thread: output goes to files, the exit is polled between async sleeps.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program the test started, running apart from the test process.
///
/// Tests run in parallel on a handful of cooperative threads: a test that blocks one of them
/// (`waitUntilExit`, a blocking pipe read, `Thread.sleep`) starves every other test's deadlines.
/// So standard output and error go to files read at any time, and `exitStatus` polls `waitpid`
/// between `Task.sleep`s. The child gets nothing of the test process but its three standard
/// descriptors (no inherited lab sockets) and default signal handling.
public final class ChildProcess: @unchecked Sendable {
    /// What a finished program said.
    public struct Result: Sendable {
        /// The exit status; 128 plus the signal number when a signal ended it; -1 when it is unknown
        /// (something else in the test process collected it).
        public var status: Int32
        public var output: String
        public var errors: String
    }

    /// Where the program's standard error goes.
    public enum Errors: Sendable {
        /// A file of its own (`errors`).
        case captured
        /// The same file as standard output (`2>&1`).
        case toOutput
        /// Nowhere.
        case discarded
    }

    /// The process id.
    public let pid: pid_t
    private let outputPath: String?
    private let errorsPath: String?
    private let inputPath: String?
    private let lock = NSLock()
    // Behind `lock`.
    private var reaped: Int32?
    private var lineOffset = 0

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: the program's path.
    ///   - arguments: its arguments (without the program name).
    ///   - environment: its whole environment; nil passes the test process's on.
    ///   - directory: its working directory; nil keeps the test's.
    ///   - input: what it reads on standard input; nil gives it /dev/null.
    ///   - captureOutput: keep standard output (otherwise it goes to /dev/null).
    ///   - errors: where standard error goes.
    /// - Throws: `POSIXError` when the program cannot be started.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        directory: String? = nil, input: String? = nil, captureOutput: Bool = true, errors: Errors = .captured
    ) throws {
        let scratch = NSTemporaryDirectory() + "ipdirect-child-\(UUID().uuidString)"
        outputPath = captureOutput || errors == .toOutput ? scratch + ".out" : nil
        errorsPath = errors == .captured ? scratch + ".err" : nil
        inputPath = input == nil ? nil : scratch + ".in"
        if let inputPath, let input { try Data(input.utf8).write(to: URL(fileURLWithPath: inputPath)) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath ?? "/dev/null", O_RDONLY, 0)
        let create = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 1, outputPath ?? "/dev/null", create, 0o600)
        switch errors {
        case .captured: posix_spawn_file_actions_addopen(&actions, 2, errorsPath!, create, 0o600)
        case .toOutput: posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .discarded: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // Nothing else of the test process: a child that outlives its test (a tmux server) would
        // hold other tests' sockets (NIO does not mark them close-on-exec), keeping ports taken.
        _ = closeFrom?(&actions, 3)
        if let directory {
            guard let changeDirectory = changeDirectory else { throw POSIXError(.ENOSYS) }
            _ = changeDirectory(&actions, directory)
        }
        // The test runner may ignore or block signals; the child must not inherit that.
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

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { Self.withSanitizerSettings($0).map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let spawned =
            if let envp {
                posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            } else {
                posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
            }
        guard spawned == 0 else {
            for path in [outputPath, errorsPath, inputPath].compactMap({ $0 }) { unlink(path) }
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL)
        }
        self.pid = pid
    }

    /// Ends a program still running (SIGKILL) so no child outlives its test, and removes the files.
    deinit {
        if reaped == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        for path in [outputPath, errorsPath, inputPath].compactMap({ $0 }) { unlink(path) }
    }

    /// `environment` with the sanitizers' settings of the test process added (`make asan`, `make
    /// tsan`): they configure the instrumented runtime of the program, not what it does, so a test
    /// that gives a program a whole environment of its own still runs it as the sanitizer run meant
    /// (leak detection off, reports to files).
    private static func withSanitizerSettings(_ environment: [String: String]) -> [String: String] {
        let own = ProcessInfo.processInfo.environment
        var result = environment
        for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"] where result[name] == nil {
            result[name] = own[name]
        }
        return result
    }

    /// Runs a program to its end and returns what it said.
    ///
    /// - Parameters: as `init`, and `seconds`: how long it may run before it is killed.
    /// - Returns: its status (nil-free: a killed program reads as 128 + SIGKILL), output and errors.
    /// - Throws: `POSIXError` when it cannot be started; `CancellationError` when the test is cancelled.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        directory: String? = nil, input: String? = nil, errors: Errors = .captured, seconds: Double = 120
    ) async throws -> Result {
        let child = try ChildProcess(
            executable, arguments, environment: environment, directory: directory, input: input, errors: errors)
        let status = try await child.exitStatus(within: seconds) ?? 128 + SIGKILL
        return Result(status: status, output: child.outputText, errors: child.errorsText)
    }

    /// Sends a signal (SIGINT for a Ctrl-C, SIGTERM to ask it to stop).
    public func signal(_ number: Int32) {
        lock.withLock { if reaped == nil { kill(pid, number) } }
    }

    /// Whether it has not exited yet.
    public var isRunning: Bool { poll() == nil }

    /// Waits for the exit without holding a thread.
    ///
    /// - Parameter seconds: how long to wait before killing it.
    /// - Returns: the exit status (128 plus the signal number when a signal ended it); nil when it
    ///   was still running after `seconds` and had to be killed.
    /// - Throws: `CancellationError` when the test is cancelled.
    public func exitStatus(within seconds: Double = 60) async throws -> Int32? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var pause = Duration.milliseconds(1)
        while ContinuousClock.now < deadline {
            if let status = poll() { return status }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        if let status = poll() { return status }
        signal(SIGKILL)
        while poll() == nil { try await Task.sleep(for: .milliseconds(5)) }
        return nil
    }

    /// Standard output so far.
    public var output: Data { outputPath.flatMap { FileManager.default.contents(atPath: $0) } ?? Data() }

    /// Standard output so far, as text.
    public var outputText: String { String(decoding: output, as: UTF8.self) }

    /// Standard error so far, as text.
    public var errorsText: String {
        String(decoding: errorsPath.flatMap { FileManager.default.contents(atPath: $0) } ?? Data(), as: UTF8.self)
    }

    /// The next complete line of standard output, waiting for it without holding a thread; the
    /// last unfinished line once the program has exited; nil when nothing is left.
    ///
    /// - Parameter seconds: how long to wait for a line before giving up (nil).
    public func nextLine(within seconds: Double = 60) async throws -> String? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let exited = !isRunning
            let data = output
            let line: Data? = lock.withLock {
                let rest = data.dropFirst(lineOffset)
                if let end = rest.firstIndex(of: 0x0A) {
                    lineOffset = end + 1 - data.startIndex
                    return Data(rest[..<end])
                }
                if exited && !rest.isEmpty {
                    lineOffset = data.count
                    return Data(rest)
                }
                return nil
            }
            if let line { return String(decoding: line, as: UTF8.self) }
            if exited || ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The exit status once it has exited (reaping it the first time), nil while it runs.
    private func poll() -> Int32? {
        lock.withLock {
            if let reaped { return reaped }
            var status: Int32 = 0
            var result = waitpid(pid, &status, WNOHANG)
            while result < 0 && errno == EINTR { result = waitpid(pid, &status, WNOHANG) }
            // ECHILD: something else in the test process reaped it; it has exited, status unknown.
            if result < 0 && errno == ECHILD {
                reaped = -1
                return reaped
            }
            guard result == pid else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
            let signalNumber = status & 0x7f
            reaped = signalNumber == 0 ? (status >> 8) & 0xff : 128 + signalNumber
            return reaped
        }
    }
}

/// The binaries the package builds, found beside the test bundle.
public enum BuiltBinary {
    /// The variable naming the `ipdirect` binary to test instead of the one built beside the tests
    /// (`make test-release` points it at the release binary that goes into the package).
    public static let override = "IPDIRECT_BINARY"

    /// The `ipdirect` executable the tests run: the one `IPDIRECT_BINARY` names, else the one
    /// built beside the test bundle; nil when the build made none. Every test that starts the
    /// binary finds it here, so one variable points the whole suite at another build.
    public static let ipdirect: String? = {
        if let named = ProcessInfo.processInfo.environment[override], !named.isEmpty {
            let path = URL(fileURLWithPath: named).standardizedFileURL.path
            // A wrong path would otherwise quietly skip the suites that need the binary, or test
            // the debug build while the run says it tested another.
            guard FileManager.default.isExecutableFile(atPath: path) else {
                preconditionFailure("\(override) names \(path), which is not an executable file")
            }
            return path
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("ipdirect").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }()

    /// The `ipdirect` executable of this build, else where `swift build` puts it (a test that
    /// runs it then fails saying the file is missing).
    public static var ipdirectPath: String {
        if let ipdirect { return ipdirect }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/ipdirect").path
    }
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

extension ChildProcess {
    /// Runs shell text with /bin/sh, as a person pasting a command would.
    ///
    /// - Parameters:
    ///   - command: the shell text.
    ///   - environment: variables added to the test process's environment.
    /// - Returns: its status, output and errors.
    /// - Throws: `POSIXError` when /bin/sh cannot be started.
    public static func shell(_ command: String, environment: [String: String] = [:]) async throws -> Result {
        try await run(
            "/bin/sh", ["-c", command],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    }
}

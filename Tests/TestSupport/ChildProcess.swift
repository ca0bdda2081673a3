// The one way the test suites run a program (the ipdirect binary, /bin/sh, tmux, python3) and wait
// for it without holding a thread: output goes to files, the exit is polled between async sleeps.
import Foundation
import FoundationGaps

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

        do {
            pid = try spawnProgram(
                executable, arguments, environment: environment.map(Self.withSanitizerSettings), directory: directory,
                input: inputPath.map { .file($0) } ?? .null, output: outputPath.map { .file($0) } ?? .null,
                errors: errors == .captured ? .file(errorsPath!) : errors == .toOutput ? .sameAsOutput : .null)
        } catch {
            for path in [outputPath, errorsPath, inputPath].compactMap({ $0 }) { unlink(path) }
            throw error
        }
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

// spawnProgram against Foundation's Process, which it replaces in the binary: the same output,
// errors, exit status, environment and working directory; and what Process leaves to its caller.
import Foundation
import FoundationGaps
import Testing

@Suite struct ProgramSpawnTests {
    static let script = #"echo "$GREETING from $(pwd)"; echo oops >&2; read line; echo "read $line"; exit 3"#

    /// Waits for `pid` (a short script) and returns its exit status.
    private func exitStatus(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xff
    }

    private func contents(_ path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    @Test("a program started with files for its streams says what it says under Process")
    func sameAsProcess() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ["GREETING": "hello", "PATH": "/usr/bin:/bin"]
        let input = directory.appendingPathComponent("in").path
        try "a line\n".write(toFile: input, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", Self.script]
        process.environment = environment
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle(forReadingAtPath: input)
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let expectedOutput = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let expectedErrors = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        let (outputFile, errorsFile) = (
            directory.appendingPathComponent("out").path, directory.appendingPathComponent("err").path
        )
        let pid = try spawnProgram(
            "/bin/sh", ["-c", Self.script], environment: environment, directory: directory.path,
            input: .file(input), output: .file(outputFile), errors: .file(errorsFile))
        #expect(exitStatus(pid) == process.terminationStatus)
        #expect(contents(outputFile) == expectedOutput)
        #expect(contents(errorsFile) == expectedErrors)
        #expect(expectedOutput == "hello from \(directory.path)\nread a line\n")
    }

    @Test("a pipe's end as standard output, errors to the same place, and nothing else of ours passed on")
    func pipeAndNoOtherDescriptor() throws {
        // Open without close-on-exec, as NIO's sockets are.
        let extra = open("/dev/null", O_RDONLY)
        try #require(extra > 2)
        defer { close(extra) }
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        let script = "echo out; echo err >&2; [ -e /proc/$$/fd/\(extra) ] && echo inherited; exit 0"
        let pid = try spawnProgram("/bin/sh", ["-c", script], output: .descriptor(ends[1]), errors: .sameAsOutput)
        close(ends[1])
        let said = String(
            decoding: FileHandle(fileDescriptor: ends[0], closeOnDealloc: true).readDataToEndOfFile(), as: UTF8.self)
        #expect(exitStatus(pid) == 0)
        #expect(said == "out\nerr\n")
    }

    @Test("a program that is not there cannot be started: ENOENT")
    func missingProgram() {
        #expect(throws: POSIXError(.ENOENT)) { try spawnProgram("/nonexistent/program", []) }
    }
}

// Reading a file a user names or ipdirect keeps: any file the shell can hand over (a pipe, process
// substitution) where that makes sense, a regular file only where one is expected, and a sentence why not.
import FoundationEssentials
import FoundationGaps

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a file a user named cannot be read, in words.
public struct TextFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path as the user gave it.
    public var path: String
    /// What is wrong: "it does not exist", "it is a directory", ...
    public var reason: String

    public var description: String { "cannot read \(path): \(reason)" }
}

/// Whole text files, read with open(2) and read(2) to the end.
///
/// Foundation's `String(contentsOfFile:)` refuses a pipe (`--input <(grep ...)`, `/dev/stdin`)
/// as "permission denied", and stops at the first page of a /proc file.
public enum TextFile {
    /// The largest file read: a target list or a configuration is kilobytes, and a path such as
    /// /dev/zero must end in a sentence, not in memory exhaustion.
    public static let limit = 64 << 20

    /// Which kinds of file a reader takes.
    public enum Accepting: Sendable {
        /// Whatever the shell can hand over: a regular file, a pipe, process substitution
        /// (`/dev/fd/N`), `-` for standard input, a /proc file (`probe --input`, `--data @FILE`).
        case anyFile
        /// A regular file only: ipdirect's own files (configuration, cache), files it re-reads
        /// (the agent's list) and files handed to libcurl (CA files). A FIFO nobody writes would
        /// block the read forever, a device never ends: refused before a byte is read.
        case regularFile
    }

    /// The UTF-8 text of `path`, read to its end; `-` is standard input.
    ///
    /// - Parameter accepting: `.regularFile` refuses FIFOs, devices, sockets and directories.
    /// - Throws: `TextFileError` saying why the file cannot be read.
    public static func contents(of path: String, accepting: Accepting = .anyFile) throws(TextFileError) -> String {
        guard let text = String(validating: try bytes(of: path, accepting: accepting), as: UTF8.self) else {
            throw TextFileError(path: path, reason: "it is not UTF-8 text")
        }
        return text
    }

    /// The bytes of `path`, read to its end; `-` is standard input.
    ///
    /// - Parameter accepting: `.regularFile` refuses FIFOs, devices, sockets and directories.
    /// - Throws: `TextFileError` saying why the file cannot be read.
    public static func bytes(of path: String, accepting: Accepting = .anyFile) throws(TextFileError) -> [UInt8] {
        if accepting == .regularFile { try requireRegularFile(path) }
        // Non-blocking open: a FIFO put in place after the check above must not block the open;
        // fstat below then refuses it.
        let flags = O_RDONLY | O_CLOEXEC | (accepting == .regularFile ? O_NONBLOCK : 0)
        let descriptor = path == "-" ? dup(STDIN_FILENO) : open(path, flags)
        guard descriptor >= 0 else { throw TextFileError(path: path, reason: reason(errno)) }
        defer { close(descriptor) }
        if accepting == .regularFile {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw TextFileError(path: path, reason: reason(errno)) }
            if let kind = notRegular(info.st_mode) { throw TextFileError(path: path, reason: kind) }
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw TextFileError(path: path, reason: reason(errno))
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
            guard bytes.count <= limit else {
                throw TextFileError(
                    path: path, reason: "it is larger than \(limit >> 20) MB; is it the file you meant?")
            }
        }
        return bytes
    }

    /// Checks that `path` is a regular file (symbolic links followed) without opening it: for a
    /// path handed to another reader (libcurl's CA file) that must never block or run forever.
    ///
    /// - Throws: `TextFileError`: "it does not exist", "it is a FIFO, not a regular file", ...
    public static func requireRegularFile(_ path: String) throws(TextFileError) {
        var info = stat()
        let found = path == "-" ? fstat(STDIN_FILENO, &info) : stat(path, &info)
        guard found == 0 else { throw TextFileError(path: path, reason: reason(errno)) }
        if let kind = notRegular(info.st_mode) { throw TextFileError(path: path, reason: kind) }
    }

    /// What a file that is not regular is, as a reason; nil for a regular file.
    static func notRegular(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "it is a directory"
        case S_IFIFO: "it is a FIFO, not a regular file"
        case S_IFCHR: "it is a character device, not a regular file"
        case S_IFBLK: "it is a block device, not a regular file"
        case S_IFSOCK: "it is a socket, not a regular file"
        default: "it is not a regular file"
        }
    }

    /// An errno from open or read, in words.
    static func reason(_ code: Int32) -> String { SystemReason.words(code) }
}

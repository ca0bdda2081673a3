// Reading a text file a user names (configuration, target lists): any file the shell can hand
// over, a pipe or process substitution included, with a sentence saying why one cannot be read.
import Foundation

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

    /// The UTF-8 text of `path`, read to its end; `-` is standard input.
    ///
    /// - Throws: `TextFileError` saying why the file cannot be read.
    public static func contents(of path: String) throws(TextFileError) -> String {
        let descriptor = path == "-" ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw TextFileError(path: path, reason: reason(errno)) }
        defer { close(descriptor) }
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
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw TextFileError(path: path, reason: "it is not UTF-8 text")
        }
        return text
    }

    /// An errno from open or read, in words.
    static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "it does not exist"
        case EACCES, EPERM: "permission denied"
        case EISDIR: "it is a directory"
        default: String(cString: strerror(code))
        }
    }
}

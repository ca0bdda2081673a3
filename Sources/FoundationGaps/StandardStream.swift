// Writing to standard output and standard error whole, retried on EINTR and short writes:
// what FileHandle.standardOutput.write did, without the full Foundation.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard output or standard error, written with write(2).
public enum StandardStream: Sendable {
    case output
    case error

    private var descriptor: Int32 { self == .output ? STDOUT_FILENO : STDERR_FILENO }

    /// Writes `text` as UTF-8.
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes `bytes` (a `Data`, an array).
    public func write(_ bytes: some Collection<UInt8>) {
        if let done = bytes.withContiguousStorageIfAvailable({ write(UnsafeRawBufferPointer($0)) }) { return done }
        Array(bytes).withUnsafeBytes { write($0) }
    }

    /// Writes every byte unless the stream is closed or broken (EPIPE, EBADF): a reader that went
    /// away is not an error ipdirect can report anywhere.
    private func write(_ buffer: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < buffer.count {
            let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// write(2) under a name of its own: inside `StandardStream` its `write` methods hide the C one, and
/// naming the module (`Glibc.write`) would build on glibc only.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

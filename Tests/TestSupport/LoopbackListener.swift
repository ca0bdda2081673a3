// A loopback listener that accepts nothing, for tests of an address that never answers: with its
// accept queue full, Linux drops every further SYN and a client's connect gets no answer at all.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP listener on loopback that accepts nothing (or resets what it accepts: `resetEach`). With `silent`, its accept queue is filled
/// first, so Linux drops every further SYN and a client's connect gets no answer at all.
public final class LoopbackListener {
    /// The listening socket.
    public let fd: Int32
    private var fillers: [Int32] = []

    /// Binds `ip`:`port` (0 for a free port) and listens; with `silent`, fills the queue.
    ///
    /// - Throws: the `POSIXError` of a bind or listen that failed.
    public init(ip: String, port: UInt16, silent: Bool) throws {
        #if canImport(Glibc)
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, ip, &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, silent ? 0 : 16) == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EINVAL)
        }
        guard silent else { return }
        for _ in 0..<2 {
            #if canImport(Glibc)
                let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
                let filler = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL, 0) | O_NONBLOCK)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.append(filler)
        }
        // Let the handshakes the queue takes complete before anyone else knocks.
        usleep(200_000)
    }

    /// The port the kernel chose.
    public var port: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Accepts up to `count` connections, each reset at once (RST, as a middlebox that kills the
    /// connection does), on a thread of its own that ends with the listener.
    public func resetEach(upTo count: Int) {
        let fd = fd
        Thread.detachNewThread {
            for _ in 0..<count {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                // A zero linger makes close send RST instead of FIN.
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                close(connection)
            }
        }
    }

    deinit {
        for filler in fillers { close(filler) }
        // Wakes a thread blocked in accept (close alone does not, on Linux).
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}

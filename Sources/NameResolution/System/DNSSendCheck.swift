// When c-ares says "connection refused" it means any socket error: this asks the kernel once
// more, with a plain socket, which it was (a refusal from the server, a local firewall, no route).

import CurlTransport
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What stopped a query to a DNS server, read from the errno of a plain socket's connect and send.
enum DNSSendCheck {
    /// How long a refusal (an ICMP port unreachable, a TCP RST) is waited for after the send.
    static let refusalWait: Int32 = 300

    /// The failure the kernel reports for `query` sent to `server` over `transport`; nil when
    /// none shows (a reply came, or silence: the caller's own reading stands).
    static func failure(server: DNSServer, transport: DNSTransport, query: [UInt8]) -> ConnectionFailure? {
        let family = server.address.family == .v4 ? AF_INET : AF_INET6
        #if canImport(Darwin)
            let type = transport == .udp ? SOCK_DGRAM : SOCK_STREAM
        #else
            let type = Int32((transport == .udp ? SOCK_DGRAM : SOCK_STREAM).rawValue)
        #endif
        let fd = socket(family, type, 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        guard let (address, length) = server.address.socketAddress(port: server.port) else { return nil }
        var storage = address
        let connected = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if connected != 0 && errno != EINPROGRESS { return ConnectionFailure(errno: errno) }
        if transport == .tcp {
            // The handshake's end: refused, reset, or a local filter on the SYN.
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&entry, 1, refusalWait) > 0 else { return nil }
            return socketError(fd)
        }
        let sent = query.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        if sent < 0 { return ConnectionFailure(errno: errno) }
        // A refusal comes back as an ICMP message the next receive reports.
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, refusalWait) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        if recv(fd, &buffer, buffer.count, 0) < 0 { return ConnectionFailure(errno: errno) }
        return nil
    }

    /// The pending error of a socket (SO_ERROR), nil when none.
    private static func socketError(_ fd: Int32) -> ConnectionFailure? {
        var code: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &size) == 0, code != 0 else { return nil }
        return ConnectionFailure(errno: code)
    }
}

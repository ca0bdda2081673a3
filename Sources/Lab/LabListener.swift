// How a lab holds its ports: each server's sockets are bound once at start and given back only at
// shutdown, so no other lab or client can take a port while the HTTPDNS service is `down`.
import FoundationEssentials
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP socket bound to one address and port from the lab's start to its shutdown.
///
/// Listening is separate from holding: the lab hands a duplicate of the descriptor to NIO to
/// accept on, and takes listening away again (`refuse()`) while keeping the port bound, so the
/// kernel refuses connections and nothing else can bind the port meanwhile.
final class ReservedSocket: Sendable {
    let port: Int
    private let descriptor: CInt

    /// Binds `address`:`port`; port 0 picks a free port, held as firmly as a fixed one.
    ///
    /// - Throws: `LabError` naming the server and port when the port is taken or no socket can be made.
    init(role: LabRole, address: String, port: Int) throws {
        let target: SocketAddress
        do {
            target = try SocketAddress(ipAddress: address, port: port)
        } catch {
            throw LabError("the lab's \(role.rawValue) server cannot use the address \(address): \(error)")
        }
        // Linux keeps an explicitly bound port through shutdown(2) of the listener, but gives back
        // one the kernel picked for port 0: so a free port is found on a scratch socket and then
        // bound explicitly (both with SO_REUSEADDR, neither listening, so the two may share it).
        // SO_REUSEADDR stays on only while the socket listens: a socket bound without it blocks
        // every other bind of the port, and with it a listener may start beside the TIME_WAIT
        // connections an earlier listener left.
        var chosen = port
        var scratch: CInt = -1
        defer { if scratch >= 0 { close(scratch) } }
        if port == 0 {
            scratch = try Self.boundSocket(target, role: role)
            chosen = try Self.localPort(of: scratch, role: role)
        }
        let wanted = try SocketAddress(ipAddress: address, port: chosen)
        descriptor = try Self.boundSocket(wanted, role: role)
        Self.setReuseAddress(descriptor, false)
        self.port = chosen
    }

    /// Listens, and returns a duplicate descriptor for NIO to accept on; NIO owns the duplicate
    /// (closing it leaves this reservation in place).
    ///
    /// Listening here rather than in NIO keeps a failure (another socket listening on the port)
    /// a thrown error instead of a channel NIO half made.
    ///
    /// - Throws: `LabError` when the socket cannot listen or no descriptor is left to spare.
    func listeningDuplicate(role: LabRole, backlog: CInt = 128) throws -> CInt {
        Self.setReuseAddress(descriptor, true)
        guard listen(descriptor, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            Self.setReuseAddress(descriptor, false)
            throw LabError("the lab's \(role.rawValue) server cannot listen on port \(port): \(reason)")
        }
        // Close-on-exec like the original: a child process (a test's tmux server) must not
        // inherit the listener and hold the port after the lab gave it back.
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else {
            throw LabError(
                "the lab's \(role.rawValue) server cannot listen on port \(port): \(String(cString: strerror(errno)))")
        }
        return duplicate
    }

    /// Stops listening and keeps the port bound: connections are refused from now on.
    ///
    /// - Throws: `LabError` when the system keeps the socket listening (shutdown(2) on a listening
    ///   socket stops it on Linux only).
    func refuse(role: LabRole) throws {
        _ = shutdown(descriptor, CInt(SHUT_RD))
        Self.setReuseAddress(descriptor, false)
        var listening: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening == 0 else {
            throw LabError(
                "the lab's \(role.rawValue) server cannot stop listening on port \(port) without giving the port away on this system; the down fault needs Linux"
            )
        }
    }

    /// Gives the port back. Call once, after NIO's duplicate is closed.
    func release() { close(descriptor) }

    private static func setReuseAddress(_ descriptor: CInt, _ on: Bool) {
        var value: CInt = on ? 1 : 0
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &value, socklen_t(MemoryLayout<CInt>.size))
    }

    private static func boundSocket(_ address: SocketAddress, role: LabRole) throws -> CInt {
        #if os(Linux)
            let descriptor = socket(
                CInt(address.protocol.rawValue), CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(CInt(address.protocol.rawValue), SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else {
            throw LabError(
                "the lab's \(role.rawValue) server cannot make a socket: \(String(cString: strerror(errno)))")
        }
        setReuseAddress(descriptor, true)
        let result = address.withSockAddr { bind(descriptor, $0, socklen_t($1)) }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            let port = address.port ?? 0
            if code == EADDRINUSE {
                throw LabError(
                    "the lab's \(role.rawValue) server cannot listen on port \(port): it is already in use (another lab, or another program)"
                )
            }
            throw LabError(
                "the lab's \(role.rawValue) server cannot bind \(address.ipAddress ?? "?") port \(port): \(String(cString: strerror(code)))"
            )
        }
        return descriptor
    }

    private static func localPort(of descriptor: CInt, role: LabRole) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else {
            throw LabError(
                "the lab's \(role.rawValue) server cannot read the port it was given: \(String(cString: strerror(errno)))"
            )
        }
        // sin_port and sin6_port lie at the same place, after the two bytes of the family (the
        // structs' fields are declared by NIO's C module, which the lab does not import).
        let port = withUnsafeBytes(of: storage) { $0.load(fromByteOffset: 2, as: UInt16.self) }
        return Int(UInt16(bigEndian: port))
    }
}

/// One lab server on its reserved sockets (one per address, all on one port): accepting while
/// open, refusing while closed, and holding its port throughout.
actor LabListener {
    nonisolated let server: LabServer
    nonisolated let port: Int
    private let sockets: [ReservedSocket]
    private let group: any EventLoopGroup
    private let connections: LabConnections
    private var channels: [any Channel] = []
    private var released = false

    /// Reserves the server's port on every address (nothing listens yet).
    ///
    /// - Parameter port: the port, 0 for a free one (the same free port then serves every address).
    /// - Throws: `LabError` when the port is taken.
    init(server: LabServer, port: Int, group: any EventLoopGroup, connections: LabConnections) throws {
        self.server = server
        self.group = group
        self.connections = connections
        (sockets, self.port) = try Self.reserve(server, port: port)
    }

    /// A free port on 127.0.0.1 may be taken on ::1: try a few before giving up.
    private static func reserve(_ server: LabServer, port: Int) throws -> ([ReservedSocket], Int) {
        var lastError: (any Error)?
        for _ in 0..<(port == 0 && server.addresses.count > 1 ? 8 : 1) {
            var sockets: [ReservedSocket] = []
            do {
                var chosen = port
                for address in server.addresses {
                    let socket = try ReservedSocket(role: server.role, address: address, port: chosen)
                    sockets.append(socket)
                    chosen = socket.port
                }
                return (sockets, chosen)
            } catch {
                lastError = error
                for socket in sockets { socket.release() }
            }
        }
        throw lastError ?? LabError("the lab's \(server.role.rawValue) server found no free port")
    }

    /// Starts accepting (again). Does nothing while open.
    ///
    /// - Throws: `LabError` when NIO cannot take the socket.
    func open() async throws {
        guard channels.isEmpty, !released else { return }
        var opened: [any Channel] = []
        do {
            for socket in sockets {
                let duplicate = try socket.listeningDuplicate(role: server.role)
                opened.append(
                    try await server.bootstrap(group: group, connections: connections).withBoundSocket(duplicate).get())
            }
        } catch {
            for channel in opened { try? await channel.close() }
            if let error = error as? LabError { throw error }
            throw LabError("the lab's \(server.role.rawValue) server cannot listen on port \(port): \(error)")
        }
        channels = opened
    }

    /// Stops accepting and closes the connections it accepted; the port stays reserved and the
    /// kernel refuses new connections.
    ///
    /// - Throws: `LabError` when the system cannot stop a listener without giving its port away.
    func refuse() async throws {
        let open = channels
        channels = []
        for channel in open { try? await channel.close() }
        if !released {
            for socket in sockets { try socket.refuse(role: server.role) }
        }
        await connections.closeAll()
    }

    /// Closes everything and gives the port back. Calling it again does nothing.
    func release() async {
        let open = channels
        channels = []
        for channel in open { try? await channel.close() }
        await connections.closeAll()
        guard !released else { return }
        released = true
        for socket in sockets { socket.release() }
    }
}

/// Binds a plain TCP server on `host`:`port` (0: a free one) whose every connection gets the
/// handler `makeHandler` makes; returns its channel, closed at the lab's shutdown.
func bindStreamServer(
    group: any EventLoopGroup, host: String, port: Int, connections: LabConnections,
    makeHandler: @escaping @Sendable () -> any ChannelHandler
) async throws -> any Channel {
    try await ServerBootstrap(group: group)
        .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            connections.add(channel)
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(makeHandler())
            }
        }
        .bind(host: host, port: port).get()
}

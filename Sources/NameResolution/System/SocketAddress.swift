// An address and port as the kernel takes them (sockaddr_in or sockaddr_in6 in a
// sockaddr_storage): the one place a socket's address is filled in, for IPv4 and IPv6 alike.
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension IPAddress {
    /// The socket address of this address and `port`, with its length; nil when `inet_pton`
    /// does not take the text (never for an address parsed as a literal).
    public func socketAddress(port: Int) -> (storage: sockaddr_storage, length: socklen_t)? {
        let networkPort = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        /// `address` copied into the storage every family fits in, with its own length.
        func stored<Address>(_ address: Address) -> (sockaddr_storage, socklen_t) {
            var storage = sockaddr_storage()
            withUnsafeBytes(of: address) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            }
            return (storage, socklen_t(MemoryLayout<Address>.size))
        }
        if family == .v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = networkPort
            guard inet_pton(AF_INET6, text, &address.sin6_addr) == 1 else { return nil }
            return stored(address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = networkPort
        guard inet_pton(AF_INET, text, &address.sin_addr) == 1 else { return nil }
        return stored(address)
    }
}

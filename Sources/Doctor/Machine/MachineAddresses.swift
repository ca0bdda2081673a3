// This machine's own addresses (getifaddrs) and the scope of an address (loopback, link-local,
// private, shared, public): what the client address check sets against the address a service saw.
import FoundationEssentials
import NameResolution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where an address can be reached from, as far as its range tells.
public enum AddressScope: String, Sendable, CaseIterable {
    /// 127.0.0.0/8, ::1: this machine only.
    case loopback
    /// 169.254.0.0/16, fe80::/10: this link only.
    case linkLocal = "link-local"
    /// RFC 1918 (10/8, 172.16/12, 192.168/16) and IPv6 unique local (fc00::/7): one site's own.
    case privateNetwork = "private"
    /// RFC 6598 100.64.0.0/10: a carrier's NAT (CGNAT) between its subscribers and the internet.
    case carrierShared = "carrier-shared"
    /// Everything else: an address of the internet itself, which a service there can tell apart.
    case publicInternet = "public"

    /// The scope of `address`.
    public init(_ address: IPAddress) {
        let b = IPBytes.of(address)
        if address.family == .v4 {
            switch (b[0], b[1]) {
            case (127, _): self = .loopback
            case (169, 254): self = .linkLocal
            case (10, _), (172, 16...31), (192, 168): self = .privateNetwork
            case (100, 64...127): self = .carrierShared
            default: self = .publicInternet
            }
            return
        }
        if b == IPBytes.loopbackV6 {
            self = .loopback
        } else if b[0] == 0xFE && b[1] & 0xC0 == 0x80 {
            self = .linkLocal
        } else if b[0] & 0xFE == 0xFC {
            self = .privateNetwork
        } else if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF,
            let v4 = IPAddress(b[12...].map(String.init).joined(separator: "."))
        {
            self = AddressScope(v4)
        } else {
            self = .publicInternet
        }
    }

    /// Whether it is an address of the internet itself, not of one network behind NAT (not to
    /// be read as `InterfaceAddress.isGlobal`, which means beyond this machine's link).
    public var isPublic: Bool { self == .publicInternet }
}

/// The addresses of this machine's interfaces that are up.
public enum MachineAddresses {
    /// Every address of every interface that is up, loopback included, in getifaddrs order
    /// without repeats; empty when getifaddrs fails.
    public static func current() -> [IPAddress] {
        var addresses: [IPAddress] = []
        for entry in InterfaceAddress.all() where !addresses.contains(entry.address) {
            addresses.append(entry.address)
        }
        return addresses
    }
}

// Which addresses a redirect must not lead an agent to: link-local (169.254.0.0/16, fe80::/10,
// also mapped into IPv6) and the cloud metadata addresses outside those ranges.
import NameResolution
import Testing

@Suite("Link-local and metadata addresses")
struct LinkLocalAddressTests {
    @Test(
        "169.254/16, fe80::/10, ::ffff:169.254.x, 100.100.100.200 and fd00:ec2::254 are; loopback and public ones are not"
    )
    func classification() {
        for address in [
            "169.254.169.254", "169.254.0.1", "fe80::1", "FE80::abcd", "febf::1", "fe80::1%eth0",
            "::ffff:169.254.169.254", "100.100.100.200", "fd00:ec2::254",
            // The other IPv6 spellings a kernel carries to the IPv4 address inside.
            "::ffff:0:169.254.169.254", "::169.254.169.254", "::ffff:0:100.100.100.200", "::100.100.100.200",
        ] {
            #expect(IPLiteral.isLinkLocalOrMetadata(address), "\(address)")
        }
        for address in [
            "127.0.0.1", "::1", "10.0.0.1", "169.253.255.255", "169.255.0.1", "fec0::1", "100.100.100.201",
            "8.8.8.8", "metadata.google.internal", "", "169.254.169.254.example",
            // NAT64's prefix is routed as IPv6, to a translator, not to the host's own metadata service.
            "64:ff9b::a9fe:a9fe",
        ] {
            #expect(!IPLiteral.isLinkLocalOrMetadata(address), "\(address)")
        }
    }
}

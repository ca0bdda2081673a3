// What the IP stack check reads off the kernel, from the very text /proc writes: the unreachable
// `::/0` every machine keeps on `lo` is no IPv6 route, and a NAT64 prefix of any RFC 6052 length.

import NameResolution
import Testing

@testable import Doctor

@Suite struct IPStackFactsTests {
    /// /proc/net/ipv6_route of an IPv4-only machine: only the kernel's reject route for `::/0`.
    static let ipv4OnlyIPv6Table = """
        00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000004 00000000 80200001       lo
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
        """

    @Test("the kernel's unreachable ::/0 on lo is not a default route; a real one is, with its next hop")
    func ipv6DefaultRoutes() {
        #expect(DefaultRoute.ipv6(routeTable: Self.ipv4OnlyIPv6Table).isEmpty)
        let routed =
            Self.ipv4OnlyIPv6Table
            + "\n00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000003 00000000 00000003     eth0"
        #expect(
            DefaultRoute.ipv6(routeTable: routed) == [DefaultRoute(family: .v6, interface: "eth0", gateway: "fd00::1")])
    }

    @Test("/proc/net/route's default route, its gateway in the kernel's byte order")
    func ipv4DefaultRoute() {
        let table = """
            Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
            eth0	00000000	010200C0	0003	0	0	0	00000000	0	0	0
            eth0	000200C0	00000000	0001	0	0	0	00FFFFFF	0	0	0
            """
        #expect(
            DefaultRoute.ipv4(routeTable: table) == [DefaultRoute(family: .v4, interface: "eth0", gateway: "192.0.2.1")]
        )
    }

    @Test("NAT64 prefixes of every RFC 6052 length are found, and an address synthesized back into them")
    func nat64Prefixes() throws {
        let cases: [(answer: IPAddress, prefix: String, synthesized: String)] = [
            ("64:ff9b::c000:aa", "64:ff9b::/96", "64:ff9b::7f00:1"),
            ("2001:db8:100:200:c0:0:aa00:0", "2001:db8:100:200::/64", "2001:db8:100:200:7f:0:100:0"),
            ("2001:db8:c000:aa::", "2001:db8::/32", "2001:db8:7f00:1::"),
        ]
        for (answer, prefix, synthesized) in cases {
            let found = try #require(NAT64Prefix.derive(from: [answer]), "\(answer)")
            #expect(found.description == prefix)
            #expect(found.synthesize("127.0.0.1")?.text == synthesized)
        }
        #expect(NAT64Prefix.derive(from: ["2001:db8::1"]) == nil)
    }
}

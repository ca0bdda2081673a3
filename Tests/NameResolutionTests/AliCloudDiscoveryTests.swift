// Alibaba Cloud service discovery against the lab: /{account}/ss names two service IPs on
// loopback; answers say which one answered, and a failing one is rotated past.
import ConfigurationSources
import Foundation
import FoundationGaps
import Lab
import Testing

@testable import NameResolution

@Suite("alicloud service discovery")
struct AliCloudDiscoveryTests {
    /// alicloud with no endpoint: discovery starts at the lab's HTTPDNS address.
    static func discovering(_ lab: Lab) -> ResolverConfiguration {
        var config = ResolverConfiguration(provider: .alicloud, account: lab.endpoints.account)
        config.startIPs = [lab.endpoints.httpdns]
        return config
    }

    @Test("without --endpoint, /ss gives the service IPs and the answer names the one that answered")
    func discovers() async throws {
        try await withLab { lab in
            let provider = try ProviderFactory.make(Self.discovering(lab))
            let answer = try await provider.resolve("sni-a.lab.test", families: [.v4])
            #expect(answer.server == "127.0.0.2")
            #expect(!answer.ipv4.isEmpty)
            let formats = lab.httpdnsQueries().map(\.format)
            #expect(formats.first == "alicloud-ss")
            #expect(lab.httpdnsQueries().first?.path.contains("/\(lab.endpoints.account)/ss?region=") == true)
        }
    }

    @Test("with one service IP down, discovery still answers, from the other service IP, and says so")
    func rotatesPastADownServiceIP() async throws {
        try await withLab { lab in
            lab.setServiceIPDown("127.0.0.2")
            let provider = try ProviderFactory.make(Self.discovering(lab))
            let answer = try await provider.resolve("sni-a.lab.test", families: [.v4])
            #expect(answer.server == "127.0.0.1")
            #expect(lab.httpdnsQueries().contains { $0.format == "service-ip-down 127.0.0.2" && $0.status == 503 })
            // The next query starts at the service IP that works.
            let again = try await provider.resolve("sni-b.lab.test", families: [.v4])
            #expect(again.server == "127.0.0.1")
            #expect(lab.httpdnsQueries().filter { $0.format.hasPrefix("service-ip-down") }.count == 1)
        }
    }

    @Test("when no start IP answers /ss, the start IPs themselves are asked, as the SDK's list starts out")
    func fallsBackToStartIPs() async throws {
        try await withLab { lab in
            var config = ResolverConfiguration(provider: .alicloud, account: "999999")
            config.startIPs = [lab.endpoints.httpdns]
            let provider = try ProviderFactory.make(config)
            let error = await #expect(throws: ResolutionError.self) {
                try await provider.resolve("sni-a.lab.test", families: [.v4])
            }
            // /ss refused the account (InvalidAccount), then /v2/d on the start IP said why.
            #expect(error?.description.contains("InvalidAccount") == true)
            #expect(lab.httpdnsQueries().map(\.format) == ["alicloud-ss", "alicloud-v2"])
        }
    }

    @Test("over HTTPS every service IP's certificate is checked against service_name, not its address")
    func httpsCheckName() async throws {
        try await withLab { lab in
            var config = ResolverConfiguration(
                provider: .alicloud, account: lab.endpoints.account, caFile: lab.endpoints.ca)
            config.startIPs = [lab.endpoints.httpdnsTLS]
            // The lab's certificate does not name 203.107.1.1, the SDKs' name: refused in the handshake.
            let refused = await #expect(throws: ResolutionError.self) {
                try await ProviderFactory.make(config).resolve("sni-a.lab.test", families: [.v4])
            }
            #expect(refused?.description.contains("203.107.1.1") == true, "\(String(describing: refused))")
            #expect(!lab.httpdnsQueries().contains { $0.format == "alicloud-ss" })

            config.serviceName = "httpdns.lab.test"
            let answer = try await ProviderFactory.make(config).resolve("sni-a.lab.test", families: [.v4])
            #expect(answer.server == "127.0.0.2")
            #expect(lab.httpdnsQueries().contains { $0.format == "alicloud-ss" })

            // A service_name that is an address (the SDKs' 203.107.1.1 is one) is matched against
            // the certificate's IP addresses; the lab's names 127.0.0.1 among them.
            config.serviceName = "127.0.0.1"
            let byAddress = try await ProviderFactory.make(config).resolve("sni-a.lab.test", families: [.v4])
            #expect(byAddress.ipv4 == ["127.0.0.1"])
        }
    }

    /// Found behind a real NAT64 (tayga): a start IP synthesized from the prefix, as the doctor
    /// advises, was checked against its own address and refused, where an IPv4 one is not.
    @Test("an IPv6 start IP in start_ips is an address like an IPv4 one: checked against the service name")
    func ipv6StartIsCheckedAgainstTheServiceName() throws {
        let starts = try AliCloudServiceIPs.starts(
            region: "cn", startIPs: ["https://[2001:db8:46::c000:201]:443", "https://192.0.2.1:443"],
            serviceName: "httpdns.lab.test")
        #expect(
            starts == [
                .init(
                    url: "https://[2001:db8:46::c000:201]:443", label: "2001:db8:46::c000:201",
                    checkName: "httpdns.lab.test"),
                .init(url: "https://192.0.2.1:443", label: "192.0.2.1", checkName: "httpdns.lab.test"),
            ])
    }

    @Test("service IPs over HTTPS are checked against the SDK's name, which the configuration changes")
    func certificateName() throws {
        let start = try AliCloudServiceIPs.starts(region: "cn", startIPs: [], serviceName: "203.107.1.1")
        #expect(start.first == .init(url: "https://203.107.1.1", label: "203.107.1.1", checkName: "203.107.1.1"))
        #expect(start.contains { $0.url == "https://[2401:b180:7001::31d]" })
        let body = Array(#"{"service_ip":["1.2.3.4"],"service_ipv6":["2001:db8::1"]}"#.utf8)
        let found = try AliCloudServiceIPs.serviceIPs(
            body, start: .init(url: "https://203.107.1.1", label: "203.107.1.1", checkName: "x"),
            serviceName: "httpdns.example")
        #expect(
            found == [
                .init(url: "https://1.2.3.4", label: "1.2.3.4", checkName: "httpdns.example"),
                .init(url: "https://[2001:db8::1]", label: "2001:db8::1", checkName: "httpdns.example"),
            ])
        let junk = Array(#"{"service_ip":["1.2.3.4\u0000evil"]}"#.utf8)
        #expect(throws: ResolutionError.self) {
            try AliCloudServiceIPs.serviceIPs(
                junk, start: .init(url: "http://203.107.1.1", label: "203.107.1.1"), serviceName: "x")
        }
    }

    @Test(
        "a service_port that is not a port is refused, never put in a URL",
        arguments: ["0", "65536", "-80", "9223372036854775807", "1e30"])
    func servicePortOutOfRange(_ port: String) {
        let body = Array(#"{"service_ip":["1.2.3.4"],"service_port":\#(port)}"#.utf8)
        #expect(throws: ResolutionError.self) {
            try AliCloudServiceIPs.serviceIPs(
                body, start: .init(url: "http://203.107.1.1", label: "203.107.1.1"), serviceName: "x")
        }
    }

    @Test("an unknown region is a sentence listing the regions")
    func unknownRegion() {
        var config = ResolverConfiguration(provider: .alicloud, account: "139450")
        config.region = "mars"
        #expect(
            throws: ResolutionError.misconfigured(
                "alicloud region 'mars' is not one the SDK knows: use one of cn, hk, sg, de, us")
        ) {
            try ProviderFactory.make(config)
        }
    }

    // MARK: Asking for the list again

    /// A discovery against the lab whose clock the test moves, and the count of `/ss` asked.
    private static func schedule(_ lab: Lab, clock: Locked<Date>) -> (AliCloudServiceIPs, @Sendable () -> Int) {
        let e = lab.endpoints
        let discovery = AliCloudServiceIPs.Discovery(
            starts: [AliCloudServiceIPs.Base(url: e.httpdns, label: "start")], account: e.account,
            sessionID: "AAAAAAAAAAAA", transport: HTTPDNSTransport(discovering(lab)), serviceName: "lab")
        let servers = AliCloudServiceIPs(discovery: discovery, now: { clock.withLock { $0 } })
        return (servers, { lab.httpdnsQueries().filter { $0.format == "alicloud-ss" }.count })
    }

    /// Polls between short sleeps until `condition` holds or 20 s pass.
    private static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<400 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test("the service IP list is asked for again after a day, in the background, the old list serving meanwhile")
    func asksAgainAfterADay() async throws {
        try await withLab { lab in
            let clock = Locked(Date())
            let (servers, asked) = Self.schedule(lab, clock: clock)
            #expect(await servers.list().map(\.label) == ["127.0.0.2", "127.0.0.1"])
            clock.withLock { $0 += 23 * 3600 }
            _ = try await servers.current()
            #expect(asked() == 1, "a list younger than a day stands")
            clock.withLock { $0 += 3600 }
            #expect(await servers.list().map(\.label) == ["127.0.0.2", "127.0.0.1"])
            #expect(await Self.eventually { asked() == 2 }, "a day on, /ss is asked again")
        }
    }

    @Test("after a whole round of failing service IPs the list is asked for again, at most every 30 s")
    func asksAgainAfterAFailedRound() async throws {
        try await withLab { lab in
            let clock = Locked(Date())
            let (servers, asked) = Self.schedule(lab, clock: clock)
            let list = await servers.list()
            for base in list { await servers.rotate(past: base) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(asked() == 1, "the list was asked for just now: not again")
            clock.withLock { $0 += 31 }
            for base in list { await servers.rotate(past: base) }
            #expect(await Self.eventually { asked() == 2 })
        }
    }

    @Test("when asking again fails, the service IPs in use stay, and the reason is kept")
    func keepsTheListWhenAskingAgainFails() async throws {
        try await withLab { lab in
            let clock = Locked(Date())
            let (servers, _) = Self.schedule(lab, clock: clock)
            let list = await servers.list()
            try await lab.setFault(.down)
            clock.withLock { $0 += 24 * 3600 }
            _ = await servers.list()
            #expect(
                await Self.eventually {
                    servers.discoveryProblem.withLock { $0?.contains("keeping the service IPs in use") == true }
                })
            #expect(await servers.list() == list)
            try await lab.setFault(.none)
        }
    }
}

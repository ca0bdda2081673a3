// The proxies-and-resolvers check with an environment and a resolv.conf the test writes: what curl
// would send through a proxy (NO_PROXY matched as curl matches it), and a resolver with no server.

import ConfigurationSources
import Doctor
import Foundation
import NameResolution
import TestSupport
import Testing

@Suite struct ProxiesAndResolversCheckTests {
    private let check = DoctorChecks.all.first { $0.id == .proxiesAndResolvers }!

    /// A context for an HTTPS service at 127.0.0.1, with `environment` and a resolv.conf of `resolvConf`.
    private func finding(
        environment: [String: String] = [:], resolvConf: String = "nameserver 10.0.0.53\nsearch corp.example\n",
        hosts: [String] = []
    ) async throws -> DoctorFinding {
        let scratch = try ScratchDirectory("resolvconf")
        defer { scratch.remove() }
        let path = scratch.file("resolv.conf")
        try resolvConf.write(toFile: path, atomically: true, encoding: .utf8)
        let resolver = ResolverConfiguration(
            provider: .alicloud, endpoint: "https://127.0.0.1:8443", account: "139450", timeout: 2)
        let context = DoctorContext(
            resolver: resolver, hosts: hosts, environment: environment, resolvConfPath: path, budget: .seconds(5))
        return await check.run(context)
    }

    @Test("no proxy and a resolv.conf with a nameserver: pass, naming the server and the search list")
    func cleanPasses() async throws {
        let result = try await finding()
        #expect(result.status == .pass, "\(result.seen)")
        #expect(result.seen.contains("No proxy variable is set"))
        #expect(result.seen.contains("nameserver 10.0.0.53"))
        #expect(result.seen.contains("search corp.example"))
    }

    @Test("HTTPS_PROXY covers the service: warn naming the proxy (its password hidden) and NO_PROXY as the way out")
    func proxyCoveringTheServiceWarns() async throws {
        let result = try await finding(environment: ["HTTPS_PROXY": "http://user:hunter2@proxy.example:3128"])
        #expect(result.status == .warn, "\(result.seen)")
        #expect(result.seen.contains("HTTPS_PROXY=http://user:"))
        #expect(result.seen.contains("proxy.example:3128 would carry the HTTPDNS requests to 127.0.0.1"))
        #expect(result.seen.contains("curl honours"))
        #expect(!result.seen.contains("hunter2") && !result.trace.contains { $0.text.contains("hunter2") })
        #expect(result.advice?.contains("to NO_PROXY") == true)
    }

    @Test("a proxy written without a scheme, as curl takes it, keeps its password hidden too")
    func schemelessProxyPasswordHidden() async throws {
        let result = try await finding(environment: ["all_proxy": "user:hunter2@proxy.example:3128"])
        #expect(result.status == .warn, "\(result.seen)")
        #expect(result.seen.contains("all_proxy=user:[redacted]@proxy.example:3128"))
        #expect(!result.seen.contains("hunter2") && !result.trace.contains { $0.text.contains("hunter2") })
    }

    @Test(
        "a proxy password is hidden whatever it holds, with a scheme or without",
        arguments: [
            ("http://user:sekr#etz9@proxy.example:3128", "http://user:[redacted]@proxy.example:3128"),
            ("http://user:sekr/etz9@proxy.example:3128", "http://user:[redacted]@proxy.example:3128"),
            ("http://user:sekr?etz9@proxy.example:3128", "http://user:[redacted]@proxy.example:3128"),
            ("http://user:sekr@etz9@proxy.example:3128", "http://user:[redacted]@proxy.example:3128"),
            ("http://user:sekr:etz9@proxy.example:3128", "http://user:[redacted]@proxy.example:3128"),
            ("http://user:sekr%23etz9@proxy.example:3128", "http://user:[redacted]@proxy.example:3128"),
            ("socks5h://user:sekr://etz9@proxy.example:1080", "socks5h://user:[redacted]@proxy.example:1080"),
            ("user:sekr#etz9@proxy.example:3128", "user:[redacted]@proxy.example:3128"),
            ("user:sekr/etz9@proxy.example:3128", "user:[redacted]@proxy.example:3128"),
            ("user:sekr://etz9@proxy.example:3128", "user:[redacted]@proxy.example:3128"),
            (":sekretz9@proxy.example:3128", ":[redacted]@proxy.example:3128"),
        ])
    func proxyPasswordHidden(value: String, shown: String) async throws {
        let result = try await finding(environment: ["HTTPS_PROXY": value])
        #expect(result.seen.contains("HTTPS_PROXY=\(shown)"), "\(result.seen)")
        let json = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
        for part in ["sekr", "etz9"] {
            #expect(!result.seen.contains(part) && !result.trace.contains { $0.text.contains(part) })
            #expect(!json.contains(part), "\(json)")
        }
    }

    @Test("NO_PROXY as curl reads it: the service's address listed, a domain suffix with a leading dot for --host")
    func noProxyCoversThem() async throws {
        let covered = try await finding(
            environment: ["https_proxy": "http://proxy.example:3128", "NO_PROXY": "127.0.0.1, .example.com"],
            hosts: ["api.example.com"])
        #expect(covered.status == .pass, "\(covered.seen)")
        #expect(covered.seen.contains("carry neither the HTTPDNS service nor the hosts"))

        let probes = try await finding(
            environment: ["https_proxy": "http://proxy.example:3128", "no_proxy": "127.0.0.0/8"],
            hosts: ["api.example.net"])
        #expect(probes.status == .warn)
        #expect(probes.seen.contains("would carry the probes to api.example.net"))
        #expect(!probes.seen.contains("HTTPDNS requests"))
    }

    @Test("HTTP_PROXY in capitals is not curl's for http (httpoxy), so an https service is not covered by it")
    func uppercaseHTTPProxyIsIgnoredAsCurlDoes() async throws {
        let result = try await finding(environment: ["HTTP_PROXY": "http://proxy.example:3128"])
        #expect(result.status == .pass, "\(result.seen)")
    }

    /// A user with no nameserver expects to hear it, but HTTPDNS itself goes by address: a warn.
    @Test("a resolv.conf without a nameserver warns: glibc then asks 127.0.0.1, and the SDKs' fallback depends on it")
    func noNameserverWarns() async throws {
        let result = try await finding(resolvConf: "# written by a test\nsearch corp.example\noptions ndots:3\n")
        #expect(result.status == .warn, "\(result.seen)")
        #expect(result.seen.contains("names no nameserver"))
        #expect(result.seen.contains("127.0.0.1:53"))
        #expect(result.advice?.contains("nameserver ADDRESS") == true)
    }
}

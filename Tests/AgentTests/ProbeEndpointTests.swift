// `/probe` against the lab through the agent's listener: one probe's series under blackbox's names,
// lint-clean for promtool, a debug trace, the scrape's budget, the bound on probes at once.
import Agent
import ConfigurationSources
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe
import TestSupport
import Testing

/// promtool, from the prometheus package the end-to-end test installs.
let promtoolBinary: String? = {
    _ = prometheusBinary
    return ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }
}()

/// What `promtool check metrics` says of an exposition: nil when it is clean.
func promtoolProblems(_ exposition: String) async throws -> String? {
    let result = try await ChildProcess.run(try #require(promtoolBinary), ["check", "metrics"], input: exposition)
    return result.status == 0 ? nil : "status \(result.status): \(result.output)\(result.errors)"
}

/// The value of the series `name{labels}` in an exposition, nil when it is not there.
func sample(_ exposition: String, _ name: String, _ labels: [String: String] = [:]) -> Double? {
    for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        let series = line[..<space]
        let bare = series.prefix { $0 != "{" }
        guard bare == name else { continue }
        let wanted = labels.allSatisfy { series.contains("\($0.key)=\"\($0.value)\"") }
        if wanted { return Double(line[line.index(after: space)...]) }
    }
    return nil
}

@Suite("GET /probe", .serialized)
struct ProbeEndpointTests {
    /// The lab, an agent listener with `/probe`, and the URL of `/probe` on it.
    private static func serve(
        _ lab: Lab, settings: ProbeEndpointSettings = .standard
    ) async throws -> (MetricsServer, String) {
        let cache = try lab.resolverCache(labDNS: true)
        var options = ProbeOptions()
        options.linkLocal = .refuse
        let metrics = AgentMetrics(labels: [AgentLabel(name: "region", value: "lab")])
        let probe = ProbeEndpoint(engine: lab.engine(cache, options: options), settings: settings, metrics: metrics)
        let server = try await MetricsServer(host: "127.0.0.1", port: 0, metrics: metrics, probe: probe) {
            metrics.exposition()
        }
        return (server, "http://127.0.0.1:\(server.port)/probe")
    }

    /// The agent's resolver settings for the lab: its HTTPDNS service, no fallback to system DNS
    /// (which knows no lab name).
    private static func configuration(_ lab: Lab) -> ResolverConfiguration {
        var configuration = ResolverConfiguration(
            provider: .alicloud, endpoint: lab.endpoints.httpdns, account: lab.endpoints.account, timeout: 10)
        configuration.fallbackToSystem = false
        return configuration
    }

    private static func query(_ target: String, _ more: String = "") -> String {
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        return "?target=\(encoded)\(more)"
    }

    @Test(
        "a name that needs SNI: probe_success 1 by direct-sni, direct-https 0, blackbox's names, no target label, lint-clean",
        .enabled(if: promtoolBinary != nil, "promtool is not installed and could not be installed here"))
    func probesOneTarget() async throws {
        let lab = try await Lab.start()
        let (server, probe) = try await Self.serve(lab)
        let answer = try #require(await fetch(probe + Self.query(lab.url("sni-a.lab.test"))))
        let metrics = try #require(await fetch("http://127.0.0.1:\(server.port)/metrics"))
        await server.close()
        try await lab.shutdown()

        #expect(answer.status == 200)
        let text = answer.body
        #expect(sample(text, "probe_success") == 1)
        #expect(sample(text, "probe_http_status_code") == 200)
        #expect(sample(text, "probe_http_ssl") == 1)
        #expect(sample(text, "probe_ip_protocol") == 4)
        #expect((sample(text, "probe_ssl_earliest_cert_expiry") ?? 0) > Date().timeIntervalSince1970)
        #expect(sample(text, "probe_tls_version_info", ["version": "TLS 1.3"]) == 1)
        #expect(sample(text, "probe_http_duration_seconds", ["phase": "tls"]).map { $0 > 0 } == true)
        #expect(sample(text, "ipdirect_probe_scenario_success", ["scenario": "direct-sni"]) == 1)
        #expect(sample(text, "ipdirect_probe_scenario_success", ["scenario": "direct-https"]) == 0)
        #expect(sample(text, "ipdirect_probe_dns_agreement", ["agreement": "same"]) == 1)
        #expect(
            sample(
                text, "ipdirect_probe_address_info",
                ["scenario": "direct-sni", "address": "127.0.0.1", "source": "httpdns"])
                == 1)
        // One target an answer: the scraper adds the target label by relabeling.
        #expect(!text.contains("target="))
        #expect(try await promtoolProblems(text) == nil)
        #expect(try await promtoolProblems(metrics.body) == nil)
    }

    @Test("a hijacked name: the direct techniques still work, and system DNS disagrees with HTTPDNS")
    func hijackedTarget() async throws {
        let lab = try await Lab.start()
        let (server, probe) = try await Self.serve(lab)
        let answer = try #require(await fetch(probe + Self.query(lab.url("hijacked.lab.test"))))
        await server.close()
        try await lab.shutdown()
        #expect(sample(answer.body, "probe_success") == 1)
        #expect(sample(answer.body, "ipdirect_probe_dns_agreement", ["agreement": "disjoint"]) == 1)
        #expect(
            sample(answer.body, "ipdirect_probe_address_info", ["scenario": "system-dns", "address": "127.0.0.2"]) == 1)
    }

    @Test("debug=true answers the trace: the attempts, curl's log, the verdict and the series")
    func debugTrace() async throws {
        let lab = try await Lab.start()
        let (server, probe) = try await Self.serve(lab)
        let answer = try #require(
            await fetch(probe + Self.query(lab.url("sni-a.lab.test"), "&scenario=direct-sni&debug=true")))
        await server.close()
        try await lab.shutdown()
        #expect(answer.status == 200)
        #expect(answer.body.contains("verdict: use direct-sni"))
        #expect(answer.body.contains("curl log of direct-sni to 127.0.0.1:"))
        #expect(answer.body.contains("Metrics that would have been returned:\n"))
        #expect(answer.body.contains("probe_success 1"))
        // Only the scenario asked for was tried.
        #expect(!answer.body.contains("direct-https"))
    }

    @Test(
        "without debug=true the same series as with it: the TLS version of the handshake that worked, the connect time of the one refused"
    )
    func seriesWithoutCurlLog() async throws {
        let lab = try await Lab.start()
        // An agent each, so both answers come from HTTPDNS (the second would find the first's in its cache).
        let (server, probe) = try await Self.serve(lab)
        let (debugServer, debugProbe) = try await Self.serve(lab)
        // hijacked.lab.test: system DNS leads to 127.0.0.2, whose certificate is refused after the
        // connection is made; the direct techniques complete their handshakes.
        let target = Self.query(lab.url("hijacked.lab.test"))
        let plain = try #require(await fetch(probe + target)).body
        let debug = try #require(await fetch(debugProbe + target + "&debug=true")).body
        await server.close()
        await debugServer.close()
        try await lab.shutdown()

        /// Every series an exposition names (name and labels), values aside: timings differ run to run.
        func series(_ exposition: Substring) -> Set<Substring> {
            Set(
                exposition.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
                    line.lastIndex(of: " ").map { line[..<$0] }
                })
        }
        let marker = "Metrics that would have been returned:\n"
        let debugSeries = try #require(debug.range(of: marker)).upperBound
        #expect(series(plain[...]) == series(debug[debugSeries...]))
        #expect(sample(plain, "probe_tls_version_info", ["version": "TLS 1.3"]) == 1)
        #expect(
            sample(plain, "ipdirect_probe_scenario_phase_seconds", ["scenario": "system-dns", "phase": "connect"])
                .map { $0 > 0 } == true)
        #expect(sample(plain, "ipdirect_probe_scenario_status_code", ["scenario": "system-dns"]) == 0)
        // debug=true still shows curl's own log of each attempt.
        #expect(debug.contains("Connected to hijacked.lab.test (127.0.0.2)"))
        #expect(debug.contains("SSL connection using TLSv1.3"))
    }

    @Test("requests that cannot run say why: no target, an unknown module, a bad scenario")
    func refusals() async throws {
        let lab = try await Lab.start()
        let (server, probe) = try await Self.serve(lab)
        let missing = await fetch(probe)
        let module = await fetch(probe + Self.query(lab.url("plain.lab.test"), "&module=nope"))
        let scenario = await fetch(probe + Self.query(lab.url("plain.lab.test"), "&scenario=carrier-pigeon"))
        await server.close()
        try await lab.shutdown()
        #expect(missing?.status == 400)
        #expect(missing?.body.contains("/probe needs target=URL") == true)
        #expect(module?.status == 400)
        #expect(module?.body.contains("unknown module nope") == true)
        #expect(scenario?.status == 400)
        #expect(scenario?.body.contains("is not a scenario") == true)
    }

    @Test("a slow origin is answered probe_success 0 within the scrape timeout Prometheus sends")
    func budgetFromHeader() async throws {
        let lab = try await Lab.start(LabOptions(slowOriginDelay: 60))
        // A wide margin: this machine may be busy; the budget is 2 s, where the probe's own
        // timeout would take 10.
        let (server, probe) = try await Self.serve(
            lab, settings: ProbeEndpointSettings(concurrency: 16, margin: 3, timeout: ProbeOptions.defaultTimeout))
        // The client gives up when Prometheus would: at the scrape timeout it sent.
        let answer = await fetch(
            probe + Self.query(lab.url("slow.lab.test"), "&scenario=direct-sni"),
            headers: ["X-Prometheus-Scrape-Timeout-Seconds": "5"], timeout: 5)
        await server.close()
        try await lab.shutdown()
        let body = try #require(answer?.body, "no answer within the scrape timeout")
        #expect(answer?.status == 200)
        #expect(sample(body, "probe_success") == 0)
    }

    @Test("[modules.NAME] in the configuration file: read, checked with the module's name, and used by module=")
    func modules() async throws {
        let toml = """
            [modules.sni_only]
            scenarios = ["direct-sni"]
            method = "HEAD"
            headers = ["X-Probe: prometheus"]
            timeout = 5
            expect_status = [200, "300-399"]
            fail_if_not_ssl = true

            [modules.not_found]
            expect_status = ["404"]
            """
        let layer = try ConfigurationLayer.toml(toml, path: "config.toml")
        #expect(layer.warnings.isEmpty)
        let modules = try ProbeModule.configured(layer.layer.resolved(defaultCachePath: nil).agent.modules)
        #expect(modules.keys.sorted() == ["default", "not_found", "sni_only"])
        let sniOnly = try #require(modules["sni_only"])
        #expect(
            sniOnly.settings
                == TargetSettings(
                    scenarios: [.directSNI], method: .head, headers: [HeaderField(name: "X-Probe", value: "prometheus")]
                ))
        #expect(sniOnly.timeout == 5)
        #expect(sniOnly.expectStatus == [200...200, 300...399])
        #expect(sniOnly.failIfNotSSL)

        for (entry, reason) in [
            ("scenarios = [\"direct-ssl\"]", "'direct-ssl' is not a scenario"),
            ("method = \"POST\"", "the agent sends GET or HEAD"),
            ("expect_status = [\"2xx\"]", "expect_status takes statuses and ranges"),
            ("timeout = 0", "timeout must be more than 0"),
            ("provider = \"aliyun\"", "provider aliyun is not the name of a [[providers]] entry"),
            ("dns_server = \"not a server\"", "dns_server"),
        ] {
            let file = try ConfigurationLayer.toml("[modules.broken]\n\(entry)\n", path: "config.toml")
            do {
                _ = try ProbeModule.configured(file.layer.resolved(defaultCachePath: nil).agent.modules)
                Issue.record("accepted: \(entry)")
            } catch {
                #expect(error.reason.contains("[modules.broken]"), "\(error)")
                #expect(error.reason.contains(reason), "\(error)")
            }
        }

        // The lab's origin answers 200: a module that expects 404 fails where the default succeeds.
        let lab = try await Lab.start()
        let probe = ProbeEndpoint(engine: lab.engine(try lab.resolverCache()), modules: modules)
        let target = Self.query(lab.url("sni-a.lab.test"), "&scenario=direct-sni")
        let expected = await probe.answer(uri: "/probe" + target + "&module=not_found", scrapeTimeout: nil)
        let standard = await probe.answer(uri: "/probe" + target, scrapeTimeout: nil)
        let unknown = await probe.answer(uri: "/probe" + target + "&module=http_2xx", scrapeTimeout: nil)
        try await lab.shutdown()
        #expect(sample(String(decoding: expected.body, as: UTF8.self), "probe_success") == 0)
        #expect(sample(String(decoding: expected.body, as: UTF8.self), "probe_http_status_code") == 200)
        #expect(sample(String(decoding: standard.body, as: UTF8.self), "probe_success") == 1)
        #expect(unknown.status == 400)
        #expect(String(decoding: unknown.body, as: UTF8.self).contains("default, not_found, sni_only"))
    }

    @Test(
        "--probe-allow: a name outside it, an HTTPDNS answer or a redirect leading outside it are refused, and nothing is sent there"
    )
    func allowList() async throws {
        let lab = try await Lab.start()
        let cache = try lab.resolverCache()
        func endpoint(_ entries: [String]) throws -> ProbeEndpoint {
            let allow = try ProbeAllowList(parsing: entries)
            var options = ProbeOptions()
            options.caFile = lab.endpoints.ca
            options.linkLocal = .refuse
            let engine = ProbeEngine(
                resolve: allow.guarding { await cache.resolve($0) }, options: options, environment: [:])
            return ProbeEndpoint(engine: engine, allow: allow)
        }
        func text(_ answer: EndpointAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }
        let sni = Self.query(lab.url("sni-a.lab.test"), "&scenario=direct-sni")

        // By name: refused before anything is resolved or sent.
        let byName = try await endpoint(["*.example.com"]).answer(uri: "/probe" + sni, scrapeTimeout: nil)
        #expect(byName.status == 403)
        #expect(text(byName).contains("sni-a.lab.test is not among the names --probe-allow allows"))
        // By the HTTPDNS answer: the name may be probed, the address it resolves to may not.
        let byAnswer = try await endpoint(["127.0.0.2/32"]).answer(
            uri: "/probe" + sni + "&debug=true", scrapeTimeout: nil)
        #expect(byAnswer.status == 200)
        #expect(text(byAnswer).contains("127.0.0.1 is outside the address ranges --probe-allow allows"))
        #expect(text(byAnswer).contains("probe_success 0"))
        // By a redirect: redirect.lab.test may be probed, the sni-b.lab.test it sends to may not.
        let redirect = Self.query(lab.url("redirect.lab.test"), "&scenario=direct-sni")
        let byRedirect = try await endpoint(["redirect.lab.test"]).answer(uri: "/probe" + redirect, scrapeTimeout: nil)
        #expect(sample(text(byRedirect), "probe_success") == 0)
        // By a redirect straight to an address literal: hostile.lab.test (127.0.0.1) may be probed,
        // the 127.0.0.2 its Location names may not, and no connection goes there.
        let address = Self.query(lab.url("hostile.lab.test", LabHostilePath.address), "&scenario=direct-sni")
        let byAddress = text(
            try await endpoint(["*.lab.test", "127.0.0.1/32"]).answer(
                uri: "/probe" + address + "&debug=true", scrapeTimeout: nil))
        #expect(byAddress.contains("127.0.0.2 is outside the address ranges --probe-allow allows"), "\(byAddress)")
        #expect(byAddress.contains("redirect-refused"), "\(byAddress)")
        #expect(!byAddress.contains("Trying 127.0.0.2"), "a connection went to 127.0.0.2: \(byAddress)")
        #expect(sample(byAddress, "probe_success") == 0)
        // A metadata address needs naming, whatever range is allowed.
        let metadata = try await endpoint(["0.0.0.0/0"]).answer(
            uri: "/probe?target=http%3A%2F%2F169.254.169.254%2Flatest%2Fmeta-data%2F", scrapeTimeout: nil)
        #expect(metadata.status == 403)
        #expect(text(metadata).contains("link-local or cloud metadata"))
        #expect(throws: AgentSettingError.self) { try ProbeAllowList(parsing: ["10.0.0.0/33"]) }
        #expect(throws: AgentSettingError.self) { try ProbeAllowList(parsing: ["exa mple.com"]) }

        let seen = lab.originRequests()
        try await lab.shutdown()
        #expect(!seen.contains { $0.host.hasPrefix("sni-a.lab.test") }, "a request reached sni-a: \(seen)")
        #expect(!seen.contains { $0.host.hasPrefix("sni-b.lab.test") }, "the redirect was followed: \(seen)")
        #expect(seen.contains { $0.host.hasPrefix("redirect.lab.test") })
        #expect(!seen.contains { $0.origin == "hijacker" }, "a request reached 127.0.0.2: \(seen)")
    }

    @Test(
        "--probe-allow with globs alone: a literal target in any spelling, a redirect to a literal and dns_server= are refused; an allowed name's answers are probed"
    )
    func globsAloneAllowNoLiteral() async throws {
        let lab = try await Lab.start()
        let cache = try lab.resolverCache()
        let allow = try ProbeAllowList(parsing: ["*.lab.test"])
        var options = ProbeOptions()
        options.caFile = lab.endpoints.ca
        options.linkLocal = .refuse
        let engine = ProbeEngine(
            resolve: allow.guarding { await cache.resolve($0) }, options: options, environment: [:])
        let resolvers = ProbeResolvers(configuration: Self.configuration(lab), allow: allow)
        let probe = ProbeEndpoint(engine: engine, allow: allow, resolvers: resolvers)
        func text(_ answer: EndpointAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }

        var literals: [String: EndpointAnswer] = [:]
        for target in ["http://127.0.0.9:18009/", "http://[::1]:18010/", "http://2130706441:18009/"] {
            literals[target] = await probe.answer(uri: "/probe" + Self.query(target), scrapeTimeout: nil)
        }
        let sni = Self.query(lab.url("sni-a.lab.test"), "&scenario=direct-sni")
        let viaServer = await probe.answer(uri: "/probe" + sni + "&dns_server=127.0.0.9%3A5353", scrapeTimeout: nil)
        let address = Self.query(lab.url("hostile.lab.test", LabHostilePath.address), "&scenario=direct-sni")
        let redirected = text(await probe.answer(uri: "/probe" + address + "&debug=true", scrapeTimeout: nil))
        let named = await probe.answer(uri: "/probe" + sni, scrapeTimeout: nil)
        let seen = lab.originRequests()
        try await lab.shutdown()

        for (target, answer) in literals {
            #expect(answer.status == 403, "\(target): \(text(answer))")
            #expect(text(answer).contains("--probe-allow gives only names (*.lab.test)"), "\(text(answer))")
        }
        #expect(viaServer.status == 403, "\(text(viaServer))")
        #expect(text(viaServer).contains("127.0.0.9 is an address"), "\(text(viaServer))")
        #expect(redirected.contains("redirect-refused"), "\(redirected)")
        #expect(!redirected.contains("Trying 127.0.0.2"), "a connection went to 127.0.0.2: \(redirected)")
        #expect(!seen.contains { $0.origin == "hijacker" }, "a request reached 127.0.0.2: \(seen)")
        // The glob allows the name, and so what the name resolves to.
        #expect(sample(text(named), "probe_success") == 1, "\(text(named))")
    }

    @Test(
        "--probe-allow: an IPv6 address carrying an IPv4 one (::ffff:127.0.0.9) is judged as the IPv4 address it reaches, not by ::/0"
    )
    func mappedAddressesJudgedAsIPv4() async throws {
        let allow = try ProbeAllowList(parsing: ["10.0.0.0/8", "::/0"])
        // Literal targets are not resolved: a resolver that knows nothing serves.
        let resolve = allow.guarding { host in
            HostResolution(
                host: host, system: SystemAnswer(error: .reported("none")),
                httpdns: HTTPDNSAnswer(provider: "none", error: .reported("none")))
        }
        let probe = ProbeEndpoint(engine: ProbeEngine(resolve: resolve, environment: [:]), allow: allow)
        var answers: [String: EndpointAnswer] = [:]
        for target in [
            "http://[::ffff:127.0.0.9]:18009/", "http://[::ffff:7f00:9]:18009/", "http://[::ffff:0:127.0.0.9]:18009/",
            "http://[::127.0.0.9]:18009/", "http://[::ffff:169.254.169.254]/",
        ] {
            answers[target] = await probe.answer(uri: "/probe" + Self.query(target), scrapeTimeout: nil)
        }
        for (target, answer) in answers {
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status == 403, "\(target): \(text)")
            let reached = target.contains("169.254") ? "169.254.169.254" : "127.0.0.9"
            #expect(text.contains("(which reaches \(reached))"), "\(target): \(text)")
        }
        // The IPv4 addresses the ranges allow, in either spelling; IPv6 ones, NAT64's included, by ::/0.
        for allowed in ["10.1.2.3", "::ffff:10.1.2.3", "::1", "2001:db8::1", "64:ff9b::7f00:9"] {
            #expect(allow.refusal(host: allowed) == nil, "\(allowed)")
            #expect(allow.refusal(address: allowed) == nil, "\(allowed)")
        }
        #expect(allow.refusal(address: "::ffff:127.0.0.9") != nil)
        // An entry written in the mapped form names the IPv4 range.
        let mapped = try ProbeAllowList(parsing: ["::ffff:10.0.0.0/104"])
        #expect(mapped.refusal(host: "10.9.8.7") == nil)
        #expect(mapped.refusal(host: "11.0.0.1") != nil)
    }

    @Test(
        "dns_server= (or a module's) asks that DNS server for the system column; provider= names a [[providers]] entry"
    )
    func resolverOverrides() async throws {
        let lab = try await Lab.start()
        var configuration = Self.configuration(lab)
        configuration.providers = [
            .inMemory(
                name: "lab-doh", kind: .doh, endpoint: lab.endpoints.httpdnsTLS + "/dns-query", account: nil,
                secret: nil,
                key: nil, caFile: lab.endpoints.ca)
        ]
        let allow = try ProbeAllowList(parsing: ["127.0.0.0/8"])
        var carrier = ProbeModuleFileSettings(name: "carrier")
        carrier.dnsServer = lab.endpoints.dns
        let probe = ProbeEndpoint(
            engine: lab.engine(try lab.resolverCache()),
            modules: try ProbeModule.configured([carrier], providers: ["lab-doh"]), allow: allow,
            resolvers: ProbeResolvers(configuration: configuration, allow: allow))
        func text(_ more: String) async -> (Int, String) {
            let answer = await probe.answer(
                uri: "/probe" + Self.query(lab.url("hijacked.lab.test"), more), scrapeTimeout: nil)
            return (answer.status, String(decoding: answer.body, as: UTF8.self))
        }
        let dns = lab.endpoints.dns.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let own = await text("")
        let chosen = await text("&dns_server=\(dns)")
        let doh = await text("&provider=lab-doh&dns_server=\(dns)")
        let module = await text("&module=carrier")
        let unknown = await text("&provider=nope")
        let outside = await text("&dns_server=10.0.0.53")
        try await lab.shutdown()
        // getaddrinfo knows no lab name; the lab's DNS server hijacks this one.
        #expect(sample(own.1, "ipdirect_probe_dns_agreement", ["agreement": "system-failed"]) == 1)
        #expect(sample(chosen.1, "ipdirect_probe_dns_agreement", ["agreement": "disjoint"]) == 1)
        #expect(sample(chosen.1, "probe_success") == 1)
        #expect(sample(doh.1, "ipdirect_probe_httpdns_success") == 1)
        #expect(sample(doh.1, "ipdirect_probe_dns_agreement", ["agreement": "disjoint"]) == 1)
        #expect(sample(module.1, "ipdirect_probe_dns_agreement", ["agreement": "disjoint"]) == 1)
        #expect(unknown.0 == 400 && unknown.1.contains("lab-doh"), "\(unknown)")
        #expect(outside.0 == 403 && outside.1.contains("10.0.0.53 is outside"), "\(outside)")
    }

    @Test(
        "dns_server= naming 17 servers: a module's configured DNS server still resolves (none are refused; the oldest request's is let go)"
    )
    func requestedServersLeaveModulesTheirs() async throws {
        let lab = try await Lab.start()
        let configuration = Self.configuration(lab)
        let allow = try ProbeAllowList(parsing: ["127.0.0.0/8"])
        var viaDNS = ProbeModuleFileSettings(name: "viadns")
        viaDNS.dnsServer = lab.endpoints.dns
        let probe = ProbeEndpoint(
            engine: lab.engine(try lab.resolverCache()),
            modules: try ProbeModule.configured([viaDNS], providers: []), allow: allow,
            resolvers: ProbeResolvers(configuration: configuration, allow: allow))
        let target = "/probe" + Self.query(lab.url("hijacked.lab.test"), "&scenario=direct-sni")
        // Servers nothing answers on: each probe's system column fails, the request is still run.
        let requested = await withTaskGroup(of: EndpointAnswer.self) { group in
            for index in 0..<ProbeResolvers.kept {
                group.addTask {
                    await probe.answer(uri: target + "&dns_server=127.0.0.\(10 + index)%3A5353", scrapeTimeout: "3")
                }
            }
            var all: [EndpointAnswer] = []
            for await answer in group { all.append(answer) }
            return all
        }
        // A probe past its budget holds its slot until it ends: the bound on probes at once is not
        // what this test is about.
        let ended = await eventually(within: 30) { probe.probesRunning == 0 }
        let module = await probe.answer(uri: target + "&module=viadns", scrapeTimeout: nil)
        let seventeenth = await probe.answer(uri: target + "&dns_server=127.0.0.99%3A5353", scrapeTimeout: "3")
        let moduleAgain = await probe.answer(uri: target + "&module=viadns", scrapeTimeout: nil)
        try await lab.shutdown()
        func text(_ answer: EndpointAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }
        #expect(ended)
        #expect(requested.allSatisfy { $0.status == 200 }, "\(requested.map(text))")
        for answer in [module, moduleAgain] {
            #expect(answer.status == 200, "\(text(answer))")
            // The module's server is the lab's, which hijacks this name.
            #expect(
                sample(text(answer), "ipdirect_probe_dns_agreement", ["agreement": "disjoint"]) == 1, "\(text(answer))")
        }
        #expect(seventeenth.status == 200, "\(text(seventeenth))")
    }

    @Test("control bytes in provider= and dns_server= come back escaped in the 400, never raw")
    func refusalsEscaped() async throws {
        let lab = try await Lab.start()
        var configuration = ResolverConfiguration(
            provider: .alicloud, endpoint: lab.endpoints.httpdns, account: lab.endpoints.account, timeout: 10)
        configuration.providers = []
        let allow = try ProbeAllowList(parsing: ["127.0.0.0/8"])
        let probe = ProbeEndpoint(
            engine: lab.engine(try lab.resolverCache()), allow: allow,
            resolvers: ProbeResolvers(configuration: configuration, allow: allow))
        var answers: [EndpointAnswer] = []
        for more in ["&provider=%1B%5B2Jevil%07%C2%9B", "&dns_server=%1B%5B31mx%00%0Ay"] {
            answers.append(
                await probe.answer(uri: "/probe" + Self.query(lab.url("sni-a.lab.test"), more), scrapeTimeout: nil))
        }
        try await lab.shutdown()
        for answer in answers {
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status == 400, "\(text)")
            #expect(text.contains("\\x1b["), "\(text)")
            // One line end, the sentence's own; no other control byte, C0 or C1.
            #expect(!answer.body.dropLast().contains { $0 < 0x20 || $0 == 0x7F }, "\(text)")
            #expect(!text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(text)")
        }
    }

    @Test("17 probes at once at --probe-concurrency 16: one is answered 503 at once, the others probe")
    func concurrencyBound() async throws {
        let lab = try await Lab.start(LabOptions(slowOriginDelay: 5))
        let cache = try lab.resolverCache()
        let probe = ProbeEndpoint(engine: lab.engine(cache), settings: .standard)
        let uri = "/probe" + Self.query(lab.url("slow.lab.test"), "&scenario=direct-sni")
        let answers = await withTaskGroup(of: EndpointAnswer.self) { group in
            for _ in 0..<17 { group.addTask { await probe.answer(uri: uri, scrapeTimeout: "30") } }
            var all: [EndpointAnswer] = []
            for await answer in group { all.append(answer) }
            return all
        }
        try await lab.shutdown()
        let refused = answers.filter { $0.status == 503 }
        #expect(refused.count == 1)
        #expect(answers.filter { $0.status == 200 }.count == 16)
        #expect(refused.first.map { String(decoding: $0.body, as: UTF8.self).contains("--probe-concurrency") } == true)
        #expect(probe.probesRunning == 0)
    }
}

// Every lab origin probed over real libcurl and real TLS: each applicable scenario gets the
// outcome the lab's design implies, and a server that fails the check never sees a request.
import ConfigurationSources
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe
import Testing

@Suite("Scenarios against the lab")
struct LabScenarioTests {
    static let everyName = [
        "plain.lab.test", "single.lab.test", "sni-a.lab.test", "sni-b.lab.test", "wrong-name.lab.test",
        "expired.lab.test", "self-signed.lab.test", "untrusted.lab.test", "slow.lab.test", "redirect.lab.test",
        "dual.lab.test", "short-ttl.lab.test",
    ]

    @Test("sni-a works with SNI and shows the default certificate without it")
    func sniOrigin() async throws {
        try await withLab { lab in
            let report = try #require(await lab.engine().probeAll([lab.url("sni-a.lab.test")]).first)
            #expect(report.outcome(.directSNI) == .ok)
            #expect(report.outcome(.directHTTPS) == .certNameMismatch)
            let failed = try #require(report.attempts(.directHTTPS).first)
            #expect(failed.sni == nil)
            #expect(failed.error?.sentence.contains("default.lab.test") == true)
            #expect(failed.error?.sentence.contains("not sni-a.lab.test; no SNI was sent") == true)
            #expect(failed.certificate?.chain.first?.subjectAlternativeNames.contains("default.lab.test") == true)
            #expect(report.outcome(.directHTTP) == .skipped)
            #expect(report.outcome(.systemDNS) == .dnsFailed)
            #expect(report.verdict.works == [.directSNI])
            #expect(report.verdict.recommended == .directSNI)
            #expect(report.verdict.summary.contains("without SNI the server presents its default certificate"))
            let worked = try #require(report.attempts(.directSNI).first)
            #expect(worked.sni == "sni-a.lab.test")
            #expect(worked.hops.first?.bodyPreview.contains("sni=sni-a.lab.test") == true)
            // The origin saw one request, with SNI; the SNI-less handshake sent nothing.
            #expect(lab.requests(to: "sni").map(\.sni) == ["sni-a.lab.test"])
        }
    }

    @Test("single works both ways, plain works with the IP in the URL")
    func singleAndPlain() async throws {
        try await withLab { lab in
            let reports = await lab.engine().probeAll([lab.url("single.lab.test"), lab.url("plain.lab.test")])
            let single = reports[0]
            #expect(single.outcome(.directHTTPS) == .ok)
            #expect(single.outcome(.directSNI) == .ok)
            #expect(single.verdict.works == [.directSNI, .directHTTPS])
            #expect(single.verdict.recommended == .directSNI)
            #expect(Set(lab.requests(to: "single").map(\.sni)) == [nil, "single.lab.test"])

            let plain = reports[1]
            #expect(plain.outcome(.directHTTP) == .ok)
            #expect(plain.outcome(.directHTTPS) == .skipped)
            #expect(plain.outcome(.directSNI) == .skipped)
            #expect(plain.verdict.recommended == .directHTTP)
            let hop = try #require(plain.attempts(.directHTTP).first?.hops.first)
            #expect(hop.url.hasPrefix("http://127.0.0.1:"))
            #expect(hop.requestHeaders.contains { $0.name == "Host" && $0.value.hasPrefix("plain.lab.test:") })
            #expect(
                lab.requests(to: "plain").map(\.host) == [
                    try #require(hop.requestHeaders.first { $0.name == "Host" }?.value)
                ])
        }
    }

    @Test(
        "each bad certificate fails every scenario with its own outcome, and its origin sees no request",
        arguments: [
            ("wrong-name.lab.test", "wrong-name", Outcome.certNameMismatch),
            ("expired.lab.test", "expired", .certExpired),
            ("self-signed.lab.test", "self-signed", .certSelfSigned),
            ("untrusted.lab.test", "untrusted", .certUntrusted),
        ])
    func badCertificates(name: String, origin: String, outcome: Outcome) async throws {
        try await withLab { lab in
            let report = try #require(await lab.engine().probeAll([lab.url(name)]).first)
            for scenario in [Scenario.directHTTPS, .directSNI] {
                let attempt = try #require(report.attempts(scenario).first)
                #expect(attempt.outcome == outcome, "\(scenario.rawValue): \(attempt.error ?? "")")
                #expect(attempt.error?.sentence.isEmpty == false)
                #expect(attempt.certificate?.chain.isEmpty == false)
                #expect(attempt.hops.first?.requestBodyBytes == 0)
                // The connection was made; the handshake is where it ended.
                #expect(attempt.timings.connect != nil)
                #expect(attempt.timings.tlsDone == nil)
            }
            #expect(report.verdict.works.isEmpty)
            #expect(report.verdict.recommended == nil)
            #expect(lab.requests(to: origin).isEmpty)
        }
    }

    @Test("a redirect to another host is followed hop by hop, resolved again")
    func redirectAcrossHosts() async throws {
        try await withLab { lab in
            let report = try #require(
                await lab.engine().probeAll([lab.url("redirect.lab.test", "/echo?from=redirect.lab.test")]).first)
            let attempt = try #require(report.attempts(.directSNI).first)
            #expect(attempt.outcome == .ok)
            #expect(attempt.hops.count == 2)
            #expect(attempt.hops[0].status == 302)
            let second = attempt.hops[1]
            #expect(second.originalURL.contains("sni-b.lab.test"))
            #expect(second.originalURL.hasSuffix("/echo?from=redirect.lab.test"))
            #expect(second.resolver == .httpdns)
            #expect(second.sni == "sni-b.lab.test")
            #expect(second.bodyPreview.contains("origin=sni ; host=sni-b.lab.test"))
            // Without SNI the second hop meets sni-b's default certificate.
            #expect(report.attempts(.directHTTPS).first?.hops.count == 2)
            #expect(report.outcome(.directHTTPS) == .certNameMismatch)
            #expect(report.verdict.notes.contains { $0.contains("redirects to another host (sni-b.lab.test)") })
        }
    }

    @Test("a POST body arrives whole in every scenario")
    func postBodyArrivesWhole() async throws {
        try await withLab { lab in
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 100_000)
            let engine = lab.engine(ProbeOptions(method: .post, body: body))
            let reports = await engine.probeAll([
                lab.url("plain.lab.test", "/echo"), lab.url("single.lab.test", "/echo"),
            ])
            let made = reports.flatMap(\.attempts).filter { $0.outcome != .skipped && $0.scenario.isDirect }
            #expect(Set(made.map(\.scenario)) == [.directHTTP, .directHTTPS, .directSNI])
            for attempt in made {
                #expect(attempt.outcome == .ok, "\(attempt.scenario.rawValue): \(attempt.error ?? "")")
                #expect(attempt.hops.first?.bodyPreview.contains("method=POST ; body-bytes=100000") == true)
                #expect(attempt.hops.first?.requestBodyBytes == 100_000)
            }
            let seen = lab.originRequests().filter { $0.path == "/echo" }
            #expect(seen.count == 3)
            #expect(seen.allSatisfy { $0.bodyLength == 100_000 && $0.method == "POST" })
        }
    }

    @Test("concurrent requests each carry their own Host")
    func hostPerRequest() async throws {
        try await withLab { lab in
            let engine = lab.engine(ProbeOptions(scenarios: [.directHTTP], concurrency: 8))
            let names = (0..<24).map { $0 % 2 == 0 ? "plain.lab.test" : "localhost" }
            let reports = await engine.probeAll(names.map { lab.url($0, "/echo") })
            for (name, report) in zip(names, reports) {
                let hop = try #require(report.attempts.first?.hops.first)
                #expect(hop.outcome == .ok)
                #expect(hop.bodyPreview.contains("host=\(name):"), "\(hop.bodyPreview)")
            }
        }
    }

    @Test("HEAD asks for the head only")
    func headRequest() async throws {
        try await withLab { lab in
            let engine = lab.engine(ProbeOptions(scenarios: [.directSNI], method: .head))
            let hop = try #require(
                await engine.probeAll([lab.url("single.lab.test")]).first?.attempts.first?.hops.first)
            #expect(hop.outcome == .ok)
            #expect(hop.method == "HEAD")
            #expect(hop.responseBytes == 0)
            #expect(lab.requests(to: "single").map(\.method) == ["HEAD"])
        }
    }

    @Test("a 302 turns a POST into a GET without the body")
    func redirectTurnsPostIntoGet() async throws {
        try await withLab { lab in
            let engine = lab.engine(ProbeOptions(scenarios: [.directSNI], method: .post, body: Array("hello".utf8)))
            let attempt = try #require(
                await engine.probeAll([lab.url("redirect.lab.test", "/echo")]).first?.attempts.first)
            #expect(attempt.hops.map(\.method) == ["POST", "GET"])
            #expect(attempt.hops.last?.bodyPreview.contains("method=GET ; body-bytes=0") == true)
        }
    }

    @Test("every attempt opens a fresh connection, so connect and TLS are measured")
    func freshConnections() async throws {
        try await withLab { lab in
            let engine = lab.engine(ProbeOptions(allIPs: true))
            let urls = ["single.lab.test", "sni-a.lab.test", "dual.lab.test", "plain.lab.test"].map { lab.url($0) }
            let reports = await engine.probeAll(urls + urls)
            let hops = reports.flatMap(\.attempts).flatMap(\.hops).filter { $0.outcome == .ok }
            #expect(hops.count >= 16)
            for hop in hops {
                #expect(hop.timings.connect != nil)
                if hop.url.hasPrefix("https:") { #expect(hop.timings.tlsDone != nil) }
                #expect(hop.log.contains { $0.text.contains("Connected to") })
                #expect(!hop.log.contains { $0.text.contains("Re-using existing connection") })
            }
            // dual answers on ::1 too; --all-ips tries both.
            let dual = reports[2]
            #expect(Set(dual.attempts(.directSNI).compactMap(\.ip)) == ["127.0.0.1", "::1"])
            #expect(dual.attempts(.directHTTPS).allSatisfy { $0.outcome == .ok })
        }
    }

    @Test("the slow origin times out within the per-request timeout")
    func slowTimesOut() async throws {
        try await withLab { lab in
            let engine = lab.engine(ProbeOptions(scenarios: [.directSNI], timeout: .milliseconds(500)))
            let attempt = try #require(await engine.probeAll([lab.url("slow.lab.test")]).first?.attempts.first)
            #expect(attempt.outcome == .timeout)
            #expect(attempt.error?.sentence.contains("within 0.5 s") == true)
        }
    }

    @Test("when system DNS and HTTPDNS disagree, the system IP is tried too")
    func disagreementTriesSystemIP() async throws {
        try await withLab { lab in
            var options = ProbeOptions(scenarios: [.systemDNS, .directSNI])
            options.caFile = lab.endpoints.ca
            let resolver = zoneResolver(
                lab, system: ["single.lab.test": ["127.0.0.1"]], httpdns: ["single.lab.test": ["127.0.0.9"]])
            let engine = ProbeEngine(
                resolve: resolver, options: options, environment: ["HTTPS_PROXY": "http://proxy.invalid:3128"])
            let report = try #require(await engine.probeAll([lab.url("single.lab.test")]).first)
            let direct = report.attempts(.directSNI)
            #expect(direct.map(\.ip) == ["127.0.0.9", "127.0.0.1"])
            #expect(direct.map(\.ipSource) == [.httpdns, .system])
            #expect(direct.map(\.outcome) == [.connectFailed, .ok])
            #expect(report.outcome(.systemDNS) == .ok)
            #expect(report.resolution.agreement == .disjoint)
            #expect(report.verdict.notes.contains { $0.contains("the address is at fault, not the technique") })
            #expect(report.verdict.notes.contains { $0.contains("proxy variables are set (HTTPS_PROXY)") })
        }
    }

    @Test("a path and query that contain the host name reach the server unchanged")
    func pathAndQueryKept() async throws {
        try await withLab { lab in
            let url = lab.url("plain.lab.test", "/plain.lab.test/x?host=plain.lab.test&n=1")
            let engine = lab.engine(ProbeOptions(scenarios: [.directHTTP]))
            let hop = try #require(await engine.probeAll([url]).first?.attempts.first?.hops.first)
            #expect(hop.url.hasSuffix("/plain.lab.test/x?host=plain.lab.test&n=1"))
            #expect(hop.url.hasPrefix("http://127.0.0.1:"))
            #expect(lab.requests(to: "plain").first?.path.hasPrefix("/plain.lab.test/x") == true)
        }
    }

    @Test("events arrive in order: resolved, attempts, finished")
    func eventsInOrder() async throws {
        try await withLab { lab in
            var kinds: [String] = []
            for await event in lab.engine().probe(lab.url("single.lab.test")) {
                switch event {
                case .resolved: kinds.append("resolved")
                case .attemptStarted: kinds.append("started")
                case .attemptFinished: kinds.append("finished-attempt")
                case .finished: kinds.append("finished")
                case .rejected: kinds.append("rejected")
                }
            }
            #expect(kinds.first == "resolved")
            #expect(kinds.last == "finished")
            #expect(kinds.filter { $0 == "started" }.count == 4)
            #expect(kinds.filter { $0 == "finished-attempt" }.count == 4)
        }
    }
}

@Suite("Through the real resolver")
struct RealResolverTests {
    @Test("names resolved by the resolver cache from the lab's HTTPDNS service probe as designed")
    func resolverCacheAgainstLab() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let configuration = ResolverConfiguration(
                provider: .alicloud, endpoint: e.httpdns, account: e.account, secret: e.secret, timeout: 5,
                family: .v4)
            let cache = ResolverCache(configuration: configuration, provider: try ProviderFactory.make(configuration))
            var options = ProbeOptions()
            options.caFile = e.ca
            let engine = ProbeEngine(resolve: { await cache.resolve($0) }, options: options, environment: [:])
            let reports = await engine.probeAll([lab.url("sni-a.lab.test"), lab.url("redirect.lab.test")])
            #expect(reports[0].resolution.httpdns.ipv4 == ["127.0.0.1"])
            #expect(reports[0].attempts(.directSNI).first?.ipSource == .httpdns)
            #expect(reports[0].outcome(.directSNI) == .ok)
            #expect(reports[0].outcome(.directHTTPS) == .certNameMismatch)
            let hops = try #require(reports[1].attempts(.directSNI).first?.hops)
            #expect(hops.count == 2)
            #expect(hops.last?.outcome == .ok)
            #expect(lab.httpdnsQueries().contains { $0.host == "sni-b.lab.test" })
        }
    }
}

// The hostile origin past the ordinary: a megabyte of response header, and redirects to the link-local
// addresses where cloud metadata services answer. Every test stays on loopback.
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe
import Testing

@Suite("Hostile origin: oversized headers, metadata redirects")
struct HostileOriginLimitsTests {
    /// An engine on the lab whose HTTPDNS also answers `metadata.lab.test` with the metadata address.
    static func engine(_ lab: Lab, _ options: ProbeOptions) -> ProbeEngine {
        var options = options
        options.caFile = lab.endpoints.ca
        // The hostile origin is https; the redirects go to http, which is a downgrade too.
        options.allowDowngrade = true
        return ProbeEngine(
            resolve: zoneResolver(lab, httpdns: ["metadata.lab.test": ["169.254.169.254"]]), options: options,
            environment: [:])
    }

    @Test("a 1 MB response header is told as such, not as 'Out of memory'")
    func hugeHeader() async throws {
        try await withLab { lab in
            let reports = await Self.engine(lab, ProbeOptions(scenarios: [.directSNI])).probeAll([
                lab.url("hostile.lab.test", LabHostilePath.hugeHeader)
            ])
            let attempt = try #require(reports.first?.attempts(.directSNI).first)
            let error = attempt.error?.sentence ?? ""
            #expect(error.contains("response header larger than libcurl accepts"), "\(attempt.outcome): \(error)")
            #expect(!error.contains("Out of memory"), "\(error)")
            #expect(attempt.outcome == .responseTooLarge, "\(attempt.outcome)")
        }
    }

    @Test(
        "refusing policy: a redirect to 169.254.169.254, to a name resolving there, or to fe80::/10 is not followed",
        arguments: [LabHostilePath.metadata, LabHostilePath.metadataName, LabHostilePath.linkLocalV6])
    func refusedRedirect(path: String) async throws {
        try await withLab { lab in
            var options = ProbeOptions(scenarios: [.directSNI])
            options.linkLocal = .refuse
            let reports = await Self.engine(lab, options).probeAll([lab.url("hostile.lab.test", path)])
            let attempt = try #require(reports.first?.attempts(.directSNI).first)
            // One hop: the 302. The link-local address was never connected to.
            #expect(attempt.hops.count == 1, "\(attempt.hops.map(\.url))")
            #expect(attempt.outcome == .redirectRefused, "\(attempt.outcome): \(attempt.error ?? "")")
            let error = attempt.error?.sentence ?? ""
            #expect(error.contains("link-local"), "\(error)")
            #expect(error.contains(path == LabHostilePath.linkLocalV6 ? "fe80::1" : "169.254.169.254"), "\(error)")
        }
    }

    @Test("noting policy (the CLI's): the redirect to fe80::1 is followed and the trace and verdict say where it went")
    func notedRedirect() async throws {
        try await withLab { lab in
            // fe80::1 without a zone cannot be connected to here: following it sends nothing.
            let reports = await Self.engine(lab, ProbeOptions(scenarios: [.directSNI])).probeAll([
                lab.url("hostile.lab.test", LabHostilePath.linkLocalV6)
            ])
            let report = try #require(reports.first)
            let attempt = try #require(report.attempts(.directSNI).first)
            #expect(attempt.hops.count == 2, "\(attempt.hops.map(\.url))")
            let note = attempt.hops.last?.log.first { $0.kind == .info && $0.text.contains("link-local") }
            #expect(note?.text.contains("fe80::1") == true, "\(attempt.hops.last?.log.map(\.text) ?? [])")
            #expect(report.verdict.notes.contains { $0.contains("link-local") && $0.contains("fe80::1") })
        }
    }

    @Test(
        "a destination policy: a redirect whose new host system DNS or HTTPDNS answers with a refused address is not followed"
    )
    func policyRefusesResolvedAddress() async throws {
        /// Refuses one address, as `--probe-allow` refuses what lies outside its ranges.
        struct Refusing: DestinationPolicy {
            var address: String
            func refusal(host: String) -> String? { nil }
            func refusal(address: IPAddress) -> String? {
                address.text == self.address ? "\(address) is outside what this prober may reach" : nil
            }
        }
        try await withLab { lab in
            var options = ProbeOptions(scenarios: [.systemDNS, .directSNI])
            options.caFile = lab.endpoints.ca
            // The resolver lets everything through: the engine itself asks the policy.
            let resolve = zoneResolver(
                lab, system: ["hostile.lab.test": ["127.0.0.1"], "sni-b.lab.test": ["127.0.0.1"]])
            let engine = ProbeEngine(resolve: resolve, options: options, environment: [:])
                .with(destinations: Refusing(address: "127.0.0.1"))
            let report = try #require(
                await engine.probeAll([lab.url("hostile.lab.test", LabHostilePath.away307)]).first)
            for scenario in [Scenario.systemDNS, .directSNI] {
                let attempt = try #require(report.attempts(scenario).first)
                // One hop: the 307. sni-b.lab.test's address was never connected to.
                #expect(attempt.hops.count == 1, "\(scenario): \(attempt.hops.map(\.url))")
                #expect(attempt.outcome == .redirectRefused, "\(scenario): \(attempt.outcome)")
                #expect(
                    attempt.error?.sentence.contains("127.0.0.1 is outside what this prober may reach") == true,
                    "\(attempt.error?.sentence ?? "")")
                #expect(attempt.error?.kind == "redirect-off-limits")
            }
            #expect(!lab.originRequests().contains { $0.host.hasPrefix("sni-b.lab.test") })
        }
    }
}

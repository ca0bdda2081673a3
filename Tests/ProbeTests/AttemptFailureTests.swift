// Why an attempt failed, as a value: each case keeps its kind, says what users read before the
// failure was typed, travels through JSON as that sentence, and the engine hands out the case.
import Foundation
import Lab
import NameResolution
import Testing

@testable import Probe

@Suite("Attempt failures")
struct AttemptFailureTests {
    @Test("a failure that points at a setting: the exports' sentence names its flag, the console's names it in words")
    func settingNamedByVoice() throws {
        let untrusted = AttemptFailure.certificateUntrusted(presented: ["a.test"], issuer: "CN=Other")
        #expect(untrusted.sentence.hasSuffix("which is not a trusted CA (--cacert adds one)"))
        #expect(untrusted.sentence(.console).hasSuffix("which is not a trusted CA (a CA file for the probes adds one)"))
        let downgrade = AttemptFailure.redirectDowngrade(url: "http://a.test/")
        #expect(downgrade.sentence(.console).hasSuffix("; allowing downgrades follows it"))
        let shortage = AttemptFailure.resourceShortage(.descriptors, target: "127.0.0.1:443")
        #expect(shortage.sentence.contains("lower --concurrency"))
        #expect(shortage.sentence(.console).contains("lower the concurrency"))
        // What the exports write: the command line's sentence, as before.
        let written = String(decoding: try JSONEncoder().encode(untrusted), as: UTF8.self)
        #expect(written.contains("(--cacert adds one)"))
    }

    private static let urlError = ProbeURLError(url: "ftp://a.test/", reason: "only http and https URLs can be probed")

    /// One of every case, with the kind scripts will match on.
    static let kinds: [(AttemptFailure, String)] = [
        (.nameNotResolved(detail: "Could not resolve host: a.test"), "name-not-resolved"),
        (.connectionRefused(target: "127.0.0.1:443"), "connection-refused"),
        (.connectFailed(target: "127.0.0.1:443", errno: EHOSTUNREACH, detail: ""), "connect-failed"),
        (.connectTimedOut(target: "127.0.0.1:443", after: .seconds(2)), "connect-timeout"),
        (.handshakeTimedOut(target: "127.0.0.1:443", after: .seconds(2)), "tls-timeout"),
        (.answerTimedOut(target: "127.0.0.1:443", after: .seconds(2)), "answer-timeout"),
        (.handshakeFailed(target: "127.0.0.1:443", detail: "wrong version number"), "tls-handshake-failed"),
        (.brokeDuringHandshake(target: "127.0.0.1:443", detail: "reset"), "tls-connection-broke"),
        (.connectionBroke(target: "127.0.0.1:443", detail: "Empty reply from server"), "connection-broke"),
        (.responseHeaderTooLarge(target: "127.0.0.1:443"), "response-too-large"),
        (.requestFailed(target: "127.0.0.1:443", detail: "Weird server reply"), "request-failed"),
        (.httpStatus(421, reason: "Misdirected Request"), "http-status"),
        (.certificateNameMismatch(presented: ["a.test"], checked: "b.test", sni: nil), "certificate-name-mismatch"),
        (.certificateExpired(.leaf(names: ["a.test"]), on: nil), "certificate-expired"),
        (.certificateNotYetValid(.inChain(subject: "CN=CA"), until: nil), "certificate-not-yet-valid"),
        (.certificateSelfSigned(presented: ["a.test"]), "certificate-self-signed"),
        (.certificateUntrusted(presented: ["a.test"], issuer: "CN=Other"), "certificate-untrusted"),
        (.certificateCheckFailed(verifyMessage: "bad", .leaf(names: nil)), "certificate-check-failed"),
        (
            .certificateNameRefused(detail: "SSL: no alternative certificate subject name matches", sni: "a.test"),
            "certificate-name-refused"
        ),
        (.certificateRefused(detail: "SSL certificate problem"), "certificate-refused"),
        (.resourceShortage(.descriptors, target: "127.0.0.1:443"), "resource-shortage"),
        (.notApplicable(.directHTTP), "not-applicable"),
        (.noSystemAddress(host: "a.test", nil), "system-dns-failed"),
        (.noAddress(host: "a.test", httpdns: nil, system: nil), "no-address"),
        (.notRewritable(urlError), "url-not-rewritable"),
        (.redirectLimit(5), "redirect-limit"),
        (.redirectLoop(url: "https://a.test/"), "redirect-loop"),
        (.redirectUnusable(urlError), "redirect-unusable"),
        (.redirectDowngrade(url: "http://a.test/"), "redirect-downgrade"),
        (
            .redirectToLinkLocal(url: "http://169.254.169.254/", address: "169.254.169.254", host: nil),
            "redirect-link-local"
        ),
        (.redirectOffLimits(url: "http://10.0.0.1/", reason: "10.0.0.1 is off limits"), "redirect-off-limits"),
        (.redirectUnresolved(host: "b.test", resolver: .httpdns, nil), "redirect-no-address"),
        (.rankConnectFailed(target: "127.0.0.1:443", errno: ECONNREFUSED), "rank-connect-failed"),
        (.rankConnectTimedOut(target: "127.0.0.1:443", after: .seconds(2)), "rank-connect-timeout"),
        (.unusableAddress("127.0.0.1"), "unusable-address"),
        (.notMeasured, "not-measured"),
        (.reported("as read back"), "reported"),
    ]

    @Test("every case keeps its kind, and no two cases share one")
    func kindsAreStable() {
        for (failure, kind) in Self.kinds { #expect(failure.kind == kind, "\(failure)") }
        #expect(Set(Self.kinds.map(\.1)).count == Self.kinds.count)
    }

    @Test("the sentences are the ones users read before failures were typed")
    func sentencesAsBefore() {
        // What RedirectChainTests, LabScenarioTests, IPWatchViewTests and RankSilentAddressTests expect.
        #expect(
            AttemptFailure.redirectLimit(2).sentence == "stopped after 2 redirects: the chain is longer than the limit")
        #expect(
            AttemptFailure.redirectLoop(url: "https://a.test/one").sentence
                == "redirect loop: https://a.test/one was already requested in this chain")
        #expect(
            AttemptFailure.certificateNameMismatch(
                presented: ["default.lab.test"], checked: "sni-a.lab.test", sni: nil
            ).sentence == "certificate is for default.lab.test, not sni-a.lab.test; no SNI was sent")
        #expect(
            AttemptFailure.rankConnectFailed(target: "127.0.0.2:18443", errno: ECONNREFUSED).sentence
                == "connection refused by 127.0.0.2:18443: nothing listens on that port there")
        #expect(
            AttemptFailure.rankConnectTimedOut(target: "127.0.0.3:8443", after: .milliseconds(500)).sentence
                == "no answer from 127.0.0.3:8443 within 0.5 s: a firewall may drop the packets, or the address "
                + "is not reachable from here")
        #expect(
            AttemptFailure.answerTimedOut(target: "127.0.0.1:8443", after: .milliseconds(500)).sentence
                == "no complete answer from 127.0.0.1:8443 within 0.5 s (connected, request sent)")
        #expect(
            AttemptFailure.connectionRefused(target: "127.0.0.9:8443").sentence
                == "could not connect to 127.0.0.9:8443: Connection refused")
        #expect(
            AttemptFailure.httpStatus(421, reason: "Misdirected Request").sentence
                == "the server answered 421 Misdirected Request")
        #expect(AttemptFailure.httpStatus(500, reason: nil).sentence == "the server answered 500")
        #expect(
            AttemptFailure.notApplicable(.directHTTPS).sentence
                == "direct-https applies to https URLs; this one is http")
        #expect(
            AttemptFailure.redirectToLinkLocal(
                url: "http://meta.test/", address: "169.254.169.254", host: "meta.test"
            ).sentence.contains("it connects to 169.254.169.254 (meta.test), a link-local address"))
        #expect(
            AttemptFailure.noSystemAddress(host: "a.test", nil).sentence == "system DNS: no address for a.test")
    }

    @Test("a failure goes to JSON as its sentence and comes back equal, known by its sentence")
    func codableRoundTrip() throws {
        for (failure, _) in Self.kinds {
            let data = try JSONEncoder().encode([failure])
            #expect(try JSONDecoder().decode([String].self, from: data) == [failure.sentence])
            let back = try JSONDecoder().decode([AttemptFailure].self, from: data)
            #expect(back == [failure])
            #expect(back.first?.kind == "reported")
        }
        let attempt = Attempt(
            url: "https://a.test/", scenario: .directSNI, outcome: .tooManyRedirects, error: .redirectLimit(2))
        let decoded = try JSONDecoder().decode(Attempt.self, from: try JSONEncoder().encode(attempt))
        #expect(decoded.error?.sentence == "stopped after 2 redirects: the chain is longer than the limit")
    }

    @Test("redaction keeps a failure that holds no secret, and hides one that does")
    func scrubbing() {
        let hop = Hop(
            url: "https://a.test/", originalURL: "https://a.test/", method: "GET", resolver: .httpdns,
            outcome: .connectFailed, error: .connectionBroke(target: "127.0.0.1:443", detail: "echoed hunter2"))
        let hidden = Redaction.hop(hop, secrets: ["hunter2"])
        #expect(hidden.error?.sentence == "the connection to 127.0.0.1:443 broke: echoed \(Redaction.marker)")
        #expect(hidden.error?.kind == "reported")
        let kept = Redaction.hop(hop, secrets: ["swordfish"])
        #expect(kept.error?.kind == "connection-broke")
    }

    @Test("the engine says which failure it saw by case: a refused connect, a loop, a skipped scenario")
    func engineHandsOutCases() async throws {
        try await withLab { lab in
            var options = ProbeOptions(scenarios: [.directHTTP, .directSNI])
            options.caFile = lab.endpoints.ca
            let resolver = zoneResolver(lab, httpdns: ["single.lab.test": ["127.0.0.9"]])
            let engine = ProbeEngine(resolve: resolver, options: options, environment: [:])
            let report = try #require(await engine.probeAll([lab.url("single.lab.test")]).first)
            let refused = try #require(report.attempts(.directSNI).first)
            guard case .connectionRefused(let target) = refused.error else {
                Issue.record("not a refused connect: \(String(describing: refused.error))")
                return
            }
            #expect(target.hasPrefix("127.0.0.9:"))
            #expect(refused.hops.first?.error?.kind == "connection-refused")
            #expect(report.attempts(.directHTTP).first?.error == .notApplicable(.directHTTP))
            #expect(report.attempts(.directHTTP).first?.error?.kind == "not-applicable")

            let loop = try #require(
                await lab.engine(ProbeOptions(scenarios: [.directSNI])).probeAll([
                    lab.url("hostile.lab.test", LabHostilePath.loop)
                ]).first?.attempts.first)
            #expect(loop.error?.kind == "redirect-loop")
        }
    }
}

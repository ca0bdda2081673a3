// A console state with a little of everything, built from the shared model types, at a
// fixed moment in UTC so every snapshot draws the same frame on every machine.
import Console
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe

enum ConsoleFixtures {
    /// 2026-11-23 08:00:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_795_420_800)
    static let engine = EngineDescription(
        provider: "alicloud", endpoint: "http://127.0.0.1:18080/lab", lab: true,
        labExamples: (try? Lab.examples()) ?? [])

    static func emptyState(
        size: TerminalSize = TerminalSize(width: 80, height: 24), glyphs: Glyphs = .unicode
    )
        -> ConsoleState
    {
        ConsoleState(
            size: size, now: now, engine: engine, glyphs: glyphs, timeZone: TimeZone(identifier: "UTC")!,
            maxTraces: 1_000)
    }

    static let resolution = HostResolution(
        host: "sni-a.lab.test",
        system: SystemAnswer(ms: 0.4, error: "system DNS has no answer for sni-a.lab.test"),
        httpdns: HTTPDNSAnswer(provider: "alicloud", ipv4: ["127.0.0.1"], ttl: FamilyTTL(v4: 60), ms: 2.3))

    static func certificate(for name: String, verify: Int, message: String) -> CertificateReport {
        CertificateReport(
            chain: [
                CertificateSummary(
                    subject: "CN=\(name)", subjectAlternativeNames: ["DNS:\(name)"], issuer: "CN=ipdirect lab CA",
                    notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(86_400 * 30),
                    sha256: "ab:cd"),
                CertificateSummary(
                    subject: "CN=ipdirect lab CA", subjectAlternativeNames: [], issuer: "CN=ipdirect lab CA",
                    notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(86_400 * 365),
                    sha256: "12:34"),
            ], verifyResult: verify, verifyMessage: message)
    }

    static func attempt(
        _ scenario: Scenario, outcome: Outcome, status: Int? = nil, total: Double, sni: String? = nil,
        error: AttemptFailure? = nil, seconds: Double = 0
    ) -> Attempt {
        let https = scenario != .directHTTP
        let url = scenario == .directHTTP ? "http://127.0.0.1:18081/" : "https://sni-a.lab.test:18443/"
        let requested = scenario == .directHTTPS ? "https://127.0.0.1:18443/" : url
        let timings = PhaseTimings(
            nameLookup: scenario == .systemDNS ? 0.4 : 0.02, connect: 0.3, tlsDone: https ? 3.1 : nil,
            preTransfer: https ? 3.2 : 0.35, firstByte: outcome == .ok ? total - 0.4 : nil, total: total)
        let hop = Hop(
            url: requested, originalURL: url, method: "GET",
            requestHeaders: [
                HeaderField(name: "Host", value: "sni-a.lab.test:18443"),
                HeaderField(name: "User-Agent", value: "ipdirect/0.1"), HeaderField(name: "Accept", value: "*/*"),
            ],
            remoteIP: "127.0.0.1", remotePort: https ? 18443 : 18081, resolver: .httpdns, sni: sni,
            checkedName: https ? "sni-a.lab.test" : nil, outcome: outcome, status: status,
            httpVersion: status == nil ? nil : "1.1",
            responseHeaders: status == nil
                ? []
                : [
                    HeaderField(name: "Content-Type", value: "text/plain"),
                    HeaderField(name: "Content-Length", value: "24"),
                ],
            responseBytes: status == nil ? 0 : 24, bodyPreview: "hello from sni-a.lab.test", timings: timings,
            certificate: https && scenario != .systemDNS
                ? certificate(
                    for: sni == nil ? "default.lab.test" : "sni-a.lab.test", verify: outcome == .ok ? 0 : 62,
                    message: outcome == .ok ? "ok" : "hostname mismatch")
                : nil,
            error: error,
            log: [
                CurlLogLine(atMs: 0.01, kind: .info, text: "Trying 127.0.0.1:18443..."),
                CurlLogLine(atMs: 0.3, kind: .info, text: "Connected to 127.0.0.1 port 18443"),
                CurlLogLine(atMs: 3.1, kind: .ssl, text: "SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384"),
                CurlLogLine(atMs: 3.2, kind: .headerOut, text: "GET / HTTP/1.1"),
            ], startedAt: now.addingTimeInterval(seconds))
        return Attempt(
            id: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", Int(seconds * 10 + total)))!, url: url,
            scenario: scenario, ip: scenario == .systemDNS ? nil : "127.0.0.1",
            ipSource: scenario == .systemDNS ? .system : .httpdns, sni: sni,
            checkedName: https ? "sni-a.lab.test" : nil,
            outcome: outcome, status: status, httpVersion: status == nil ? nil : "1.1", timings: timings,
            certificate: hop.certificate, error: error, hops: [hop])
    }

    static var attempts: [Attempt] {
        [
            attempt(
                .systemDNS, outcome: .dnsFailed, total: 0.4, sni: "sni-a.lab.test",
                error: "system DNS has no answer for sni-a.lab.test", seconds: -3),
            attempt(
                .directHTTPS, outcome: .certNameMismatch, total: 3.3,
                error: "certificate is for default.lab.test, not sni-a.lab.test (no SNI sent)", seconds: -2),
            attempt(.directSNI, outcome: .ok, status: 200, total: 5.6, sni: "sni-a.lab.test", seconds: -1),
        ]
    }

    static var report: URLReport {
        URLReport(
            url: "https://sni-a.lab.test:18443/", host: "sni-a.lab.test", resolution: resolution, attempts: attempts,
            verdict: Verdict(
                works: [.directSNI], recommended: .directSNI,
                summary:
                    "use direct-sni: without SNI the server presents its default certificate, which is not for sni-a.lab.test",
                notes: ["system DNS does not know sni-a.lab.test: only HTTPDNS answers"]))
    }

    static var cacheEntries: [CacheEntrySnapshot] {
        [
            CacheEntrySnapshot(
                host: "sni-a.lab.test", family: .v4, ips: ["127.0.0.1"], ttl: 60,
                resolvedAt: now.addingTimeInterval(-3),
                source: .httpdns, hits: 3),
            CacheEntrySnapshot(
                host: "dual.lab.test", family: .v6, ips: ["::1"], ttl: 300, resolvedAt: now.addingTimeInterval(-20),
                source: .cache, hits: 1),
            CacheEntrySnapshot(
                host: "dual.lab.test", family: .v4, ips: ["127.0.0.1", "127.0.0.2"], ttl: 300,
                resolvedAt: now.addingTimeInterval(-20), source: .httpdns, hits: 0),
            CacheEntrySnapshot(
                host: "expired.lab.test", family: .v4, ips: ["127.0.0.1"], ttl: 30,
                resolvedAt: now.addingTimeInterval(-95),
                source: .stale, hits: 7),
            CacheEntrySnapshot(
                host: "slow.lab.test", family: .v4, ips: ["127.0.0.1"], ttl: 10,
                resolvedAt: now.addingTimeInterval(-12),
                source: .systemFallback, hits: 2, refreshing: true),
        ]
    }

    static var events: [ResolverEvent] {
        [
            ResolverEvent(
                time: now.addingTimeInterval(-95), kind: .miss, host: "expired.lab.test", family: .v4,
                detail: "not cached: asking HTTPDNS"),
            ResolverEvent(
                time: now.addingTimeInterval(-4), kind: .miss, host: "sni-a.lab.test", family: .v4,
                detail: "not cached: asking HTTPDNS"),
            ResolverEvent(
                time: now.addingTimeInterval(-3), kind: .refresh, host: "sni-a.lab.test", family: .v4,
                detail: "sni-a.lab.test v4 refreshed from HTTPDNS: 127.0.0.1 (ttl 60s)"),
            ResolverEvent(
                time: now.addingTimeInterval(-2), kind: .expired, host: "expired.lab.test", family: .v4,
                detail: "ttl ran out 65s ago; serving the old answer while refreshing"),
            ResolverEvent(
                time: now.addingTimeInterval(-1), kind: .fallback, host: "slow.lab.test", family: .v4,
                detail: "HTTPDNS timed out after 2s; using system DNS"),
            ResolverEvent(time: now, kind: .hit, host: "sni-a.lab.test", family: .v4, detail: "fresh, 57s left"),
        ]
    }

    /// A state after probing sni-a.lab.test (finished) and a.lab.test (still running).
    static func populatedState(size: TerminalSize, glyphs: Glyphs = .unicode) -> ConsoleState {
        var state = emptyState(size: size, glyphs: glyphs)
        send(&state, keys: "psni-a.lab.test")
        _ = reduce(into: &state, action: .key(.enter))
        _ = reduce(into: &state, action: .probeEvent(runID: 1, .resolved(resolution)))
        for attempt in attempts { _ = reduce(into: &state, action: .probeEvent(runID: 1, .attemptFinished(attempt))) }
        _ = reduce(into: &state, action: .probeEvent(runID: 1, .finished(report)))
        _ = reduce(into: &state, action: .probeEnded(runID: 1))
        _ = reduce(into: &state, action: .cacheEntries(cacheEntries))
        for event in events { _ = reduce(into: &state, action: .resolverEvent(event)) }
        _ = reduce(into: &state, action: .labFaultChanged(.slow))
        _ = reduce(into: &state, action: .message("sni-a.lab.test: use direct-sni"))
        return state
    }

    /// Types each character of `text` as a key.
    static func send(_ state: inout ConsoleState, keys text: String) {
        for character in text { _ = reduce(into: &state, action: .key(.character(character))) }
    }
}

// The audit against reference clients: curl and Python, each used rightly and wrongly, run on
// loopback against an audit of its own; the report must tell them apart trap by trap, unprompted.
import Audit
import Composition
import Foundation
import TestSupport
import Testing

@Suite("Audit against reference clients")
struct AuditReferenceClientTests {
    /// What each reference client must get, trap by trap (Clients/reference_client.py says what
    /// each does). Every trap has a client that passes it and one that fails it.
    static let expected: [String: [AuditTrapID: AuditStatus]] = [
        "curl-right": [
            .wrongName: .pass, .untrusted: .pass, .expired: .pass, .sni: .pass, .host: .pass, .postBody: .pass,
            .redirect: .pass, .fallback: .pass, .fallbackTimeout: .pass, .ttl: .warn, .cookie: .pass, .family: .pass,
            .proxy: .pass,
        ],
        "curl-wrong": [
            .wrongName: .fail, .untrusted: .fail, .expired: .fail, .sni: .fail, .host: .fail, .postBody: .fail,
            .redirect: .fail, .fallback: .fail, .fallbackTimeout: .fail, .ttl: .fail, .cookie: .pass, .family: .fail,
            .proxy: .fail,
        ],
        "python-right": [
            .wrongName: .pass, .untrusted: .pass, .expired: .pass, .sni: .pass, .host: .pass, .postBody: .pass,
            .redirect: .pass, .fallback: .pass, .fallbackTimeout: .pass, .ttl: .pass, .cookie: .pass, .family: .pass,
            .proxy: .pass,
        ],
        "python-insecure": [
            .wrongName: .fail, .untrusted: .fail, .expired: .fail, .sni: .pass, .host: .pass, .postBody: .pass,
            .redirect: .fail, .fallback: .pass, .fallbackTimeout: .pass, .ttl: .pass, .cookie: .fail, .family: .pass,
            .proxy: .fail,
        ],
    ]

    static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Clients/reference_client.py").path

    @Test(
        "the report tells each reference client's mistakes from the right way, trap by trap",
        arguments: ["curl-right", "curl-wrong", "python-right", "python-insecure"])
    func referenceClient(mode: String) async throws {
        let session = try await AuditSession.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let setupFile = scratch.file("setup.json")
        try session.setup.jsonLine().write(to: URL(fileURLWithPath: setupFile))
        let run = try await ChildProcess.shell("python3 \(Self.client) \(mode) \(setupFile)")
        let report = session.report()
        try await session.shutdown()
        #expect(run.status == 0, "\(run.errors)")
        let got = Dictionary(uniqueKeysWithValues: report.findings.map { ($0.trap, $0.status) })
        for trap in AuditTrapID.allCases {
            let finding = report.findings.first { $0.trap == trap }
            #expect(
                got[trap] == Self.expected[mode]?[trap],
                "\(mode) \(trap.rawValue): \(finding?.seen ?? "no finding") \(finding?.evidence ?? [])")
        }
        // A verdict other than a pass says what to change, and rests on evidence.
        for finding in report.findings where finding.status == .fail || finding.status == .warn {
            #expect(finding.advice?.isEmpty == false, "\(finding.trap)")
            #expect(!finding.evidence.isEmpty, "\(finding.trap)")
        }
        #expect(report.exitCode == (mode == "python-right" ? 0 : mode == "curl-right" ? 1 : 3))
    }

    @Test("every trap has a reference client that passes it and one that fails it")
    func everyTrapTellsApart() {
        for trap in AuditTrapID.allCases {
            let statuses = Self.expected.values.compactMap { $0[trap] }
            #expect(statuses.contains(.pass) && statuses.contains(.fail), "\(trap.rawValue)")
        }
    }

    @Test("traps an app never touched are not exercised, never passed, and the audit exits 0")
    func untouched() async throws {
        let session = try await AuditSession.start()
        let report = session.report()
        try await session.shutdown()
        #expect(report.findings.count == AuditTraps.all.count)
        #expect(report.findings.allSatisfy { $0.status == .notExercised })
        #expect(report.findings.allSatisfy { $0.advice != nil })
        #expect(report.exitCode == 0)
    }
}

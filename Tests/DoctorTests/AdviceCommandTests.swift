// Advice names only commands and flags that exist: every `ipdirect` command a doctor run prints
// (in its advice or its reproduce lines) is run against the lab and must not be a usage error.

import Foundation
import TestSupport
import Testing

@Suite("Doctor advice runs", .enabled(if: BuiltBinary.ipdirect != nil, "the ipdirect binary was not built"))
struct AdviceCommandTests {
    /// The `ipdirect ...` commands of a report: reproduce lines, and commands quoted in advice.
    static func commands(_ report: ReportJSON) -> [String] {
        var found: [String] = []
        for finding in report.findings {
            found += finding.reproduce.filter { $0.hasPrefix("ipdirect ") }
            for match in (finding.advice ?? "").matches(of: /`(ipdirect [^`]+)`/) { found.append(String(match.1)) }
        }
        return found.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    }

    @Test(arguments: [
        [], ["--host", "hijacked.lab.test"], ["--provider", "doh-json"], ["--fault", "unsigned-refused"],
    ])
    func everyIPDirectCommandTheDoctorPrintsIsUsable(_ extra: [String]) async throws {
        let binary = try #require(BuiltBinary.ipdirect)
        var arguments = ["doctor", "--lab", "--format", "json"] + extra
        if extra.first == "--provider" { arguments += ["--endpoint", "https://127.0.0.1:1/resolve"] }
        let run = try await ChildProcess.run(binary, arguments, seconds: 120)
        #expect(run.status != 2, "\(run.errors)")
        let report = try run.report()
        for command in Self.commands(report) {
            // Against a lab of its own: the words after `ipdirect`, the first lab's own endpoint, account
            // and CA (gone with it) left to --lab, which sets them.
            var words: [String] = []
            var skipNext = false
            for word in command.split(separator: " ").dropFirst() {
                let text = String(word).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
                if skipNext {
                    skipNext = false
                } else if ["--endpoint", "--account", "--httpdns-ca"].contains(text) {
                    skipNext = true
                } else {
                    words.append(text)
                }
            }
            let result = try await ChildProcess.run(binary, words + ["--lab"], seconds: 60)
            #expect(result.status != 2, "\(command): \(result.errors)")
        }
    }
}

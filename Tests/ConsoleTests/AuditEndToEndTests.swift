// The audit view in the real binary under tmux: A, A starts the audit's lab; curl used rightly
// (`--resolve` from the view's HTTPDNS endpoint, `--cacert` its CA) hits the SNI trap, whose row passes.
import Foundation
import TestSupport
import Testing

@Suite("Audit view end to end under tmux", .enabled(if: TmuxPane.available, "tmux is not installed"))
struct AuditEndToEndTests {
    /// The first match of `pattern` (its first group, when it has one) in `text`.
    static func first(_ pattern: String, in text: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
        else { return nil }
        let range = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
        return Range(range, in: text).map { String(text[$0]) }
    }

    static func sniRow(_ screen: String) -> String {
        screen.split(separator: "\n").map(String.init).first { $0.contains(" SNI ") } ?? ""
    }

    @Test("curl used rightly against the SNI trap the view lists: the row goes from not exercised to pass")
    func curlPassesSNI() async throws {
        let terminal = try await TmuxTerminal.console()
        defer { terminal.close() }
        let pane = terminal.pane
        try await pane.send("A")
        _ = await pane.wait(for: "starts the traps")
        try await pane.send("A")
        let started = await pane.wait(seconds: 90) { screen in
            screen.contains("  token ") && Self.sniRow(screen).contains("not exercised")
        }
        let endpoint = try #require(
            Self.first(#"(http://127\.0\.0\.1:\d+)/ip\?host=NAME"#, in: started), "\(started)")
        let ca = try #require(Self.first(#"\n  CA +(\S+)"#, in: started), "\(started)")
        let url = try #require(Self.first(#"(https://sni\.[0-9a-f]{8}\.audit\.lab\.test:\d+/)"#, in: started))
        let name = try #require(Self.first(#"https://([^:/]+)"#, in: url))
        let port = try #require(Self.first(#":(\d+)/$"#, in: url))

        // What an app done right does: ask HTTPDNS, then connect to that IP with the name kept.
        let asked = try await ChildProcess.shell("curl -sS --noproxy '*' '\(endpoint)/ip?host=\(name)'")
        let ip = try #require(asked.output.split(separator: "\n").first.map(String.init), "\(asked.errors)")
        let request = try await ChildProcess.shell(
            "curl -sS -o /dev/null --noproxy '*' --resolve '\(name):\(port):\(ip)' --cacert '\(ca)' '\(url)'")
        #expect(request.status == 0, "\(request.errors)")

        let passed = await pane.wait(seconds: 30) { Self.sniRow($0).contains("pass") }
        #expect(Self.sniRow(passed).contains("Every request arrived with SNI \(name)"), "\(passed)")
        #expect(passed.contains("1 pass"), "\(passed)")

        try await pane.send("q")
        await pane.waitForExit()
        #expect(await pane.screenAndHistory().contains("IPDIRECT-EXITED-0"))
    }
}

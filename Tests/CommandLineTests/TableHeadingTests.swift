// What `probe`'s and `resolve`'s tables say about who answered: the provider with its SDK profile
// and cipher on the first line, and a name no scenario got an address for said once, not per row.
import Foundation
import TestSupport
import Testing

@Suite struct TableHeadingTests {
    @Test(
        "the table's first line names the provider, its SDK profile, its cipher and where it points",
        arguments: ["probe", "resolve"])
    func headingNamesProvider(command: String) async throws {
        let target = command == "probe" ? "https://sni-a.lab.test/" : "sni-a.lab.test"
        let result = try await ChildProcess.run(
            BuiltBinary.ipdirectPath, [command, "--lab", "--sdk", "ios-3.4", "--cipher", "aes-cbc", target])
        #expect(result.status == 0, "\(result.output)")
        let first = try #require(result.output.split(separator: "\n").first.map(String.init))
        #expect(first.hasPrefix("provider: alicloud (signed, aes-cbc, sdk ios-3.4) at https://127.0.0.1:"), "\(first)")
        #expect(first.hasSuffix(" (lab)"), "\(first)")
    }

    @Test("a name no scenario got an address for is explained once, with one line for the scenarios")
    func totalFailureOnce() async throws {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["probe", "--lab", "https://app.lab.test/"])
        #expect(result.status == 1, "\(result.output)")
        let sentence = "no such name app.lab.test"
        #expect(result.output.components(separatedBy: sentence).count - 1 == 1, "\(result.output)")
        #expect(
            result.output.contains("  dns-failed: system-dns, direct-https, direct-sni: no address to connect to\n"),
            "\(result.output)")
        #expect(
            result.output.contains(
                "  verdict: no direct technique works: no scenario got an address for app.lab.test\n"),
            "\(result.output)")
        #expect(!result.output.contains("  scenario "), "no table of rows that all say the same: \(result.output)")
    }
}

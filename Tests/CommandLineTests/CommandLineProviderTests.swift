// The providers as the command line shows them: `--help` and the shell completions list the
// registry's kinds in its order, and a provider that cannot be built is said with the flags that fix it.
import Foundation
import NameResolution
import TestSupport
import Testing

@Suite struct CommandLineProviderTests {
    /// The kinds in the order `ProviderRegistry` lists them (its help sentence's order).
    static let kinds = ProviderRegistry.all.map(\.kind.rawValue)

    @Test("--help lists --provider's values in the registry's order, the order its sentence names them")
    func helpListsRegistry() async throws {
        // Wide enough that no line is wrapped.
        let help = try await ChildProcess.run(
            BuiltBinary.ipdirectPath, ["resolve", "--help"],
            environment: ProcessInfo.processInfo.environment.merging(["COLUMNS": "400"]) { $1 })
        #expect(help.status == 0, "\(help.errors)")
        #expect(help.output.contains("(values: \(Self.kinds.joined(separator: ", ")))"), "\(help.output)")
    }

    @Test("the zsh and fish completions offer --provider's values in the registry's order")
    func completionsListRegistry() async throws {
        let zsh = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["--generate-completion-script", "zsh"])
        let quoted = Self.kinds.map { "'\($0)'" }.joined(separator: " ")
        #expect(zsh.output.contains("___provider=(\(quoted))"), "zsh script lacks ___provider=(\(quoted))")
        let fish = try await ChildProcess.run(BuiltBinary.ipdirectPath, ["--generate-completion-script", "fish"])
        let listed = Self.kinds.joined(separator: " ")
        #expect(fish.output.contains("-l 'provider'"), "fish script has no --provider")
        #expect(
            fish.output.split(separator: "\n").filter { $0.contains("-l 'provider'") }
                .allSatisfy { $0.hasSuffix("-rfka '\(listed)'") }, "fish script does not offer '\(listed)'")
    }

    @Test(
        "an SDK profile that does not fit is said with the flags that fix it",
        arguments: [
            (
                ["--sdk", "c-2.2"],
                "ipdirect: --sdk c-2.2 speaks the legacy API: use --provider alicloud-legacy"
            ),
            (
                ["--sdk", "node-1.0", "--cipher", "aes-cbc", "--sdns", "region=east"],
                "ipdirect: --sdk node-1.0 sends names in the clear and no sdns-* parameters: drop --cipher aes-cbc and --sdns region=east"
            ),
        ])
    func sdkMismatch(flags: [String], says expected: String) async throws {
        let scratch = try ScratchDirectory("sdk-mismatch")
        defer { scratch.remove() }
        // Own configuration and cache directories, so the user's files play no part.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
        environment["XDG_CONFIG_HOME"] = scratch.path
        environment["XDG_CACHE_HOME"] = scratch.path
        let result = try await ChildProcess.run(
            BuiltBinary.ipdirectPath,
            ["resolve", "a.lab.test", "--provider", "alicloud", "--endpoint", "http://127.0.0.1:9", "--account", "1"]
                + flags, environment: environment)
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.errors == expected + "\n")
    }
}

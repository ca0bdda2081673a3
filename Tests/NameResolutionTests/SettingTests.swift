// Typed setting hints: each front end names a setting its own way, the resolver's settings agree
// with the configuration's field list, and no library sentence spells a command-line flag.
import ConfigurationSources
import Foundation
import NameResolution
import Testing

@Suite("Setting hints")
struct SettingTests {
    @Test(
        "the command line names a setting by its flag, the console by its key or in words, the agent's log by its key")
    func voices() {
        #expect(Setting.dnsServer.named(.commandLine, value: "10.0.0.2") == "--dns-server 10.0.0.2")
        #expect(Setting.dnsServer.named(.console, value: "10.0.0.2") == "dns_server = \"10.0.0.2\"")
        #expect(Setting.dnsServer.named(.configuration) == "dns_server")
        #expect(Setting.probeCAFile.named(.console) == "a CA file for the probes")
        // A setting of the agent only its flag gives keeps the flag in the agent's log.
        #expect(Setting.probeAllow.named(.configuration, value: "169.254.0.0/16") == "--probe-allow 169.254.0.0/16")
        #expect(Setting.cipher.givenAs(.commandLine) == "--cipher (or cipher in the configuration file)")
        #expect(Setting.cipher.givenAs(.console) == "cipher in the configuration file")
    }

    @Test("every setting with a key is a field of the configuration, once, and every field is such a setting")
    func agreesWithFieldList() {
        // The field takes its key and flag from its setting; what is left to hold together is
        // that the two lists name the same settings.
        let fields = ConfigurationField.all.map(\.setting)
        #expect(Set(fields).count == fields.count, "a setting read twice: \(fields)")
        #expect(Set(fields) == Set(Setting.allCases.filter { $0.key != nil }))
        #expect(ConfigurationField.all.first { $0.key == "dns_server" }?.flag == "--dns-server")
    }

    @Test("a provider's missing setting reads in the library's words and in the command line's")
    func providerSettingsNamedOnce() {
        let missing = ProviderSetupError.missing(.account, provider: .alicloud)
        #expect(missing.description == "alicloud needs an account ID: the account setting")
        #expect(
            missing.phrased(naming: ConfigurationField.waysToGive)
                == "alicloud needs an account ID: --account, IPDIRECT_ACCOUNT or 'account' in the configuration file")
        // A setting no flag gives is named as the file gives it.
        #expect(Setting.secret.named(.commandLine) == "secret")
        #expect(Setting.startIPs.givenAs(.commandLine) == "start_ips in the configuration file")
    }

    /// Whole literals that are another program's argument word, where the library writes a
    /// command to type: curl's (ReproduceCommand, the DNS paths check), systemctl's, and
    /// `ipdirect resolve`'s in the client address check's reproduce lines.
    private static let commandWords: [String: Set<String>] = [
        "ReproduceCommand.swift": ["--max-time", "--resolve", "--cacert", "--data-binary", "--data-raw"],
        "DNSPathsCheck.swift": ["--max-time", "--cacert"],
        "ResolvConf.swift": ["--no-pager"],
        "ClientAddressCheck.swift": ["--provider", "--endpoint", "--account", "--httpdns-ca", "--client-ip"],
    ]

    @Test(
        "no string literal in Probe, Agent or Doctor names a command-line flag (argument words of reproduce commands aside)"
    )
    func noFlagInLibrarySentences() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let literal = try Regex(#""(?:[^"\\]|\\.)*""#)
        let flag = try Regex(#"(?:^|[^\w-])--[a-z]"#)
        var found: [String] = []
        var files = 0
        for module in ["Probe", "Agent", "Doctor"] {
            let folder = sources.appendingPathComponent(module)
            let paths = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
            for path in paths where path.hasSuffix(".swift") {
                files += 1
                let name = URL(fileURLWithPath: path).lastPathComponent
                let text = try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    // Comments may name flags: they speak to the maintainer.
                    let code = line.trimmingCharacters(in: .whitespaces)
                    if code.hasPrefix("//") { continue }
                    for match in code.matches(of: literal) {
                        let words = String(code[match.range].dropFirst().dropLast())
                        if Self.commandWords[name]?.contains(words) == true { continue }
                        if words.contains(flag) { found.append("\(module)/\(path):\(number + 1): \(words)") }
                    }
                }
            }
        }
        #expect(files > 50, "the sources were not found under \(sources.path)")
        #expect(found.isEmpty, "name the setting with a Setting hint instead:\n\(found.joined(separator: "\n"))")
    }
}

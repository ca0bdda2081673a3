// The agent's targets file: the `probe --input` format, re-read on change; a deleted, broken or
// emptied file keeps the last good list, and says so once.
import Agent
import ConfigurationSources
import CurlTransport
import Foundation
import NameResolution
import Probe
import TestSupport
import Testing

@Suite("Targets file")
struct TargetsFileTests {
    @Test("the --input format: one URL a line, comments and blank lines skipped, each URL once")
    func format() throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("targets.txt")
        try "# the fleet's list\nhttps://a.example/x\n\n  b.example:8443/health  # port kept\nhttps://a.example/x\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let file = try TargetsFile(path: path)
        #expect(file.targets.map(\.url) == ["https://a.example/x", "b.example:8443/health"])
        // The path never becomes a label: two URLs on one host share one.
        #expect(file.targets.map(\.label) == ["a.example", "b.example:8443"])
    }

    @Test("a # inside a quoted header value is part of the value; outside quotes it starts a comment")
    func hashInQuotes() throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("targets.txt")
        let list = #"https://a.example/ header="X-Tag: a#b" header='X-Other: #1' # the comment"# + "\n"
        try list.write(toFile: path, atomically: true, encoding: .utf8)
        let file = try TargetsFile(path: path)
        let headers = try #require(file.targets.first?.settings.headers)
        #expect(headers.map(\.value) == ["a#b", "#1"])
    }

    @Test("a change is loaded; a deleted, broken or empty file keeps the last good list and says why")
    func keepsLastGood() throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("targets.txt")
        try "https://a.example/\n".write(toFile: path, atomically: true, encoding: .utf8)
        let file = try TargetsFile(path: path)
        #expect(file.check() == .unchanged)

        try "https://a.example/\nhttps://b.example/\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(file.check() == .loaded(count: 2))

        try "https://a.example/\nhttps://exa mple/\n".write(toFile: path, atomically: true, encoding: .utf8)
        guard case .keptLast(let count, let problem) = file.check() else {
            Issue.record("a broken line was accepted")
            return
        }
        #expect(count == 2)
        #expect(problem.description.contains("line 2"))
        // Said once: the same broken file is not reported every second.
        #expect(file.check() == .unchanged)
        #expect(file.targets.count == 2)

        try FileManager.default.removeItem(atPath: path)
        guard case .keptLast(_, let gone) = file.check() else {
            Issue.record("a deleted file was not noticed")
            return
        }
        #expect(gone.description.contains("does not exist"))
        #expect(file.targets.map(\.url) == ["https://a.example/", "https://b.example/"])

        try "# nothing yet\n".write(toFile: path, atomically: true, encoding: .utf8)
        guard case .keptLast(_, .empty) = file.check() else {
            Issue.record("an empty list replaced the targets")
            return
        }
        // SIGHUP re-reads even an unchanged file, and says the problem again.
        guard case .keptLast = file.check(force: true) else {
            Issue.record("a forced reload said nothing")
            return
        }

        try "https://c.example/\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(file.check() == .loaded(count: 1))
        #expect(file.targets.map(\.url) == ["https://c.example/"])
    }

    @Test("a line may carry its own scenarios, method and headers; a bad one is named by line")
    func lineSettings() throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("targets.txt")
        try """
        https://a.example/ scenario=direct-sni,direct-https method=head header="X-A: b c" header='X-B: d'
        https://b.example/
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let file = try TargetsFile(path: path)
        #expect(file.targets.map(\.url) == ["https://a.example/", "https://b.example/"])
        #expect(
            file.targets.first?.settings
                == TargetSettings(
                    scenarios: [.directSNI, .directHTTPS], method: .head,
                    headers: [HeaderField(name: "X-A", value: "b c"), HeaderField(name: "X-B", value: "d")]))
        #expect(file.targets.last?.settings.isEmpty == true)

        for (line, reason) in [
            ("https://a.example/ scenario=direct-ssl", "'direct-ssl' is not a scenario"),
            ("https://a.example/ method=POST", "the agent sends GET or HEAD"),
            ("https://a.example/ header=nocolon", "a header is 'Name: value'"),
            ("https://a.example/ colour=red", "'colour' is not a setting"),
            ("https://a.example/ header=\"X-A: b", "is not closed; add the closing \""),
        ] {
            try "https://b.example/\n\(line)\n".write(toFile: path, atomically: true, encoding: .utf8)
            #expect(throws: TargetListError.self) { try TargetsFile(path: path) }
            do {
                _ = try TargetsFile(path: path)
            } catch {
                #expect("\(error)".contains("line 2: ") && "\(error)".contains(reason), "\(error)")
            }
        }
    }

    @Test("[[agent.targets]] in the configuration file: read, merged after the file's, checked with sentences")
    func configuredTargets() throws {
        let toml = """
            [[agent.targets]]
            url = "https://c.example/health"
            scenarios = ["direct-sni"]
            method = "HEAD"
            headers = ["X-Probe: agent"]

            [[agent.targets]]
            url = "https://a.example/"
            """
        let layer = try ConfigurationLayer.toml(toml, path: "config.toml")
        #expect(layer.warnings.isEmpty)
        let configuration = layer.layer.resolved(defaultCachePath: nil)
        let configured = try AgentTarget.configured(configuration.agent)
        #expect(configured.map(\.url) == ["https://c.example/health", "https://a.example/"])
        #expect(
            configured.first?.settings
                == TargetSettings(
                    scenarios: [.directSNI], method: .head, headers: [HeaderField(name: "X-Probe", value: "agent")]))

        // Merged with the targets file: its lines first; a URL in both keeps the file's settings.
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        let path = scratch.file("targets.txt")
        try "https://a.example/ method=GET\n".write(toFile: path, atomically: true, encoding: .utf8)
        let file = try TargetsFile(path: path, configured: configured)
        #expect(file.targets.map(\.url) == ["https://a.example/", "https://c.example/health"])
        #expect(file.targets.first?.settings.method == .get)

        for (entry, reason) in [
            ("url = \"https://a.example/\"\nscenarios = [\"direct-ssl\"]", "'direct-ssl' is not a scenario"),
            ("url = \"https://a.example/\"\nmethod = \"POST\"", "the agent sends GET or HEAD"),
            ("url = \"https://a.example/\"\nheaders = [\"nocolon\"]", "a header is 'Name: value'"),
            ("url = \"https://exa mple/\"", "exa mple"),
        ] {
            let text = "[[agent.targets]]\nurl = \"https://b.example/\"\n\n[[agent.targets]]\n\(entry)\n"
            let settings = try ConfigurationLayer.toml(text, path: "config.toml").layer.resolved(defaultCachePath: nil)
                .agent
            do {
                _ = try AgentTarget.configured(settings)
                Issue.record("accepted: \(entry)")
            } catch {
                #expect("\(error)".contains("agent.targets #2"), "\(error)")
                #expect("\(error)".contains(reason), "\(error)")
            }
        }
        // The shape is checked where the file is read.
        for bad in [
            "[[agent.targets]]\nscenarios = [\"direct-sni\"]\n",
            "[[agent.targets]]\nurl = \"https://a/\"\nheaders = 3\n",
        ] {
            #expect(throws: ConfigurationError.self) { try ConfigurationLayer.toml(bad, path: "config.toml") }
        }
    }

    @Test("a file that is unusable at start is refused with the reason")
    func refusedAtStart() throws {
        let scratch = try ScratchDirectory("agent")
        defer { scratch.remove() }
        #expect(throws: TargetListError.self) { try TargetsFile(path: scratch.file("missing.txt")) }
    }

    @Test("labels: NAME=VALUE, names Prometheus accepts, none of ipdirect's own")
    func labels() throws {
        let label = try AgentLabel(parsing: "region=cn-hangzhou")
        #expect(label.name == "region" && label.value == "cn-hangzhou")
        #expect(try AgentLabel(parsing: "carrier=").value == "")
        for bad in ["region", "1region=x", "re-gion=x", "target=x", "__name=x", "=x"] {
            #expect(throws: AgentSettingError.self) { try AgentLabel(parsing: bad) }
        }
    }

    @Test("rotation sizes as people write them")
    func sizes() throws {
        #expect(try ByteSize.parse("100MB") == 100 * 1024 * 1024)
        #expect(try ByteSize.parse("512k") == 512 * 1024)
        #expect(try ByteSize.parse("1GiB") == 1024 * 1024 * 1024)
        #expect(try ByteSize.parse("4096") == 4096)
        // The last two trapped: a size past 2^63 bytes cannot be converted to a count.
        for bad in ["", "MB", "10", "1TB", "-5MB", "99999999999999999999G", "9223372036854775808"] {
            #expect(throws: AgentSettingError.self) { try ByteSize.parse(bad) }
        }
    }
}

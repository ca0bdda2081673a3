// A session built from configuration against the lab: the provider from the registry, the lab's
// providers to compare, the cache kept out of the user's file, the doctor's context, and the errors.
import Composition
import ConfigurationSources
import Doctor
import Foundation
import FoundationGaps
import Lab
import LabFaults
import NameResolution
import Probe
import TestSupport
import Testing

/// Collects a session's warnings instead of saying them.
final class CollectedWarnings: SessionWarnings {
    private let said = Locked<[String]>([])
    var sentences: [String] { said.withLock { $0 } }
    func warn(_ sentence: String) { said.withLock { $0.append(sentence) } }
}

@Suite("A session from configuration")
struct ResolverSessionTests {
    /// An environment of the test's own: no IPDIRECT_ settings, CA bundles or user's files.
    private func environment(_ scratch: ScratchDirectory) -> [String: String] {
        ["XDG_CONFIG_HOME": scratch.file("config"), "XDG_CACHE_HOME": scratch.file("cache"), "HOME": scratch.path]
    }

    /// A session against a lab of its own, in an environment of the test's own. The wait for an
    /// answer is generous unless the test sets one: the suites run in parallel on two cores, where
    /// the default 2 s can pass before a loaded lab answers (seen in CI-sized runs).
    private func labSession(
        _ scratch: ScratchDirectory, _ lab: LabRequest = LabRequest(), commandLine: ConfigurationLayer = .init(),
        warnings: CollectedWarnings = CollectedWarnings()
    ) async throws -> ResolverSession {
        var layer = commandLine
        if layer.timeout == nil { layer.timeout = 20 }
        return try await ResolverSession.start(
            SessionSettings(commandLine: layer, lab: lab, environment: environment(scratch)), warnings: warnings)
    }

    @Test("with the lab, names resolve through the lab's HTTPDNS service and the cache stays out of the user's file")
    func labSession() async throws {
        let scratch = try ScratchDirectory("composition")
        defer { scratch.remove() }
        let warnings = CollectedWarnings()
        let session = try await labSession(scratch, warnings: warnings)
        let cachePath = try #require(session.configuration.cachePath)
        let temporary = try #require(session.temporaryDirectory)
        #expect(session.configuration.provider == .alicloud)
        #expect(cachePath.hasPrefix(temporary + "/"))
        #expect(!cachePath.hasPrefix(scratch.path))
        #expect(session.providerDescription.hasSuffix("(lab)"))

        let answer = await session.resolver("plain.lab.test")
        #expect(answer.httpdns.error == nil)
        #expect(!answer.httpdns.ipv4.isEmpty)
        // The lab's DNS server stands in for the system column.
        #expect(session.configuration.dnsServer != nil)
        #expect(warnings.sentences.isEmpty)

        await session.close()
        #expect(!FileManager.default.fileExists(atPath: temporary))
    }

    @Test("with the lab, one provider of each kind the registry compares, all answering an honest name")
    func labProviders() async throws {
        let scratch = try ScratchDirectory("composition")
        defer { scratch.remove() }
        let session = try await labSession(scratch)
        let compared = ProviderRegistry.all.filter { $0.lab?.compared != nil }.map { "lab-\($0.kind.rawValue)" }
        #expect(session.configuration.providers.map(\.name) == compared)
        #expect(compared.count >= 4)

        let engine = LiveConsoleEngine(session: session, probeOptions: ProbeOptions())
        let comparison = await engine.compareProviders("plain.lab.test")
        await session.close()
        #expect(comparison.providers.map(\.name) == compared)
        #expect(comparison.providers.allSatisfy { $0.error == nil && !$0.addresses.isEmpty })
    }

    @Test("with the lab as Tencent's service, the session speaks Tencent's encrypted form with the lab's key")
    func labAsTencent() async throws {
        let scratch = try ScratchDirectory("composition")
        defer { scratch.remove() }
        var commandLine = ConfigurationLayer()
        commandLine.cipher = .des
        let session = try await labSession(scratch, LabRequest(provider: .tencent), commandLine: commandLine)
        #expect(session.configuration.provider == .tencent)
        #expect(session.configuration.key != nil)
        let answer = await session.resolver("plain.lab.test")
        await session.close()
        #expect(answer.httpdns.error == nil)
        #expect(!answer.httpdns.ipv4.isEmpty)
    }

    @Test("the doctor's context: with the lab, its service name, its canary and its ports; a host given comes first")
    func doctorContext() async throws {
        let scratch = try ScratchDirectory("composition")
        defer { scratch.remove() }
        let session = try await labSession(scratch)
        let e = try #require(session.lab?.endpoints)
        let context = session.doctorContext(budget: .seconds(5))
        let given = session.doctorContext(hosts: ["api.example.test"], budget: .seconds(5))
        await session.close()
        #expect(context.resolver.serviceName == LabEndpoints.serviceName)
        #expect(context.canaryName == ResolverSession.labCanary)
        #expect(context.lab?.dnsServer == e.dns)
        #expect(context.lab?.servicePorts?.http == URLComponents(string: e.httpdns)?.port)
        #expect(context.lab?.servicePorts?.https == URLComponents(string: e.httpdnsTLS)?.port)
        #expect(given.canaryName == "api.example.test")
    }

    @Test("a lab name without a port goes to the lab server that serves it; other targets stay as typed")
    func labTargets() async throws {
        let scratch = try ScratchDirectory("composition")
        defer { scratch.remove() }
        let session = try await labSession(scratch)
        let hosts = try #require(session.lab?.endpoints.hosts)
        let plain = try #require(hosts["plain.lab.test"])
        let target = session.labTarget("plain.lab.test/path?q=1")
        let urls = session.labURLs
        await session.close()
        #expect(target == plain + "path?q=1")
        #expect(session.labTarget("https://www.example.test/") == "https://www.example.test/")
        #expect(urls?.count == hosts.count)
    }

    @Test("without the lab: the configuration file's settings, its unknown keys as warnings, the cache where XDG says")
    func configuredSession() async throws {
        let scratch = try ScratchDirectory("composition")
        defer { scratch.remove() }
        let file = scratch.file("config.toml")
        try "provider = \"system\"\nno_such_setting = 1\n".write(toFile: file, atomically: true, encoding: .utf8)
        let warnings = CollectedWarnings()
        let session = try await ResolverSession.start(
            SessionSettings(configurationFile: file, environment: environment(scratch)), warnings: warnings)
        await session.close()
        #expect(session.lab == nil)
        #expect(session.configuration.provider == .system)
        #expect(session.configuration.cachePath == scratch.file("cache") + "/ipdirect/cache.json")
        #expect(session.providerDescription == "none (system DNS only)")
        #expect(warnings.sentences.contains { $0.contains("no_such_setting") })
    }

    @Test("a CA file that is not a file, and a CA bundle the environment names that is not one, stop the start")
    func unusableCAFiles() async throws {
        let scratch = try ScratchDirectory("composition")
        defer { scratch.remove() }
        var commandLine = ConfigurationLayer()
        commandLine.caFile = scratch.path
        await #expect(throws: SessionError.serviceCAFile(path: scratch.path, reason: "it is a directory")) {
            _ = try await ResolverSession.start(
                SessionSettings(commandLine: commandLine, environment: environment(scratch)),
                warnings: CollectedWarnings())
        }
        var withBundle = environment(scratch)
        withBundle["CURL_CA_BUNDLE"] = scratch.path
        do {
            _ = try await ResolverSession.start(
                SessionSettings(environment: withBundle), warnings: CollectedWarnings())
            Issue.record("a directory was taken as a CA bundle")
        } catch let error as SessionError {
            guard case .environmentCABundle(let sentence) = error else {
                Issue.record("not the environment's CA bundle: \(error)")
                return
            }
            #expect(sentence.hasPrefix("CURL_CA_BUNDLE \(scratch.path)"))
        }
    }
}

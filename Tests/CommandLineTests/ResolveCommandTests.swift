// `ipdirect resolve` from outside: it asks afresh and shows what the cache held; `--cached`
// is the SDK's non-blocking read (a miss on a cold cache exits 1).
import Foundation
import Lab
import NameResolution
import TestSupport
import Testing

@Suite struct ResolveCommandTests {
    /// Runs the real binary; returns the exit status and stdout.
    private func run(
        _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, arguments, environment: environment)
        return (result.status, result.output)
    }

    @Test("resolve asks the service and shows the cache column; --cached on a cold cache is a miss")
    func freshAndCached() async throws {
        let fresh = try await run(["resolve", "--lab", "--type", "v4", "sni-a.lab.test"])
        #expect(fresh.status == 0, "\(fresh.output)")
        #expect(fresh.output.contains("CACHE HELD"))
        #expect(fresh.output.contains("(nothing)"))
        #expect(fresh.output.contains("httpdns"))

        let cached = try await run(["resolve", "--lab", "--cached", "--type", "v4", "sni-a.lab.test"])
        #expect(cached.status == 1)
        #expect(cached.output.contains("cache read, the miss asked the service in the background"))
        #expect(cached.output.contains("miss"))
    }

    /// Issue 32: the release build lost each name's answer in the task group that resolves a batch
    /// one name at a time (a miscompile, see `HTTPDNSProvider.resolveBatch`), and then crashed
    /// (SIGSEGV, SIGABRT, SIGILL) in most runs or said "the batch answer did not include" each
    /// name. Only an optimised binary showed it: `make test-release` runs this on the shipped one.
    @Test(
        "resolve with several names through a provider without a batch API answers each by HTTPDNS, run after run",
        arguments: ["doh", "doh-json"])
    func severalNamesOneAtATime(provider: String) async throws {
        let names = ["plain.lab.test", "dual.lab.test", "single.lab.test"]
        let scratch = try ScratchDirectory("batch")
        defer { scratch.remove() }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = scratch.path
        environment["XDG_CONFIG_HOME"] = scratch.path
        // Before the fix 4 runs in 5 of the release build died; ten runs leave little to chance.
        for attempt in 1...10 {
            let result = try await run(
                ["resolve", "--lab", "--provider", provider, "--format", "json"] + names, environment: environment)
            try #require(result.status == 0, "run \(attempt) of --provider \(provider) exited \(result.status)")
            let rows = try #require(
                try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]])
            let sources = Dictionary(
                rows.map { row in
                    ((row["host"] as? String) ?? "?", ((row["httpdns"] as? [String: Any])?["source"] as? String) ?? "?")
                },
                uniquingKeysWith: { first, _ in first })
            #expect(
                sources == Dictionary(uniqueKeysWithValues: names.map { ($0, "httpdns") }),
                "run \(attempt) of --provider \(provider): \(result.output)")
        }
    }

    /// The SDKs' read: a miss starts a background request and the next read finds its answer.
    /// A one-shot command used to exit before that request finished, so nothing was ever kept.
    @Test("--cached: a miss is resolved in the background and saved, so the next read is a hit")
    func cachedMissIsKeptForTheNextRead() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let scratch = try ScratchDirectory("cached")
            defer { scratch.remove() }
            let directory = scratch.path
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CACHE_HOME"] = directory
            environment["XDG_CONFIG_HOME"] = directory
            let read = [
                "resolve", "--cached", "--provider", "alicloud", "--endpoint", e.httpdns, "--account", e.account,
                "--timeout", "10", "--type", "v4", "sni-a.lab.test",
            ]
            let first = try await run(read, environment: environment)
            #expect(first.status == 1, "\(first.output)")
            #expect(first.output.contains("miss"))
            #expect(first.output.contains("cached for the next read"))

            let second = try await run(read, environment: environment)
            #expect(second.status == 0, "\(second.output)")
            #expect(second.output.contains("cache read, no request"))
            #expect(second.output.contains("127.0.0.1"))
            #expect(!second.output.contains("miss"))
        }
    }

    @Test("resolve --lab --all-providers: the lab's four providers and its DNS server, agreement marked, in JSON")
    func allProvidersLab() async throws {
        let result = try await run([
            "resolve", "--lab", "--all-providers", "--type", "v4", "--format", "json", "hijacked.lab.test",
        ])
        #expect(result.status == 0, "\(result.output)")
        let decoded = try JSONDecoder().decode([ProviderComparison].self, from: Data(result.output.utf8))
        let comparison = try #require(decoded.first)
        #expect(comparison.providers.map(\.kind) == [.alicloud, .alicloudLegacy, .tencent, .doh])
        #expect(comparison.providers.allSatisfy { $0.error == nil && $0.group == "A" && $0.vsSystem == .disjoint })
        // The lab's DNS server hijacks the name: its answer gets a letter of its own.
        #expect(comparison.systemGroup == "B")
        #expect(comparison.system.ipv4 == ["127.0.0.2"])
    }

    @Test("[[providers]] from the file, secrets from the variables it names; one unset variable is that row's error")
    func allProvidersFromFile() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let scratch = try ScratchDirectory("compare")
            defer { scratch.remove() }
            let directory = scratch.path
            let config = directory + "/config.toml"
            try """
            provider = "system"
            persist_cache = false
            timeout = 10
            [[providers]]
            name = "signed"
            kind = "alicloud"
            endpoint = "\(e.httpdnsTLS)"
            account = "\(e.account)"
            ca_file = "\(e.ca)"
            secret_env = "COMPARE_TEST_SECRET"

            [[providers]]
            name = "unset"
            kind = "alicloud-legacy"
            endpoint = "\(e.httpdns)"
            account = "\(e.account)"
            secret_env = "COMPARE_TEST_MISSING"
            """.write(toFile: config, atomically: true, encoding: .utf8)
            var environment = ProcessInfo.processInfo.environment
            environment["COMPARE_TEST_SECRET"] = e.secret
            environment["COMPARE_TEST_MISSING"] = nil
            environment["XDG_CACHE_HOME"] = directory
            let result = try await run(
                ["resolve", "--config", config, "--all-providers", "--type", "v4", "sni-a.lab.test"],
                environment: environment)
            #expect(result.status == 0, "\(result.output)")
            let signed = try #require(result.output.split(separator: "\n").first { $0.contains("signed") })
            #expect(signed.contains("127.0.0.1"))
            #expect(signed.contains("60s"))
            #expect(result.output.contains("unset"))
            #expect(result.output.contains("COMPARE_TEST_MISSING, which is not set"))
            #expect(!result.output.contains(e.secret))
        }
    }

    @Test("resolve --dns-server: the DNS server column shows its TTL, and its CNAME chain below the table")
    func dnsServerTTLAndChainInTable() async throws {
        let result = try await run(["resolve", "--lab", "--type", "v4", "alias.lab.test", "ttl5.lab.test"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("127.0.0.1 (ttl 60s)"), "\(result.output)")
        #expect(result.output.contains("127.0.0.1 (ttl 5s)"), "\(result.output)")
        #expect(
            result.output.contains("CNAME alias.lab.test -> alias-hop.lab.test -> plain.lab.test"), "\(result.output)")
    }
}

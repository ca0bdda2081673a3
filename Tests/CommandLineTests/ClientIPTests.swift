// --client-ip: the answer another client address would get (v2 `cip`, legacy `ip=`), in resolve,
// probe and the comparison the console's compare view shows, against the lab, which answers as
// the real service does for the address it is given.
import Foundation
import Lab
import NameResolution
import TestSupport
import Testing

@Suite struct ClientIPTests {
    static let asked = "203.0.113.7"

    private func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        let result = try await ChildProcess.run(BuiltBinary.ipdirectPath, arguments)
        return (result.status, result.output, result.errors)
    }

    private func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test("resolve --client-ip: v2 and legacy ask for that address's answer, and say so")
    func resolve() async throws {
        let v2 = try await run([
            "resolve", "--lab", "--client-ip", Self.asked, "--type", "v4", "--format", "json", "sni-a.lab.test",
        ])
        #expect(v2.status == 0, "\(v2.output)")
        let answer = try #require((try json(v2.output) as? [[String: Any]])?.first?["httpdns"] as? [String: Any])
        #expect(answer["clientIP"] as? String == Self.asked)
        #expect((answer["provider"] as? String)?.contains("for client \(Self.asked)") == true, "\(answer)")

        try await withLab { lab in
            let legacy = try await run([
                "resolve", "--provider", "alicloud-legacy", "--endpoint", lab.endpoints.httpdns, "--account",
                lab.endpoints.account, "--client-ip", Self.asked, "--type", "v4", "--format", "json", "sni-a.lab.test",
            ])
            #expect(legacy.status == 0, "\(legacy.output)")
            let list = try #require(try json(legacy.output) as? [[String: Any]])
            #expect((list.first?["httpdns"] as? [String: Any])?["clientIP"] as? String == Self.asked)
            #expect(lab.httpdnsQueries().first?.path.hasSuffix("&ip=\(Self.asked)") == true)
        }
    }

    @Test("probe --client-ip: the report's HTTPDNS answer is the one for that address")
    func probe() async throws {
        let result = try await run([
            "probe", "--lab", "--client-ip", Self.asked, "--scenario", "direct-sni", "--format", "json",
            "https://sni-a.lab.test/",
        ])
        let reports = try #require(try json(result.output) as? [[String: Any]], "\(result.output)")
        let resolution = try #require(reports.first?["resolution"] as? [String: Any])
        #expect((resolution["httpdns"] as? [String: Any])?["clientIP"] as? String == Self.asked)
    }

    @Test("the comparison puts each Alibaba provider's answer for the given address beside its own")
    func comparison() async throws {
        let result = try await run([
            "resolve", "--lab", "--all-providers", "--client-ip", Self.asked, "--type", "v4", "--format", "json",
            "sni-a.lab.test",
        ])
        #expect(result.status == 0, "\(result.output)")
        let comparison = try #require(
            try JSONDecoder().decode([ProviderComparison].self, from: Data(result.output.utf8)).first)
        let rows = Dictionary(uniqueKeysWithValues: comparison.providers.map { ($0.name, $0) })
        for name in ["lab-alicloud", "lab-alicloud-legacy"] {
            let own = try #require(rows[name], "\(rows.keys.sorted())")
            let other = try #require(rows["\(name) for \(Self.asked)"], "\(rows.keys.sorted())")
            #expect(own.clientIP == "127.0.0.1")
            #expect(other.clientIP?.text == Self.asked)
        }
        #expect(rows["lab-tencent for \(Self.asked)"] == nil)
    }

    @Test("--client-ip that is not an address is bad usage")
    func notAnAddress() async throws {
        let result = try await run(["resolve", "--lab", "--client-ip", "example.com", "sni-a.lab.test"])
        #expect(result.status == 2)
        #expect(result.errors.contains("--client-ip takes an IPv4 or IPv6 address"), "\(result.errors)")
    }
}

// Public doors onto the parsers that take bytes from outside (each HTTPDNS answer format, the
// persistent cache file), for the fuzz targets and their corpus replay test; nothing else calls them.
import FoundationEssentials
import FoundationGaps
import WireCiphers

/// Runs one parser over untrusted bytes and throws the result away: a fuzz target only looks
/// for traps, hangs and memory errors.
public enum ParserEntryPoints {
    /// Alibaba Cloud: the single-name JSON answer and the batch (`/resolve`) answer.
    public static func aliCloud(_ body: [UInt8]) {
        _ = try? AliCloudProvider.parseSingle(body, host: "fuzz.lab.test", families: [.v4, .v6], ms: 0)
        _ = try? AliCloudProvider.parseBatch(
            body, hosts: ["fuzz.lab.test", "b.lab.test"], families: [.v4, .v6], ms: 0)
    }

    /// Alibaba Cloud v2 (`/v2/d`): the answer in the clear; the same bytes as the decrypted
    /// payload of a mode 1 (AES-CBC) and mode 2 (AES-GCM) answer, sealed here under the fuzz key
    /// so they reach the parser of what decryption gives; the bytes as sealed `data` that must
    /// fail to open cleanly; and the service-IP (`/ss`) answer.
    public static func aliCloudV2(_ body: [UInt8]) {
        let hosts = ["fuzz.lab.test", "b.lab.test"]
        func parse(_ bytes: [UInt8]) {
            _ = try? aliCloudV2Provider.parse(
                status: 200, body: bytes, date: nil, hosts: hosts, families: [.v4, .v6], ms: 0, server: "fuzz")
        }
        parse(body)
        let key = aliCloudV2Provider.key
        let sealedCBC = try? WireCipher.aesCBC(encrypt: true, key: key, iv: [UInt8](repeating: 1, count: 16), body)
        let sealedGCM = try? WireCipher.aesGCM(encrypt: true, key: key, iv: [UInt8](repeating: 2, count: 12), body)
        for (mode, sealed) in [
            (1, sealedCBC.map { [UInt8](repeating: 1, count: 16) + $0 }),
            (2, sealedGCM.map { [UInt8](repeating: 2, count: 12) + $0 }), (1, body), (2, body),
        ] {
            guard let sealed else { continue }
            let answer: JSONValue = [
                "code": "success", "mode": .number(JSONNumber(mode)),
                "data": .string(Data(sealed).base64EncodedString()),
            ]
            parse(answer.encoded())
        }
        let start = AliCloudServiceIPs.Base(url: "https://203.107.1.1", label: "203.107.1.1")
        _ = try? AliCloudServiceIPs.serviceIPs(body, start: start, serviceName: "fuzz.lab.test")
    }

    /// The v2 provider the alicloud target parses with: AES key 00112233...eeff, no transfer ever made.
    private static let aliCloudV2Provider: AliCloudV2Provider = {
        do {
            return try AliCloudV2Provider(
                servers: AliCloudServiceIPs(endpoint: "https://fuzz.lab.test"), account: "139450", secret: nil,
                cipher: .aesCBC, key: "00112233445566778899aabbccddeeff", sdns: [:],
                transport: HTTPDNSTransport(timeout: 1, caFile: nil))
        } catch {
            // Fixed, valid settings: a failure is a bug here, and a fuzz target must not run without its parser.
            preconditionFailure("the fuzz target's v2 provider cannot be built: \(error)")
        }
    }()

    /// Tencent DNSPod D+: the text answer for each family set it is asked with, the whole answer
    /// (one line, or a `name.:` line per name), and the bytes as a sealed answer to open.
    public static func tencent(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        for families: Set<IPFamily> in [[.v4], [.v6], [.v4, .v6]] {
            _ = try? TencentProvider.parse(body, host: "fuzz.lab.test", families: families, ms: 0)
            for hosts in [["fuzz.lab.test"], ["fuzz.lab.test", "b.lab.test"]] {
                _ = try? TencentProvider.parseLines(text, hosts: hosts, families: families, ms: 0, server: nil)
            }
        }
        for algorithm in TencentAlgorithm.allCases {
            _ = try? algorithm.open(text, key: "fuzzkey1")
        }
    }

    /// An RFC 8484 DNS message (DoH wire format, and the replies of `--dns-server`), read by
    /// c-ares for each family with and without the id check, then screened as the provider does.
    public static func dohWire(_ message: [UInt8]) {
        _ = DNSMessage.header(message)
        _ = DNSMessage.questionName(message)
        for family in [IPFamily.v4, .v6] {
            _ = try? DNSMessage.addresses(in: message, host: "fuzz.lab.test.", family: family, id: nil)
            guard let reply = try? DNSMessage.addresses(in: message, host: "fuzz.lab.test", family: family, id: 0)
            else { continue }
            _ = try? ProviderAnswer.screened(
                host: "fuzz.lab.test", rawV4: family == .v4 ? reply.raw : [], rawV6: family == .v6 ? reply.raw : [],
                ttl: FamilyTTL(reply.ttl ?? 60, for: [family]), answered: [family], ms: 0)
        }
    }

    /// DoH JSON (`application/dns-json`), for each family.
    public static func dohJSON(_ body: [UInt8]) {
        _ = try? DoHJSONProvider.parse(body, host: "fuzz.lab.test", family: .v4)
        _ = try? DoHJSONProvider.parse(body, host: "fuzz.lab.test", family: .v6)
    }

    /// Every sentence and note the providers keep from `body`, read as an error answer (HTTP 403)
    /// and as an answer (HTTP 200) of each wire format: what reaches `resolve`, the console and
    /// the exports as the service's words.
    ///
    /// - Returns: the error sentences and the answers' notes.
    public static func serviceWords(_ body: [UInt8]) -> [String] {
        var words: [String] = []
        func keep(_ run: () throws(ResolutionError) -> [String]) {
            do throws(ResolutionError) { words += try run() } catch { words.append(error.description) }
        }
        let code = serviceCode(body)
        words.append(ResolutionError.fromStatus(403, code: code, account: "139450").description)
        words.append(ResolutionError.http(status: 403, code: code).description)
        words.append(preview(body))
        for status in [200, 403] {
            keep { () throws(ResolutionError) in
                let results = try aliCloudV2Provider.parse(
                    status: status, body: body, date: nil, hosts: ["fuzz.lab.test"], families: [.v4, .v6], ms: 0,
                    server: "fuzz")
                return results.values.flatMap { result in
                    switch result {
                    case .success(let answer): answer.notes
                    case .failure(let error): [error.description]
                    }
                }
            }
        }
        keep { () throws(ResolutionError) in
            try AliCloudProvider.parseSingle(body, host: "fuzz.lab.test", families: [.v4], ms: 0).notes
        }
        keep { () throws(ResolutionError) in
            try TencentProvider.parse(body, host: "fuzz.lab.test", families: [.v4], ms: 0).notes
        }
        keep { () throws(ResolutionError) in
            // Its addresses are screened later (junk reaches words only through `.notAnIP`).
            _ = try DoHJSONProvider.parse(body, host: "fuzz.lab.test", family: .v4)
            return []
        }
        return words
    }

    /// The persistent cache file, loaded from `path` after `bytes` are written there, listed with
    /// the times `cache list`, the console and `resolve` compute from each answer, and saved back;
    /// traps when a save loses or changes another provider's answer, readable or not, or writes
    /// over a newer version's file.
    public static func cacheFile(_ bytes: [UInt8], path: String) {
        try? FileManager.default.removeItem(atPath: path + ".bad")
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        _ = CacheFile.load(path, identity: "fuzz", now: now, keepExpired: false)
        let (entries, _) = CacheFile.load(path, identity: "fuzz", now: now, keepExpired: true)
        let before = PersistentCache.entries(at: path)
        for listed in before.entries {
            let entry = listed.entry
            _ = (
                entry.secondsLeft(at: now, rounded: .down), entry.secondsLeft(at: now, rounded: .up), entry.age(at: now)
            )
        }
        let held = Dictionary(entries.map { ($0.family, $0) }, uniquingKeysWith: { first, _ in first })
        _ = ResolverCache.compare(
            held: held, fresh: HTTPDNSAnswer(provider: "fuzz"), families: [.v4, .v6], now: now)
        let reading = CacheFile.read(path)
        guard (try? CacheFile.save(entries, identity: "fuzz", to: path, now: now)) != nil else { return }
        let after = PersistentCache.entries(at: path)
        switch reading {
        case .newer, .unusable:
            precondition(FileManager.default.contents(atPath: path) == Data(bytes), "a file left alone was written")
        case .corrupt:
            precondition(FileManager.default.contents(atPath: path + ".bad") == Data(bytes), "not set aside whole")
        case .current:
            let others = { (entry: PersistentCache.Entry) in entry.provider != "fuzz" }
            precondition(before.entries.filter(others) == after.entries.filter(others), "another's answer changed")
            precondition(
                before.skipped.filter { $0.provider != "fuzz" } == after.skipped.filter { $0.provider != "fuzz" },
                "another's unreadable answer changed")
            precondition(
                before.skipped.filter { $0.provider == "fuzz" }.count
                    == after.skipped.filter { $0.provider == "fuzz" }.count, "an unreadable answer of ours went")
        case .absent, .belongsToNobody:
            break
        }
    }

}

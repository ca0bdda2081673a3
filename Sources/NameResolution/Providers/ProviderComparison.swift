// Every configured provider asked for one name at once, beside the system column (getaddrinfo or
// the DNS server): answers, TTLs, times, client IPs, errors, and which of them agree.
import Dispatch
import FoundationEssentials

/// A provider ready to be compared: its setting, and the built provider or why it could not be built.
public struct ComparedProvider: Sendable {
    public let setting: ProviderSetting
    /// The service's address as the row shows it.
    public let endpoint: String
    public let provider: (any HTTPDNSProvider)?
    /// Why the provider could not be built (a variable not set, an account missing), in words.
    public let setupError: String?
    /// The client address this row asks the answer for (`--client-ip`); nil for this machine's.
    public var clientIP: String? = nil

    /// The row's name: the setting's, and the client address it asks for.
    public var name: String { setting.name + (clientIP.map { " for \($0)" } ?? "") }

    /// Builds each setting's provider over `base`; a setting that cannot be built keeps its
    /// reason, so its row says why instead of the whole comparison failing. With a client
    /// address in `base` (`--client-ip`), each Alibaba provider gets two rows: the answer for
    /// this machine (the client address the service reports) beside the one for that address.
    public static func build(
        _ settings: [ProviderSetting], base: ResolverConfiguration,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [ComparedProvider] {
        var own = base
        own.clientIP = nil
        return settings.flatMap { setting -> [ComparedProvider] in
            let first = build(setting, base: own, environment: environment)
            guard let clientIP = base.clientIP, [.alicloud, .alicloudLegacy].contains(setting.kind) else {
                return [first]
            }
            var asked = build(setting, base: base, environment: environment)
            asked.clientIP = clientIP
            return [first, asked]
        }
    }

    private static func build(
        _ setting: ProviderSetting, base: ResolverConfiguration, environment: [String: String]
    ) -> ComparedProvider {
        do {
            let configuration = try setting.configuration(over: base, environment: environment)
            let endpoint = configuration.effectiveEndpoint ?? "-"
            do {
                return ComparedProvider(
                    setting: setting, endpoint: endpoint, provider: try ProviderFactory.make(configuration),
                    setupError: nil)
            } catch {
                return ComparedProvider(setting: setting, endpoint: endpoint, provider: nil, setupError: "\(error)")
            }
        } catch {
            return ComparedProvider(
                setting: setting, endpoint: setting.endpoint ?? "-", provider: nil, setupError: "\(error)")
        }
    }
}

/// One provider's row of a comparison.
public struct ProviderRow: Sendable, Codable, Equatable {
    public var name: String
    public var kind: ProviderKind
    public var endpoint: String
    public var ipv4: [IPAddress]
    public var ipv6: [IPAddress]
    /// Seconds, per family with addresses; nil when the provider failed.
    public var ttl: FamilyTTL?
    public var ms: Double
    /// The client address the service judged the query by (`cip`), when it said.
    public var clientIP: IPAddress?
    /// Why the provider gave no answer; nil when it answered.
    public var error: ResolutionFailure?
    /// The answer's letter: rows with the same letter gave the same addresses; nil for a failure.
    public var group: String?
    /// How this answer compares with the system column.
    public var vsSystem: Agreement

    public init(
        name: String, kind: ProviderKind, endpoint: String, ipv4: [IPAddress] = [], ipv6: [IPAddress] = [],
        ttl: FamilyTTL? = nil, ms: Double = 0, clientIP: IPAddress? = nil, error: ResolutionFailure? = nil,
        group: String? = nil,
        vsSystem: Agreement = .httpdnsFailed
    ) {
        self.name = name
        self.kind = kind
        self.endpoint = endpoint
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.ttl = ttl
        self.ms = ms
        self.clientIP = clientIP
        self.error = error
        self.group = group
        self.vsSystem = vsSystem
    }

    public var addresses: [IPAddress] { ipv4 + ipv6 }
}

/// Every provider's answer for one name, the system column, and who agrees with whom.
public struct ProviderComparison: Sendable, Codable, Equatable {
    public var host: String
    public var system: SystemAnswer
    /// The system column's letter, shared with the providers that gave the same addresses.
    public var systemGroup: String?
    public var providers: [ProviderRow]

    public init(host: String, system: SystemAnswer, providers: [ProviderRow]) {
        self.host = host
        self.system = system
        self.providers = providers
        systemGroup = nil
        markAgreement()
    }

    /// Gives each distinct answer a letter (A for the answer most providers gave, ties in row
    /// order), and compares each row with the system column.
    mutating func markAgreement() {
        func key(_ ips: [IPAddress]) -> [IPAddress] { Array(Set(ips)).sorted() }
        var order: [[IPAddress]] = []
        var counts: [[IPAddress]: Int] = [:]
        for row in providers where row.error == nil {
            let k = key(row.addresses)
            if counts[k] == nil { order.append(k) }
            counts[k, default: 0] += 1
        }
        let systemKey = system.error == nil ? key(system.ipv4 + system.ipv6) : nil
        if let systemKey, counts[systemKey] == nil { order.append(systemKey) }
        let ranked = order.enumerated().sorted { a, b in
            let ca = counts[a.element] ?? 0
            let cb = counts[b.element] ?? 0
            return ca != cb ? ca > cb : a.offset < b.offset
        }.map(\.element)
        func letter(_ k: [IPAddress]) -> String? {
            guard let index = ranked.firstIndex(of: k) else { return nil }
            return ProviderComparison.letter(index)
        }
        systemGroup = systemKey.flatMap(letter)
        let systemIPs = system.error == nil ? system.ipv4 + system.ipv6 : nil
        for index in providers.indices {
            let row = providers[index]
            providers[index].group = row.error == nil ? letter(key(row.addresses)) : nil
            providers[index].vsSystem = Agreement.between(
                system: systemIPs, httpdns: row.error == nil ? row.addresses : nil)
        }
    }

    /// A, B, ... Z, then A2, B2, ...
    static func letter(_ index: Int) -> String {
        let base = String(UnicodeScalar(UInt8(65 + index % 26)))
        return index < 26 ? base : base + String(index / 26 + 1)
    }

    /// One sentence on who agrees: "all 4 providers and the system column agree (A)",
    /// "3 answers: A from alicloud, doh; B from tencent; the system column gave C".
    public var summary: String {
        let answered = providers.filter { $0.error == nil }
        let failed = providers.count - answered.count
        let failures = failed == 0 ? "" : "; \(failed) failed"
        guard !answered.isEmpty else {
            return providers.isEmpty ? "no providers to compare" : "every provider failed"
        }
        let letters = Set(answered.compactMap(\.group))
        let systemPart: String
        if let systemGroup {
            systemPart = letters.contains(systemGroup) ? "" : "; the system column gave \(systemGroup)"
        } else {
            systemPart = "; the system column failed"
        }
        if letters.count == 1, let only = letters.first {
            let with = systemGroup == only ? " and the system column" : ""
            let count =
                answered.count == 1 ? "the only provider answering" : "all \(answered.count) providers answering"
            return "\(count)\(with) agree (\(only))\(systemPart)\(failures)"
        }
        let groups = letters.sorted().map { letter in
            let names = answered.filter { $0.group == letter }.map(\.name)
            let system = systemGroup == letter ? ", system" : ""
            return "\(letter) from \(names.joined(separator: ", "))\(system)"
        }
        return "\(letters.count) different answers: \(groups.joined(separator: "; "))\(systemPart)\(failures)"
    }

    /// Asks every provider and the system column for `host` at once.
    ///
    /// - Parameters:
    ///   - families: the address families asked for.
    ///   - timeout: for the system column (each provider has its own configured bound).
    public static func run(
        _ host: String, providers: [ComparedProvider], system: SystemResolver, families: Set<IPFamily>,
        timeout: Duration
    ) async -> ProviderComparison {
        let name = ResolverCache.normalized(host)
        async let systemSide = system.resolve(name, families: families, timeout: timeout)
        let rows = await withTaskGroup(of: (Int, ProviderRow).self) { group in
            for (index, compared) in providers.enumerated() {
                group.addTask { (index, await ask(compared, name: name, families: families)) }
            }
            var rows: [(Int, ProviderRow)] = []
            for await row in group { rows.append(row) }
            return rows.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return ProviderComparison(host: name, system: await systemSide, providers: rows)
    }

    private static func ask(_ compared: ComparedProvider, name: String, families: Set<IPFamily>) async -> ProviderRow {
        var row = ProviderRow(name: compared.name, kind: compared.setting.kind, endpoint: compared.endpoint)
        guard let provider = compared.provider else {
            row.error = .httpdns(.misconfigured(compared.setupError ?? "not configured"))
            return row
        }
        let started = DispatchTime.now()
        do {
            let answer = try await provider.resolve(name, families: families)
            row.ipv4 = answer.ipv4
            row.ipv6 = answer.ipv6
            row.ttl = answer.shownTTL
            row.ms = answer.ms > 0 ? answer.ms : elapsed(since: started)
            row.clientIP = answer.clientIP
        } catch {
            row.error = .httpdns(error)
            row.ms = elapsed(since: started)
        }
        return row
    }

    private static func elapsed(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000
    }
}

// The `/probe` endpoint's modules in the configuration file (`[modules.NAME]`): read here with the
// rest of the file as written, judged by the agent, which knows scenarios, methods and statuses.
import FoundationEssentials
import NameResolution
import TOMLKit

/// One `[modules.NAME]` table, as written.
public struct ProbeModuleFileSettings: Sendable, Equatable {
    /// The name `/probe?module=` gives.
    public var name: String
    /// The name of a `[[providers]]` entry to resolve through; nil keeps the agent's provider.
    public var provider: String?
    /// Scenario names; empty keeps the agent's.
    public var scenarios: [String] = []
    /// GET or HEAD; nil keeps the agent's.
    public var method: String?
    /// `Name: value` lines.
    public var headers: [String] = []
    /// Seconds a probe may take at most.
    public var timeout: Double?
    /// `HOST[:PORT]` of a DNS server the system column asks instead of the agent's.
    public var dnsServer: String?
    /// Direct attempts to every HTTPDNS address.
    public var allIPs: Bool?
    /// Statuses that count as success: `200`, `"200-299"`; empty keeps the verdict's judgement.
    public var expectStatus: [String] = []
    /// Fail a probe whose last response did not come over TLS.
    public var failIfNotSSL: Bool?

    public init(name: String) { self.name = name }

    /// The keys a module table may have.
    static let known = [
        "provider", "scenarios", "method", "headers", "timeout", "dns_server", "all_ips", "expect_status",
        "fail_if_not_ssl",
    ]

    /// Reads `[modules.NAME]` tables from the file's top table.
    ///
    /// - Returns: the modules, by name order, and warnings for unknown keys.
    /// - Throws: `ConfigurationError` for a value of the wrong type.
    static func parse(
        _ table: TOMLTable, path: String
    ) throws(ConfigurationError) -> (modules: [ProbeModuleFileSettings], warnings: [String]) {
        guard let raw = table["modules"] else { return ([], []) }
        guard let modules = raw.table else {
            throw .wrongType(path, "modules", "tables ([modules.NAME] then scenarios = [\"direct-sni\"])")
        }
        var warnings: [String] = []
        var list: [ProbeModuleFileSettings] = []
        for name in modules.keys.sorted() {
            let key = "modules.\(name)"
            guard let entry = modules[name]?.table else {
                throw .wrongType(path, key, "a table ([\(key)] then scenarios = [\"direct-sni\"])")
            }
            for setting in entry.keys where !known.contains(setting) {
                warnings.append(
                    "\(path): unknown setting '\(setting)' in [\(key)] ignored (known: \(known.joined(separator: ", ")))"
                )
            }
            func string(_ setting: String, _ example: String) throws(ConfigurationError) -> String? {
                guard let value = entry[setting] else { return nil }
                guard let text = value.string else { throw .wrongType(path, "\(key).\(setting)", example) }
                return text
            }
            func strings(_ setting: String, _ example: String) throws(ConfigurationError) -> [String] {
                guard let value = entry[setting] else { return [] }
                if let single = value.string { return [single] }
                if let number = value.int { return [String(number)] }
                let items = value.array.map { Array($0) } ?? []
                let texts = items.compactMap { $0.string ?? $0.int.map(String.init) }
                guard value.array != nil, texts.count == items.count else {
                    throw .wrongType(path, "\(key).\(setting)", "an array (\(setting) = \(example))")
                }
                return texts
            }
            func flag(_ setting: String) throws(ConfigurationError) -> Bool? {
                guard let value = entry[setting] else { return nil }
                guard let bool = value.bool else { throw .wrongType(path, "\(key).\(setting)", "true or false") }
                return bool
            }
            var module = ProbeModuleFileSettings(name: name)
            module.provider = try string("provider", "the name of a [[providers]] entry (provider = \"aliyun\")")
            module.scenarios = try strings("scenarios", "[\"direct-sni\", \"direct-https\"]")
            module.method = try string("method", "a string (method = \"HEAD\")")
            module.headers = try strings("headers", "[\"X-Probe: prometheus\"]")
            if let value = entry["timeout"] {
                guard let seconds = value.double ?? value.int.map(Double.init) else {
                    throw .wrongType(path, "\(key).timeout", "a number of seconds (timeout = 5)")
                }
                module.timeout = seconds
            }
            module.dnsServer = try string("dns_server", "a string (dns_server = \"223.5.5.5\")")
            module.allIPs = try flag("all_ips")
            module.expectStatus = try strings("expect_status", "[200, \"300-399\"]")
            module.failIfNotSSL = try flag("fail_if_not_ssl")
            list.append(module)
        }
        return (list, warnings)
    }
}

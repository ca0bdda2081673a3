// `/probe` modules: named settings a request picks with `module=` (scenarios, method, headers,
// timeout, all IPs, which statuses count, TLS required), checked once at start.
import ConfigurationSources
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe

/// The settings a `/probe` request's `module=` names.
public struct ProbeModule: Sendable, Equatable {
    /// The name `module=` gives.
    public var name: String
    /// Scenarios, method and headers over the agent's (the same settings a target line has).
    public var settings = TargetSettings()
    /// The `[[providers]]` entry to resolve through; nil keeps the agent's provider.
    public var provider: String?
    /// The DNS server the system column asks; nil keeps the agent's.
    public var dnsServer: DNSServer?
    /// The longest a probe may take; nil keeps `--probe-timeout`.
    public var timeout: Double?
    /// Direct attempts to every HTTPDNS address; nil keeps the agent's.
    public var allIPs: Bool?
    /// Statuses that count as success (`200`, `200-299`); empty keeps the verdict's judgement.
    public var expectStatus: [ClosedRange<Int>] = []
    /// The probe fails when its last response did not come over TLS.
    public var failIfNotSSL = false

    /// The module a request without `module=` gets: the agent's own settings.
    public static let standard = ProbeModule(name: "default")

    public init(name: String) { self.name = name }

    /// The configuration's `[modules.NAME]` as modules, each checked, with `default` among them
    /// (the agent's settings, unless the file names a `default` of its own).
    ///
    /// - Parameters:
    ///   - file: the tables as written.
    ///   - providers: the names of the configuration's `[[providers]]`, which `provider` may name.
    /// - Throws: `TargetSettingError` naming the module and what is wrong with it.
    public static func configured(
        _ file: [ProbeModuleFileSettings], providers: [String] = []
    ) throws(TargetSettingError) -> [String: ProbeModule] {
        var modules = [standard.name: standard]
        for entry in file {
            do {
                modules[entry.name] = try module(entry, providers: providers)
            } catch {
                throw TargetSettingError("the configuration's [modules.\(entry.name)]: \(error.reason)")
            }
        }
        return modules
    }

    private static func module(
        _ entry: ProbeModuleFileSettings, providers: [String]
    ) throws(TargetSettingError) -> ProbeModule {
        var module = ProbeModule(name: entry.name)
        if let provider = entry.provider {
            guard providers.contains(provider) else {
                throw TargetSettingError(
                    "provider \(provider) is not the name of a [[providers]] entry"
                        + (providers.isEmpty
                            ? " (there are none)" : " (there are \(providers.joined(separator: ", ")))"))
            }
            module.provider = provider
        }
        if let text = entry.dnsServer {
            do {
                module.dnsServer = try DNSServer.parse(text, setting: "dns_server")
            } catch {
                throw TargetSettingError(error.description)
            }
        }
        if !entry.scenarios.isEmpty {
            module.settings.scenarios = try TargetSettings.scenario(entry.scenarios.joined(separator: ","))
        }
        if let method = entry.method { module.settings.method = try TargetSettings.method(method) }
        for line in entry.headers { module.settings.headers.append(try HeaderField(parsing: line)) }
        try AgentTarget.check(module.settings)
        if let timeout = entry.timeout {
            guard timeout > 0, timeout <= 300 else {
                throw TargetSettingError("timeout must be more than 0 and at most 300 seconds, not \(timeout)")
            }
            module.timeout = timeout
        }
        module.allIPs = entry.allIPs
        module.expectStatus = try entry.expectStatus.map(statusRange)
        module.failIfNotSSL = entry.failIfNotSSL ?? false
        return module
    }

    /// `200` or `200-299`.
    private static func statusRange(_ text: String) throws(TargetSettingError) -> ClosedRange<Int> {
        let bounds = text.split(separator: "-", omittingEmptySubsequences: false).map {
            Int($0.trimmingWhitespace())
        }
        guard (1...2).contains(bounds.count), let low = bounds.first ?? nil, let high = bounds.last ?? nil,
            (100...599).contains(low), (low...599).contains(high)
        else {
            throw TargetSettingError("expect_status takes statuses and ranges (200, \"200-299\"), not '\(text)'")
        }
        return low...high
    }

    /// `probe_success` for a report under this module: the technique the verdict recommends works
    /// (with no direct scenario asked, system-dns got a 2xx or 3xx); with `expect_status`, the
    /// attempt blackbox's names describe got one of those statuses; with `fail_if_not_ssl`, its
    /// last response came over TLS.
    public func succeeded(_ report: URLReport) -> Bool {
        let primary = ProbeExposition.primaryAttempt(report)
        if failIfNotSSL, primary?.hops.last?.url.lowercased().hasPrefix("https:") != true { return false }
        if !expectStatus.isEmpty {
            guard let status = primary?.status else { return false }
            return expectStatus.contains { $0.contains(status) }
        }
        if let recommended = report.verdict.recommended { return report.verdict.works.contains(recommended) }
        guard !report.attempts.contains(where: \.scenario.isDirect) else { return false }
        return report.attempts.contains { $0.scenario == .systemDNS && $0.outcome == .ok }
    }
}

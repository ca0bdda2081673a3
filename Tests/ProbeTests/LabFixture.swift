// What the probe tests share: a lab per test (free ports, shut down after), a resolver that
// answers from the lab's zone the way HTTPDNS would, and an engine trusting the lab's CA.
import Foundation
import Lab
import NameResolution
import Probe
import TestSupport

/// A resolver seam answering from the lab's zone: HTTPDNS knows every lab name, system DNS
/// knows none (names under lab.test never resolve on a real machine either).
func zoneResolver(
    _ lab: Lab, system: [String: [String]] = [:], httpdns override: [String: [String]] = [:]
)
    -> HostResolver
{
    let zone = lab.endpoints.zone
    return { host in
        let record = zone.first { $0.name == host }
        // This stands where a provider parses what a service sent: only addresses go on.
        let systemAnswer =
            system[host].map(addresses).map {
                SystemAnswer(ipv4: $0.filter { $0.family == .v4 }, ipv6: $0.filter { $0.family == .v6 })
            }
            ?? SystemAnswer(error: "no such name")
        let ips = addresses(override[host] ?? ((record?.ipv4 ?? []) + (record?.ipv6 ?? [])))
        let httpdns =
            ips.isEmpty
            ? HTTPDNSAnswer(provider: "lab-zone", error: "no such name")
            : HTTPDNSAnswer(
                provider: "lab-zone", ipv4: ips.filter { $0.family == .v4 }, ipv6: ips.filter { $0.family == .v6 },
                ttl: FamilyTTL(
                    v4: ips.contains { $0.family == .v4 } ? record?.ttl ?? 60 : nil,
                    v6: ips.contains { $0.family == .v6 } ? record?.ttl(true) ?? 60 : nil))
        return HostResolution(host: host, system: systemAnswer, httpdns: httpdns)
    }
}

/// The strings that are addresses, parsed as a provider parses a service's answer.
private func addresses(_ texts: [String]) -> [IPAddress] { texts.compactMap(IPAddress.init) }

extension Lab {
    /// The lab URL of a name, with a path (`url("sni-a.lab.test", "/echo")`).
    func url(_ name: String, _ path: String = "/") -> String {
        let base = endpoints.hosts[name] ?? "https://\(name)/"
        return base + path.drop { $0 == "/" }
    }

    /// An engine probing the lab, trusting its CA, with a short timeout (the slow origin
    /// takes 3 s; the tests only need to see it time out).
    func engine(_ options: ProbeOptions = ProbeOptions(), system: [String: [String]] = [:]) -> ProbeEngine {
        var options = options
        options.caFile = endpoints.ca
        return ProbeEngine(resolve: zoneResolver(self, system: system), options: options, environment: [:])
    }

    /// Requests the named origin answered.
    func requests(to origin: String) -> [LabOriginRequest] { originRequests().filter { $0.origin == origin } }
}

extension URLReport {
    /// The attempts of one scenario.
    func attempts(_ scenario: Scenario) -> [Attempt] { attempts.filter { $0.scenario == scenario } }

    func outcome(_ scenario: Scenario) -> Outcome? { attempts(scenario).first?.outcome }
}

/// What `probe` writes to a file for these reports: the bytes of the writer the binary uses
/// (`ReportWriter`), in `format`, redacted unless told otherwise.
func exported(_ reports: [URLReport], _ format: ReportWriter.Format, redact: Bool = true) throws -> Data {
    let scratch = try ScratchDirectory("export")
    defer { scratch.remove() }
    let path = scratch.file("out")
    let writer = try ReportWriter(format, path: path, redact: redact)
    for report in reports { writer.record(report) }
    writer.finish()
    return try Data(contentsOf: URL(fileURLWithPath: path))
}

/// `exported` as text.
func exportedText(_ reports: [URLReport], _ format: ReportWriter.Format, redact: Bool = true) throws -> String {
    String(decoding: try exported(reports, format, redact: redact), as: UTF8.self)
}

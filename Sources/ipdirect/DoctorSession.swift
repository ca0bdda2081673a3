// What a doctor run reads, built from the session a command already has: the provider as
// configured (or the lab's), the lab's facts with `--lab`. The console's `D` and `doctor` share it.
import Doctor
import Foundation
import Lab
import NameResolution

extension ResolverSession {
    /// The doctor's context for this session's provider; with the lab, the name its service
    /// certificate carries, a canary it answers and the facts the checks need about it.
    ///
    /// - Parameters:
    ///   - hosts: the names given with `--host`; the first is the canary.
    ///   - budget: the whole run's bound.
    func doctorContext(hosts: [String] = [], budget: Duration) -> DoctorContext {
        var resolver = configuration.resolver
        // The name the lab's service certificate carries, checked on every service address as
        // the SDKs check 203.107.1.1's.
        if lab != nil { resolver.serviceName = LabEndpoints.serviceName }
        return DoctorContext(
            resolver: resolver, hosts: hosts, canaryName: hosts.first ?? (lab != nil ? Self.labCanary : nil),
            budget: budget, lab: lab.map(Self.labFacts))
    }

    /// What the checks know of a lab started with `--lab`, since the doctor does not import the lab.
    static func labFacts(_ lab: Lab) -> DoctorLabFacts {
        let e = lab.endpoints
        let ports = (URLComponents(string: e.httpdns)?.port ?? 0, URLComponents(string: e.httpdnsTLS)?.port ?? 0)
        return DoctorLabFacts(
            dnsServer: e.dns, servicePorts: ports, connectivityCheckURL: e.connectivityCheckURL, sites: e.hosts)
    }

    /// The name the checks resolve end to end against the lab when no --host is given: one every
    /// form of its HTTPDNS service answers with an address.
    static let labCanary = "plain.lab.test"
}

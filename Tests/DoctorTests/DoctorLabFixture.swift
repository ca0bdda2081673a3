// What the doctor's tests share: a lab started with the network faults a test names, and the
// context `ipdirect doctor --lab` would build for it (alicloud over TLS, signed, the lab's DNS
// server standing in for the system resolver).

import ConfigurationSources
import Doctor
import Foundation
import Lab
import LabFaults
import NameResolution

enum DoctorLab {
    /// Runs `body` with a lab faking `faults` and a doctor context pointed at it.
    ///
    /// The bound is generous (each step gets a fifth, up to the provider's 10 s): no verdict
    /// depends on it, and on a loaded machine or under `make asan` a step of 2 or 3 s to the lab
    /// ran out. Tests of what happens at the bound give their own.
    static func run<T>(
        faults: Set<NetworkFault> = [], hosts: [String] = [], budget: Duration = .seconds(30),
        _ body: (DoctorContext, Lab) async throws -> T
    ) async throws -> T {
        var options = LabOptions()
        options.networkFaults = faults
        return try await withLab(options) { lab in
            try await body(context(lab, hosts: hosts, budget: budget), lab)
        }
    }

    /// The name the doctor's checks resolve on the lab when no `--host` is given.
    static let canary = "plain.lab.test"

    /// The context for a running lab.
    static func context(_ lab: Lab, hosts: [String] = [], budget: Duration = .seconds(30)) -> DoctorContext {
        let e = lab.endpoints
        var resolver = ResolverConfiguration(
            provider: .alicloud, endpoint: e.httpdnsTLS, account: e.account, secret: e.secret, caFile: e.ca,
            timeout: 10)
        resolver.dnsServer = try? DNSServer.parse(e.dns)
        // The name the lab's service certificate carries, checked on every service address as
        // the SDKs check 203.107.1.1's.
        resolver.serviceName = LabEndpoints.serviceName
        let ports = (URLComponents(string: e.httpdns)?.port ?? 0, URLComponents(string: e.httpdnsTLS)?.port ?? 0)
        // The canary is a name the lab serves: the public default is unknown to it.
        return DoctorContext(
            resolver: resolver, hosts: hosts, canaryName: hosts.first ?? canary, environment: [:], budget: budget,
            lab: DoctorLabFacts(
                dnsServer: e.dns, servicePorts: ports, connectivityCheckURL: e.connectivityCheckURL, sites: e.hosts))
    }
}

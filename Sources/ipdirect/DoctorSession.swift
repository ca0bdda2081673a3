// What a doctor run reads, built from the session a command already has: the provider as
// configured (or the lab's), the lab's facts with `--lab`. The console's `D` and `doctor` share it.
import Doctor
import Foundation
import NameResolution

extension ResolverSession {
    /// The doctor's context for this session's provider, with the lab's facts when it runs one.
    ///
    /// - Parameters:
    ///   - hosts: the names given with `--host`.
    ///   - budget: the whole run's bound.
    func doctorContext(hosts: [String] = [], budget: Duration = .seconds(15)) -> DoctorContext {
        DoctorContext(
            resolver: configuration.resolver, hosts: hosts, budget: budget,
            lab: lab.map { DoctorLabFacts(dnsServer: $0.endpoints.dns) })
    }
}

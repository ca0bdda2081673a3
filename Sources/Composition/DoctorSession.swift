// What a doctor run reads, built from the session a front end already has: the provider as
// configured (or the lab's), the lab's facts with the lab. The console's doctor view and `doctor` share it.
import ConfigurationSources
import Doctor
import FoundationEssentials
import Lab
import NameResolution
import Probe

extension ResolverSession {
    /// A doctor run's bound when none is given, in seconds: `doctor` and the console's doctor view.
    public static let defaultDoctorWithin = 15.0

    /// The doctor's context for this session's provider; with the lab, the name its service
    /// certificate carries, a canary it answers and the facts the checks need about it.
    ///
    /// - Parameters:
    ///   - hosts: the names to probe besides; the first is the canary unless `canary` is given.
    ///   - budget: the whole run's bound.
    ///   - canary: the name the checks resolve end to end, when the user named one.
    ///   - connectivityURLs: the plain-HTTP URLs the interception check asks, when named.
    ///   - voice: whose words the findings name settings in (the console's: `.console`).
    public func doctorContext(
        hosts: [String] = [], budget: Duration, canary: String? = nil, connectivityURLs: [String] = [],
        voice: SettingVoice = .commandLine
    ) -> DoctorContext {
        var resolver = configuration.resolver
        // The name the lab's service certificate carries, checked on every service address as
        // the SDKs check 203.107.1.1's.
        if lab != nil { resolver.serviceName = LabEndpoints.serviceName }
        var context = DoctorContext(
            resolver: resolver, hosts: hosts, canaryName: hosts.first ?? (lab != nil ? Self.labCanary : nil),
            budget: budget, lab: lab.map(Self.labFacts), voice: voice)
        // A flag over the configuration file, the file over the defaults.
        if let canary = canary ?? resolver.canary { context.canaryName = canary }
        context.connectivityCheckURLs = connectivityURLs.isEmpty ? resolver.connectivityURLs : connectivityURLs
        return context
    }

    /// Runs every doctor check against this session's provider.
    ///
    /// - Parameters:
    ///   - hosts: the names to probe besides; the first is the canary unless `canary` is given.
    ///   - budget: the whole run's bound.
    ///   - canary: the name the checks resolve end to end, when the user named one.
    ///   - connectivityURLs: the plain-HTTP URLs the interception check asks, when named.
    ///   - voice: whose words the findings name settings in (the console's: `.console`).
    ///   - progress: told each finding as its check ends.
    public func runDoctor(
        hosts: [String] = [], budget: Duration, canary: String? = nil, connectivityURLs: [String] = [],
        voice: SettingVoice = .commandLine, progress: @escaping @Sendable (DoctorFinding) -> Void
    ) async -> DoctorReport {
        let context = doctorContext(
            hosts: hosts, budget: budget, canary: canary, connectivityURLs: connectivityURLs, voice: voice)
        return await DoctorRunner().run(context, provider: providerDescription, progress: progress)
    }

    /// Probes `hosts` every IP-direct way through the session's resolver (and with the lab, its
    /// CA and ports); each request bounded by a third of the run.
    public func probeDoctorHosts(_ hosts: [String], within budget: Duration) async -> [DoctorHostProbe] {
        guard !hosts.isEmpty else { return [] }
        var options = ProbeOptions()
        options.timeout = min(ProbeOptions.defaultTimeout, budget / 3)
        if let labCA = lab?.endpoints.ca { options.caFile = labCA }
        options.secretNames = RedactionNames(adding: configuration.redact)
        // Leave the last moments of the bound for writing the report.
        return await DoctorHostProbes.run(
            hosts, target: labTarget, engine: probeEngine(options),
            within: max(budget / 2, budget - .milliseconds(200)))
    }

    /// What the checks know of a lab, since the doctor does not import the lab.
    public static func labFacts(_ lab: Lab) -> DoctorLabFacts {
        let e = lab.endpoints
        let ports = (URLComponents(string: e.httpdns)?.port ?? 0, URLComponents(string: e.httpdnsTLS)?.port ?? 0)
        return DoctorLabFacts(
            dnsServer: e.dns, servicePorts: ports, connectivityCheckURL: e.connectivityCheckURL, sites: e.hosts)
    }

    /// The name the checks resolve end to end against the lab when no host is given: one every
    /// form of its HTTPDNS service answers with an address.
    public static let labCanary = "plain.lab.test"
}

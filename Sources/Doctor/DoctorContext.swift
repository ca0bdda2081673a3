// What every doctor check may read: the provider's settings, the names to look at, the process
// environment and the files that describe this machine's network, and the run's time bound.

import FoundationEssentials
import NameResolution

/// The inputs of one doctor run, the same for every check.
public struct DoctorContext: Sendable {
    /// The provider as configured (flags, environment, file); its secret is never printed.
    public var resolver: ResolverConfiguration
    /// The names given with `--host`, probed at the end of the run.
    public var hosts: [String]
    /// A name the account check resolves end to end: the first `--host`, else one the provider
    /// is known to answer.
    public var canaryName: String
    /// The process environment (proxy variables); a value so tests can give their own.
    public var environment: [String: String]
    /// Where the system resolver's settings are read from.
    public var resolvConfPath: String
    /// The whole run's bound: a check still running then is reported as not finished.
    public var budget: Duration
    /// What the lab knows about itself, when the run is against the lab.
    public var lab: DoctorLabFacts?
    /// The plain-HTTP URLs the interception check asks (`--connectivity-url`), each expected to
    /// answer 204 with an empty body; empty: the lab's, else the public ones.
    public var connectivityCheckURLs: [String] = []

    /// The connectivity check URLs the interception check asks: as configured, else the lab's,
    /// else Android's and Xiaomi's.
    public var connectivityURLs: [String] {
        if !connectivityCheckURLs.isEmpty { return connectivityCheckURLs }
        return lab?.connectivityCheckURL.map { [$0] } ?? InterceptionCheck.publicCheckURLs
    }

    /// Whose words the findings name settings in: the command line's flags (`doctor`, and its
    /// JSON report, as it has always written them) or the console's keys.
    public var voice: SettingVoice

    public init(
        resolver: ResolverConfiguration, hosts: [String] = [], canaryName: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        resolvConfPath: String = "/etc/resolv.conf", budget: Duration = .seconds(15), lab: DoctorLabFacts? = nil,
        voice: SettingVoice = .commandLine
    ) {
        self.resolver = resolver
        self.hosts = hosts
        self.canaryName = canaryName ?? hosts.first ?? DoctorContext.defaultCanary
        self.environment = environment
        self.resolvConfPath = resolvConfPath
        self.budget = budget
        self.lab = lab
        self.voice = voice
    }

    /// The lab's DNS server when the run is against the lab, standing in for the system resolver
    /// (as `--lab` does everywhere); nil for the system resolver itself.
    public var labResolver: DNSServer? { lab.flatMap { try? DNSServer.parse($0.dnsServer) } }

    /// A name every public HTTPDNS service answers.
    public static let defaultCanary = "www.aliyun.com"
}

/// Facts about the embedded lab that a real network gives by other means (which body a known
/// URL must answer, which addresses its service listens on). Plain values: the doctor does not
/// import the lab.
public struct DoctorLabFacts: Sendable {
    /// The lab's DNS server, standing in for the system resolver as in `--lab` elsewhere.
    public var dnsServer: String
    /// The ports every lab service address listens on for HTTP and HTTPS, standing in for the
    /// real service IPs' 80 and 443; nil off the lab.
    public var servicePorts: (http: Int, https: Int)?
    /// The lab's connectivity check URL (answers 204 with an empty body), standing in for
    /// `connectivitycheck.gstatic.com/generate_204`; a captive portal answers it otherwise.
    public var connectivityCheckURL: String?
    /// The lab's sites by name, each a base URL with the port it listens on
    /// (`https://hijacked.lab.test:43121/`), standing in for a real site's 443.
    public var sites: [String: String]

    public init(
        dnsServer: String, servicePorts: (http: Int, https: Int)? = nil, connectivityCheckURL: String? = nil,
        sites: [String: String] = [:]
    ) {
        self.dnsServer = dnsServer
        self.servicePorts = servicePorts
        self.connectivityCheckURL = connectivityCheckURL
        self.sites = sites
    }
}

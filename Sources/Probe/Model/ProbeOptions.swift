// What a probe is asked to do (scenarios, method, body, headers, limits) and the events it
// reports while it runs, for the console and the batch command alike.
import FoundationEssentials
import NameResolution

/// How to probe: the same for every URL of a run.
public struct ProbeOptions: Sendable {
    /// The scenarios to try, in the order they are reported.
    public var scenarios: [Scenario]
    /// Direct attempts to every HTTPDNS IP, not only the first.
    public var allIPs: Bool
    /// The request method; a body, when there is one, goes with it whatever it is.
    public var method: RequestMethod
    public var body: [UInt8]?
    /// The file the body was read from (`--data @FILE`), so a reproduce command names it.
    public var bodyFile: String?
    /// Extra request headers; `Host` is always the engine's.
    public var headers: [HeaderField]
    /// A PEM file of CAs trusted for every request, besides the system's.
    public var caFile: String?
    /// Whether `caFile` adds to the system's CAs (`--cacert`) rather than replacing them (the
    /// lab's CA). Reproduce commands name `caFile` itself either way.
    public var caFileAddsToSystem = false
    /// Per-request timeout.
    public var timeout: Duration
    /// The per-request timeout when none is given (`--probe-timeout`'s default; reproduce
    /// commands built without options use it too).
    public static let defaultTimeout: Duration = .seconds(10)
    /// How many requests may run at once.
    public var concurrency: Int
    /// Hide `Authorization`, `Cookie`, `Set-Cookie` and other secrets in traces and exports.
    public var redact: Bool
    public var maxRedirects: Int
    /// Send the credential headers (`Authorization`, `Cookie`, API keys) to every host a redirect
    /// names, as curl's `--location-trusted`; by default they are dropped once scheme, host or
    /// port change.
    public var locationTrusted = false
    /// Follow a redirect from https to plain http; by default it is refused.
    public var allowDowngrade = false
    /// What a redirect to a link-local address (169.254.0.0/16, fe80::/10) or a cloud metadata
    /// address does, judged by the address the hop would connect to, not only a literal in
    /// `Location`. The CLI follows and notes it; the agent refuses.
    public var linkLocal = LinkLocalPolicy.note
    /// The names whose values are hidden besides the built-in words (`redact` in the
    /// configuration file); applies when `redact` is on.
    public var secretNames = RedactionNames.builtIn
    /// Whether each attempt carries the shell command that repeats it (`Attempt.reproduce`), for
    /// the console, `probe` and the exports. The agent's `/probe` shows none, in its answer or
    /// its trace, and turns it off: the command was built for every request (issue 34).
    public var reproduceCommands = true
    /// Whether each hop keeps curl's verbose log and the request head as libcurl sent it
    /// (`Hop.log`, `Hop.requestHeaders`), for the console, `probe`, the exports and the agent's
    /// traces. The agent's `/probe` shows them only with `debug=true` and turns it off otherwise:
    /// libcurl formatted every line of every handshake for an answer that reads none (issue 34).
    public var curlLog = true

    public init(
        scenarios: [Scenario] = Scenario.allCases, allIPs: Bool = false, method: RequestMethod = .get,
        body: [UInt8]? = nil, headers: [HeaderField] = [], caFile: String? = nil, timeout: Duration = defaultTimeout,
        concurrency: Int = 16, redact: Bool = true, maxRedirects: Int = 10
    ) {
        self.scenarios = scenarios
        self.allIPs = allIPs
        self.method = method
        self.body = body
        self.headers = headers
        self.caFile = caFile
        self.timeout = timeout
        self.concurrency = concurrency
        self.redact = redact
        self.maxRedirects = maxRedirects
    }
}

/// What the engine does with a redirect to a link-local or cloud metadata address
/// (`IPAddress.isLinkLocalOrMetadata`), where a server could steer a prober into the host's
/// instance credentials.
public enum LinkLocalPolicy: String, Sendable {
    /// Follow it, and say so in the hop's trace and the verdict (a person at a terminal probing
    /// their own servers may mean it).
    case note
    /// Do not connect: the hop ends `redirect-refused` with a sentence (the agent, and any probe
    /// made for someone else).
    case refuse
}

/// An attempt about to start: enough for a front end to show a row before results arrive.
public struct PlannedAttempt: Sendable, Equatable {
    public var id: UUID
    public var url: String
    public var scenario: Scenario
    public var ip: IPAddress?
    public var ipSource: IPSource?

    public init(id: UUID, url: String, scenario: Scenario, ip: IPAddress?, ipSource: IPSource?) {
        self.id = id
        self.url = url
        self.scenario = scenario
        self.ip = ip
        self.ipSource = ipSource
    }
}

/// What a running probe reports, in order: resolution, attempts, the report.
///
/// Indirect: an event is otherwise as large as its largest payload (a URLReport, some 600 bytes),
/// and the async frames that make events keep room for it (a `/probe` under load has a hundred).
public indirect enum ProbeEvent: Sendable {
    case resolved(HostResolution)
    case attemptStarted(PlannedAttempt)
    case attemptFinished(Attempt)
    case finished(URLReport)
    /// The URL cannot be probed; nothing else follows.
    case rejected(ProbeURLError)
}

/// How the engine learns the addresses of a name: system DNS and HTTPDNS side by side.
/// The command passes `ResolverCache.resolve`; tests may answer from the lab's zone.
public typealias HostResolver = @Sendable (String) async -> HostResolution

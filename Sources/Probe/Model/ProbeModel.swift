// The values a probe produces: scenarios, outcomes, attempts with their traces, verdicts and
// the per-URL report. Field names follow the JSON contract of `ipdirect probe --format json`.
import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution

/// The ways of making one request; the raw values are used everywhere (flags, JSON, HAR).
public enum Scenario: String, Sendable, Codable, CaseIterable, Hashable {
    /// The original URL through system DNS: the baseline an app has today.
    case systemDNS = "system-dns"
    /// http: the IP in the URL, the original name in `Host`.
    case directHTTP = "direct-http"
    /// https: the IP in the URL, no SNI, the certificate checked against the original name.
    case directHTTPS = "direct-https"
    /// https: the original URL, the name pinned to the IP below TLS (`CURLOPT_RESOLVE`).
    case directSNI = "direct-sni"

    /// Whether this is one of the IP-direct techniques (not the baseline).
    public var isDirect: Bool { self != .systemDNS }
}

/// What became of one attempt, in terms a person understands.
public enum Outcome: String, Sendable, Codable, Hashable {
    case ok
    /// The exchange worked but the status is 4xx/5xx.
    case httpStatus = "http-status"
    case dnsFailed = "dns-failed"
    case connectFailed = "connect-failed"
    case timeout
    case tlsFailed = "tls-failed"
    case certNameMismatch = "cert-name-mismatch"
    case certExpired = "cert-expired"
    case certUntrusted = "cert-untrusted"
    case certSelfSigned = "cert-self-signed"
    /// The server answered with more than libcurl reads (a header line past 100 KB): connected,
    /// but the answer was not read.
    case responseTooLarge = "response-too-large"
    /// Redirects went on past the limit, or came back to a request already made.
    case tooManyRedirects = "too-many-redirects"
    /// A redirect ipdirect would not follow: https to plain http, unless asked.
    case redirectRefused = "redirect-refused"
    case skipped

    /// The request reached the server and got an answer (any status).
    public var reachedServer: Bool { self == .ok || self == .httpStatus }
}

/// Where the IP of an attempt or a hop came from.
public enum IPSource: String, Sendable, Codable, Hashable {
    case httpdns
    case system
    /// The IP was cached (fresh or stale) from an earlier HTTPDNS answer.
    case cache
}

/// curl's cumulative timings for one exchange, in milliseconds from the start; nil where a
/// phase did not happen (no TLS on http, no DNS for an IP URL, ...).
public struct PhaseTimings: Sendable, Codable, Equatable, Hashable {
    public var nameLookup: Double?
    public var connect: Double?
    public var tlsDone: Double?
    public var preTransfer: Double?
    public var firstByte: Double?
    public var total: Double

    public init(
        nameLookup: Double? = nil, connect: Double? = nil, tlsDone: Double? = nil, preTransfer: Double? = nil,
        firstByte: Double? = nil, total: Double = 0
    ) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsDone = tlsDone
        self.preTransfer = preTransfer
        self.firstByte = firstByte
        self.total = total
    }
}

/// One certificate of the chain the server presented.
public struct CertificateSummary: Sendable, Codable, Equatable, Hashable {
    public var subject: String
    /// DNS names and IP addresses of the subject alternative name extension.
    public var subjectAlternativeNames: [String]
    public var issuer: String
    public var notBefore: Date
    public var notAfter: Date
    /// SHA-256 of the DER, lowercase hex with colons.
    public var sha256: String

    public init(
        subject: String, subjectAlternativeNames: [String], issuer: String, notBefore: Date, notAfter: Date,
        sha256: String
    ) {
        self.subject = subject
        self.subjectAlternativeNames = subjectAlternativeNames
        self.issuer = issuer
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.sha256 = sha256
    }
}

/// The TLS side of an attempt: what was sent, what was checked, what came back.
public struct CertificateReport: Sendable, Codable, Equatable, Hashable {
    /// The chain as presented, leaf first.
    public var chain: [CertificateSummary]
    /// OpenSSL's verify result: 0 when the chain and name verified.
    public var verifyResult: Int
    /// OpenSSL's words for it ("ok", "hostname mismatch", "certificate has expired", ...).
    public var verifyMessage: String

    public init(chain: [CertificateSummary], verifyResult: Int, verifyMessage: String) {
        self.chain = chain
        self.verifyResult = verifyResult
        self.verifyMessage = verifyMessage
    }
}

/// An HTTP header as sent or received (the transport's type, named here for Probe's users).
public typealias HeaderField = CurlTransport.HeaderField

/// One line of curl's own verbose log (the transport's type, named here for Probe's users).
public typealias CurlLogLine = CurlTransport.CurlLogLine

/// One HTTP exchange: the first request of an attempt or one redirect hop.
public struct Hop: Sendable, Codable, Equatable, Hashable {
    /// The URL as requested (with the IP for direct-http/direct-https).
    public var url: String
    /// The URL as the user would write it (the original name).
    public var originalURL: String
    public var method: String
    public var requestHeaders: [HeaderField]
    public var requestBodyBytes: Int
    public var remoteIP: IPAddress?
    public var remotePort: Int?
    /// Which resolver gave this hop's address: `httpdns`, `system`, `cache`.
    public var resolver: IPSource
    public var sni: String?
    public var checkedName: String?
    public var outcome: Outcome
    public var status: Int?
    public var httpVersion: String?
    public var responseHeaders: [HeaderField]
    public var responseBytes: Int
    /// The first bytes of the body, as text (capped).
    public var bodyPreview: String
    public var timings: PhaseTimings
    public var certificate: CertificateReport?
    /// The TLS version the handshake agreed, as OpenSSL names it (`TLSv1.3`); nil unless one
    /// completed. Read from OpenSSL, so a hop made without curl's log has it too; not exported,
    /// as the log that is exported says it ("SSL connection using TLSv1.3 / ...").
    public var tlsVersion: String?
    /// Why the hop failed; written as its sentence.
    public var error: AttemptFailure?
    public var log: [CurlLogLine]
    /// When the hop started.
    public var startedAt: Date
    /// Set when the hop was not made because ipdirect itself ran out of this (the outcome is
    /// `skipped`): the target is not to blame.
    public var shortage: ResourceShortage?

    /// Every field but `shortage` (the agent's own state, said in `error`) and `tlsVersion` is
    /// exported.
    private enum CodingKeys: String, CodingKey {
        case url, originalURL, method, requestHeaders, requestBodyBytes, remoteIP, remotePort, resolver, sni,
            checkedName, outcome, status, httpVersion, responseHeaders, responseBytes, bodyPreview, timings,
            certificate, error, log, startedAt
    }

    public init(
        url: String, originalURL: String, method: String, requestHeaders: [HeaderField] = [],
        requestBodyBytes: Int = 0, remoteIP: IPAddress? = nil, remotePort: Int? = nil, resolver: IPSource,
        sni: String? = nil, checkedName: String? = nil, outcome: Outcome, status: Int? = nil,
        httpVersion: String? = nil, responseHeaders: [HeaderField] = [], responseBytes: Int = 0,
        bodyPreview: String = "", timings: PhaseTimings = PhaseTimings(), certificate: CertificateReport? = nil,
        tlsVersion: String? = nil, error: AttemptFailure? = nil, log: [CurlLogLine] = [], startedAt: Date = Date(),
        shortage: ResourceShortage? = nil
    ) {
        self.url = url
        self.originalURL = originalURL
        self.method = method
        self.requestHeaders = requestHeaders
        self.requestBodyBytes = requestBodyBytes
        self.remoteIP = remoteIP
        self.remotePort = remotePort
        self.resolver = resolver
        self.sni = sni
        self.checkedName = checkedName
        self.outcome = outcome
        self.status = status
        self.httpVersion = httpVersion
        self.responseHeaders = responseHeaders
        self.responseBytes = responseBytes
        self.bodyPreview = bodyPreview
        self.timings = timings
        self.certificate = certificate
        self.tlsVersion = tlsVersion
        self.error = error
        self.log = log
        self.startedAt = startedAt
        self.shortage = shortage
    }
}

/// One scenario tried against one IP, with every hop it made.
public struct Attempt: Sendable, Codable, Equatable, Hashable, Identifiable {
    public var id: UUID
    public var url: String
    public var scenario: Scenario
    /// The IP connected to; nil for a skipped attempt or when system DNS failed.
    public var ip: IPAddress?
    public var ipSource: IPSource?
    /// The name sent in SNI; nil when none was sent.
    public var sni: String?
    /// The name the certificate was checked against; nil for http.
    public var checkedName: String?
    /// The outcome of the last hop (or the reason for skipping).
    public var outcome: Outcome
    public var status: Int?
    public var httpVersion: String?
    public var timings: PhaseTimings
    public var certificate: CertificateReport?
    /// Why the attempt failed or was not made (the last hop's failure); written as its sentence.
    public var error: AttemptFailure?
    public var hops: [Hop]
    /// The shell command that repeats this attempt with stock tools (`ReproduceCommand`);
    /// nil when the attempt was not made (skipped, or no address to try).
    public var reproduce: String?
    /// Set when the attempt could not be made because ipdirect itself ran out of this (the
    /// outcome is `skipped`): it says nothing about the target.
    public var shortage: ResourceShortage?

    /// Every field but `shortage` (the agent's own state, said in `error`) is exported.
    private enum CodingKeys: String, CodingKey {
        case id, url, scenario, ip, ipSource, sni, checkedName, outcome, status, httpVersion, timings, certificate,
            error, hops, reproduce
    }

    public init(
        id: UUID = .random(), url: String, scenario: Scenario, ip: IPAddress? = nil, ipSource: IPSource? = nil,
        sni: String? = nil, checkedName: String? = nil, outcome: Outcome, status: Int? = nil,
        httpVersion: String? = nil, timings: PhaseTimings = PhaseTimings(), certificate: CertificateReport? = nil,
        error: AttemptFailure? = nil, hops: [Hop] = [], reproduce: String? = nil,
        shortage: ResourceShortage? = nil
    ) {
        self.id = id
        self.url = url
        self.scenario = scenario
        self.ip = ip
        self.ipSource = ipSource
        self.sni = sni
        self.checkedName = checkedName
        self.outcome = outcome
        self.status = status
        self.httpVersion = httpVersion
        self.timings = timings
        self.certificate = certificate
        self.error = error
        self.hops = hops
        self.reproduce = reproduce
        self.shortage = shortage
    }
}

/// What a probe concludes for one URL.
public struct Verdict: Sendable, Codable, Equatable, Hashable {
    /// The direct scenarios that worked against at least one IP.
    public var works: [Scenario]
    /// The technique to use, nil when none works.
    public var recommended: Scenario?
    /// One or two sentences: "use direct-sni: without SNI the server presents its default certificate".
    public var summary: String
    /// Proxy in the environment, IPv6 only, redirect to another host, DNS disagreement, ...
    public var notes: [String]

    public init(works: [Scenario], recommended: Scenario?, summary: String, notes: [String]) {
        self.works = works
        self.recommended = recommended
        self.summary = summary
        self.notes = notes
    }
}

/// Everything a probe found for one URL.
public struct URLReport: Sendable, Codable, Equatable {
    public var url: String
    public var host: String
    public var resolution: HostResolution
    public var attempts: [Attempt]
    public var verdict: Verdict
    /// The host's addresses ranked by TCP connect time (`probe --rank`); nil when not asked.
    public var ranking: IPRanking?
    /// Where the URL stood in the batch's input, from 0 (results come as they finish); nil
    /// outside a batch.
    public var index: Int?

    public init(
        url: String, host: String, resolution: HostResolution, attempts: [Attempt], verdict: Verdict,
        ranking: IPRanking? = nil
    ) {
        self.url = url
        self.host = host
        self.resolution = resolution
        self.attempts = attempts
        self.verdict = verdict
        self.ranking = ranking
    }
}

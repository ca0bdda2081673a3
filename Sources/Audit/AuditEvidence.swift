// What the lab's ledger saw during a run, filtered by name: the HTTPDNS queries, the DNS server's
// queries, the TLS handshakes and the requests each trap's verdict rests on, and their lines.
import FoundationEssentials
import FoundationGaps
import Lab

/// The ledger of one run, as the traps read it.
public struct AuditEvidence: Sendable {
    public var queries: [LabHTTPDNSQuery]
    public var dnsQueries: [LabDNSQueryRecord]
    public var handshakes: [LabTLSHandshake]
    public var requests: [LabOriginRequest]
    /// The recording proxy's CONNECTs.
    public var tunnels: [LabProxyTunnel]
    /// Each name's URL.
    public var urls: [String: String]
    /// When the run started (evidence times are shown relative to it).
    public var startedAt: Date

    public init(
        queries: [LabHTTPDNSQuery], dnsQueries: [LabDNSQueryRecord], handshakes: [LabTLSHandshake],
        requests: [LabOriginRequest], tunnels: [LabProxyTunnel] = [], urls: [String: String], startedAt: Date
    ) {
        self.tunnels = tunnels
        self.queries = queries
        self.dnsQueries = dnsQueries
        self.handshakes = handshakes
        self.requests = requests
        self.urls = urls
        self.startedAt = startedAt
    }

    /// The HTTPDNS queries that asked for `name` (a batch counts for each of its names).
    func queries(for name: String) -> [LabHTTPDNSQuery] {
        queries.filter { query in
            query.host.lowercased().split(separator: ",").contains { $0 == Substring(name) }
        }
    }

    /// The DNS server's queries for `name`.
    func dnsQueries(for name: String) -> [LabDNSQueryRecord] {
        dnsQueries.filter { record in
            var asked = record.name.lowercased()
            if asked.hasSuffix(".") { asked.removeLast() }
            return asked == name
        }
    }

    /// The handshakes at `name`'s origin.
    func handshakes(at name: String) -> [LabTLSHandshake] { handshakes.filter { $0.origin == name } }

    /// The requests `name`'s origin answered.
    func requests(at name: String) -> [LabOriginRequest] { requests.filter { $0.origin == name } }

    /// The proxy's CONNECTs to `port` (each trap's origin has a port of its own).
    func tunnels(to port: Int) -> [LabProxyTunnel] {
        tunnels.filter { $0.port == port }
    }

    /// The port of `name`'s URL.
    func port(of name: String) -> Int? { urls[name].flatMap { URLComponents(string: $0)?.port } }

    /// `+1.234s`: a time relative to the run's start.
    func at(_ time: Date) -> String { String(cFormat: "+%.3fs", time.timeIntervalSince(startedAt)) }

    /// One line per query, request or handshake, as a report's evidence shows them.
    func line(_ query: LabHTTPDNSQuery) -> String {
        "\(at(query.time)) HTTPDNS \(query.format) \(query.host) → \(query.status)"
    }

    func line(_ query: LabDNSQueryRecord) -> String {
        "\(at(query.time)) system DNS (the lab's DNS server) \(query.type == 28 ? "AAAA" : "A") \(query.name) over \(query.transport)"
    }

    func line(_ handshake: LabTLSHandshake) -> String {
        let outcome =
            switch (handshake.completed, handshake.failure) {
            case (true, nil): "handshake completed"
            case (true, let failure?): "server side completed, then \(failure)"
            case (false, let failure): "not completed: \(failure ?? "closed")"
            }
        return
            "\(at(handshake.time)) TLS SNI \(handshake.sni ?? "none") at \(handshake.localAddress ?? "?"): \(outcome)"
    }

    func line(_ tunnel: LabProxyTunnel) -> String {
        "\(at(tunnel.time)) proxy CONNECT \(tunnel.target) → \(tunnel.status)"
            + (tunnel.fromPort.map { " (tunnel from port \($0))" } ?? "")
    }

    func line(_ request: LabOriginRequest) -> String {
        var text =
            "\(at(request.time)) \(request.method) \(request.path) Host \(request.host.isEmpty ? "(none)" : request.host) SNI \(request.sni ?? "none")"
        if let address = request.localAddress { text += " at \(address)" }
        if request.bodyLength > 0 {
            text += " body \(request.bodyLength) bytes"
            if let digest = request.bodySHA256 { text += " sha256 \(digest.prefix(16))…" }
        }
        if let cookie = request.cookie { text += " Cookie \(cookie)" }
        if let port = request.remotePort { text += " from port \(port)" }
        return text + " → \(request.status)"
    }

    /// Every record about `names`, oldest first, as lines.
    func lines(about names: [String]) -> [String] {
        var timed: [(Date, String)] = []
        for name in names {
            timed += queries(for: name).map { ($0.time, line($0)) }
            timed += dnsQueries(for: name).map { ($0.time, line($0)) }
            timed += handshakes(at: name).map { ($0.time, line($0)) }
            timed += requests(at: name).map { ($0.time, line($0)) }
            if let port = port(of: name) { timed += tunnels(to: port).map { ($0.time, line($0)) } }
        }
        return timed.sorted { $0.0 < $1.0 }.map(\.1)
    }
}

extension AuditTrap {
    /// A finding of this trap with its URLs, what it exercises and the evidence about `names`.
    func finding(
        _ status: AuditStatus, _ seen: String, advice: String? = nil, evidence: AuditEvidence, names: [String],
        urls: [String]? = nil
    ) -> AuditFinding {
        AuditFinding(
            trap: id, status: status, urls: urls ?? names.prefix(1).compactMap { evidence.urls[$0] },
            exercises: exercises, seen: seen, advice: status == .pass ? nil : advice,
            evidence: evidence.lines(about: names))
    }

    /// The not-exercised finding: what the app is to do.
    func notExercised(_ evidence: AuditEvidence, names: [String]) -> AuditFinding {
        finding(
            .notExercised, "The app never reached this trap.", advice: asks, evidence: evidence, names: names)
    }
}

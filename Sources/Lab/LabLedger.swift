// What a running lab remembers: the HTTPDNS fault in force, the latest queries and origin
// requests it answered, and the hosts' URLs (the redirect origin points at sni-b's port).
import FoundationEssentials
import FoundationGaps

/// The lab's shared, lock-protected record; servers on any event loop write to it.
final class LabLedger: Sendable {
    /// Everything the ledger holds, behind one lock.
    private struct State {
        var fault: HTTPDNSFault
        var queries: [LabHTTPDNSQuery] = []
        var originRequests: [LabOriginRequest] = []
        var originRequestsServed = 0
        var dnsQueries: [LabDNSQueryRecord] = []
        var hosts: [String: String] = [:]
        var downServiceIP: String?
        var handshakes: [LabTLSHandshake] = []
        var failingNames: [String: Double] = [:]
        var tunnels: [LabProxyTunnel] = []
    }

    private let state: Locked<State>
    /// Records of each kind kept, newest last: a console left on the lab for days, or a
    /// 100,000-URL batch against it, must not grow without bound.
    let keep: Int

    /// - Parameter keep: how many records of each kind to keep (tests use a few).
    init(fault: HTTPDNSFault, keep: Int = 10_000) {
        state = Locked(State(fault: fault))
        self.keep = keep
    }

    var fault: HTTPDNSFault {
        get { state.withLock { $0.fault } }
        set { state.withLock { $0.fault = newValue } }
    }

    var hosts: [String: String] {
        get { state.withLock { $0.hosts } }
        set { state.withLock { $0.hosts = newValue } }
    }

    /// The service IP that answers 503 (nil: both answer).
    var downServiceIP: String? {
        get { state.withLock { $0.downServiceIP } }
        set { state.withLock { $0.downServiceIP = newValue } }
    }

    var queries: [LabHTTPDNSQuery] { state.withLock { $0.queries } }
    var originRequests: [LabOriginRequest] { state.withLock { $0.originRequests } }

    /// How many requests the origins answered in all (the kept list holds the latest).
    var originRequestsServed: Int { state.withLock { $0.originRequestsServed } }

    func record(_ query: LabHTTPDNSQuery) { state.withLock { keepLatest(query, in: &$0.queries) } }
    func record(_ request: LabOriginRequest) {
        state.withLock {
            $0.originRequestsServed += 1
            keepLatest(request, in: &$0.originRequests)
        }
    }
    var handshakes: [LabTLSHandshake] { state.withLock { $0.handshakes } }
    func record(_ handshake: LabTLSHandshake) { state.withLock { keepLatest(handshake, in: &$0.handshakes) } }

    /// The names HTTPDNS fails for until their origin is reached (`LabExtraName.failsHTTPDNS`).
    /// Each with the seconds its failing answers are held (0: at once).
    var failingNames: [String: Double] {
        get { state.withLock { $0.failingNames } }
        set { state.withLock { $0.failingNames = newValue } }
    }

    /// How long HTTPDNS holds its failing answer for `name` now; nil when it does not fail.
    func failureDelay(_ name: String) -> Double? {
        state.withLock { $0.failingNames.isEmpty ? nil : $0.failingNames[name.lowercased()] }
    }

    /// HTTPDNS answers for `name` again.
    func heal(_ name: String) { state.withLock { _ = $0.failingNames.removeValue(forKey: name) } }

    /// The recording proxy's CONNECTs.
    var tunnels: [LabProxyTunnel] { state.withLock { $0.tunnels } }
    func record(_ tunnel: LabProxyTunnel) { state.withLock { keepLatest(tunnel, in: &$0.tunnels) } }

    var dnsQueries: [LabDNSQueryRecord] { state.withLock { $0.dnsQueries } }
    func recordDNS(_ query: LabDNSQueryRecord) { state.withLock { keepLatest(query, in: &$0.dnsQueries) } }

    /// Appends, dropping the oldest once a quarter more than `keep` has gathered (so the
    /// cost of dropping is spread over many appends).
    private func keepLatest<Record>(_ record: Record, in list: inout [Record]) {
        list.append(record)
        if list.count > keep + keep / 4 { list.removeFirst(list.count - keep) }
    }
}

// What a running lab remembers: the HTTPDNS fault in force, the latest queries and origin
// requests it answered, and the hosts' URLs (the redirect origin points at sni-b's port).
import Foundation

/// The lab's shared, lock-protected record; servers on any event loop write to it.
final class LabLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var _fault: HTTPDNSFault
    /// Records of each kind kept, newest last: a console left on the lab for days, or a
    /// 100,000-URL batch against it, must not grow without bound.
    let keep: Int
    private var _queries: [LabHTTPDNSQuery] = []
    private var _originRequests: [LabOriginRequest] = []
    private var _originRequestsServed = 0
    private var _dnsQueries: [LabDNSQueryRecord] = []
    private var _hosts: [String: String] = [:]
    private var _downServiceIP: String?
    private var _handshakes: [LabTLSHandshake] = []
    private var _failingNames: [String: Double] = [:]
    private var _tunnels: [LabProxyTunnel] = []

    /// - Parameter keep: how many records of each kind to keep (tests use a few).
    init(fault: HTTPDNSFault, keep: Int = 10_000) {
        _fault = fault
        self.keep = keep
    }

    var fault: HTTPDNSFault {
        get { lock.withLock { _fault } }
        set { lock.withLock { _fault = newValue } }
    }

    var hosts: [String: String] {
        get { lock.withLock { _hosts } }
        set { lock.withLock { _hosts = newValue } }
    }

    /// The service IP that answers 503 (nil: both answer).
    var downServiceIP: String? {
        get { lock.withLock { _downServiceIP } }
        set { lock.withLock { _downServiceIP = newValue } }
    }

    var queries: [LabHTTPDNSQuery] { lock.withLock { _queries } }
    var originRequests: [LabOriginRequest] { lock.withLock { _originRequests } }

    /// How many requests the origins answered in all (the kept list holds the latest).
    var originRequestsServed: Int { lock.withLock { _originRequestsServed } }

    func record(_ query: LabHTTPDNSQuery) { lock.withLock { keepLatest(query, in: &_queries) } }
    func record(_ request: LabOriginRequest) {
        lock.withLock {
            _originRequestsServed += 1
            keepLatest(request, in: &_originRequests)
        }
    }
    var handshakes: [LabTLSHandshake] { lock.withLock { _handshakes } }
    func record(_ handshake: LabTLSHandshake) { lock.withLock { keepLatest(handshake, in: &_handshakes) } }

    /// The names HTTPDNS fails for until their origin is reached (`LabExtraName.failsHTTPDNS`).
    /// Each with the seconds its failing answers are held (0: at once).
    var failingNames: [String: Double] {
        get { lock.withLock { _failingNames } }
        set { lock.withLock { _failingNames = newValue } }
    }

    /// How long HTTPDNS holds its failing answer for `name` now; nil when it does not fail.
    func failureDelay(_ name: String) -> Double? {
        lock.withLock { _failingNames.isEmpty ? nil : _failingNames[name.lowercased()] }
    }

    /// HTTPDNS answers for `name` again.
    func heal(_ name: String) { lock.withLock { _ = _failingNames.removeValue(forKey: name) } }

    /// The recording proxy's CONNECTs.
    var tunnels: [LabProxyTunnel] { lock.withLock { _tunnels } }
    func record(_ tunnel: LabProxyTunnel) { lock.withLock { keepLatest(tunnel, in: &_tunnels) } }

    var dnsQueries: [LabDNSQueryRecord] { lock.withLock { _dnsQueries } }
    func recordDNS(_ query: LabDNSQueryRecord) { lock.withLock { keepLatest(query, in: &_dnsQueries) } }

    /// Appends, dropping the oldest once a quarter more than `keep` has gathered (so the
    /// cost of dropping is spread over many appends).
    private func keepLatest<Record>(_ record: Record, in list: inout [Record]) {
        list.append(record)
        if list.count > keep + keep / 4 { list.removeFirst(list.count - keep) }
    }
}

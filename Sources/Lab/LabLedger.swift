// What a running lab remembers: the HTTPDNS fault in force, every query and origin request
// it answered, and the hosts' URLs (the redirect origin points at sni-b's port).
import Foundation

/// The lab's shared, lock-protected record; servers on any event loop write to it.
final class LabLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var _fault: HTTPDNSFault
    private var _queries: [LabHTTPDNSQuery] = []
    private var _originRequests: [LabOriginRequest] = []
    private var _dnsQueries: [LabDNSQueryRecord] = []
    private var _hosts: [String: String] = [:]
    private var _downServiceIP: String?

    init(fault: HTTPDNSFault) { _fault = fault }

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

    func record(_ query: LabHTTPDNSQuery) { lock.withLock { _queries.append(query) } }
    func record(_ request: LabOriginRequest) { lock.withLock { _originRequests.append(request) } }
    var dnsQueries: [LabDNSQueryRecord] { lock.withLock { _dnsQueries } }
    func recordDNS(_ query: LabDNSQueryRecord) { lock.withLock { _dnsQueries.append(query) } }
}

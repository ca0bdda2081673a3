// The doctor's service reachability check: every address the provider's HTTPDNS service would be
// asked at, over HTTP and HTTPS, with connect and TLS times, and how each blocked one is blocked.

import FoundationEssentials
import NameResolution

/// Check 3: can this network reach the HTTPDNS service at each of its addresses?
///
/// Pass when every address answers; fail when any is blocked (each SDK request that tries a
/// blocked address first pays its timeout or error before the SDK rotates: the issue's "one of
/// two addresses refusing" is a failure), naming the ones that answer as the way out; fail too
/// when none answers, or when TLS to the service is intercepted.
struct ServiceReachabilityCheck: DoctorCheck {
    let id = DoctorCheckID.serviceReachability

    func run(_ context: DoctorContext) async -> DoctorFinding {
        let list: ServiceAddressList
        switch await ServiceAddresses.find(context) {
        case .failure(let skip):
            guard let advice = skip.unreachable else {
                return DoctorFinding(check: id, status: .skipped, seen: skip.reason)
            }
            return DoctorFinding(check: id, status: .fail, seen: skip.reason, advice: advice)
        case .success(let found): list = found
        }
        // Every address over every scheme at once: each exchange is bounded on its own.
        let results = await withTaskGroup(of: (Int, Int, ServiceExchange).self) { group in
            for (a, address) in list.addresses.enumerated() {
                for (t, attempt) in address.tries.enumerated() {
                    group.addTask {
                        let url = attempt.url + (attempt.resolve.isEmpty ? list.path : "")
                        let exchange = await ServiceExchange.send(
                            url, checkName: attempt.checkName, resolve: attempt.resolve, context: context)
                        return (a, t, exchange)
                    }
                }
            }
            var all: [(Int, Int, ServiceExchange)] = []
            for await result in group { all.append(result) }
            return all.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        }
        let reports = list.addresses.enumerated().map { index, address in
            AddressReport(address: address, exchanges: results.filter { $0.0 == index }.map(\.2))
        }
        var trace = list.exchanges.flatMap(\.trace) + list.notes
        for report in reports {
            trace.append(DoctorTraceLine(.note, "\(report.address.label) (\(report.address.role.rawValue))"))
            trace += report.exchanges.flatMap(\.trace)
        }
        let reproduce = reports.flatMap { $0.exchanges.map(\.reproduce) }
        let (status, seen, advice) = Self.verdict(reports)
        return DoctorFinding(check: id, status: status, seen: seen, advice: advice, trace: trace, reproduce: reproduce)
    }

    /// One address and what each of its schemes gave.
    struct AddressReport {
        var address: ServiceAddress
        var exchanges: [ServiceExchange]

        var blocked: [ServiceExchange] { exchanges.filter { $0.block != nil } }
        var answered: Bool { blocked.isEmpty }

        /// "127.0.0.2 refused the connection over HTTP and HTTPS".
        var blockedSentence: String {
            var byHow: [(ServiceBlock, [String])] = []
            for exchange in blocked {
                guard let block = exchange.block else { continue }
                let scheme = exchange.url.hasPrefix("https") ? "HTTPS" : "HTTP"
                if let index = byHow.firstIndex(where: { $0.0 == block }) {
                    byHow[index].1.append(scheme)
                } else {
                    byHow.append((block, [scheme]))
                }
            }
            let parts = byHow.map { "\($0.0.sentence) over \($0.1.joined(separator: " and "))" }
            return "\(address.label) " + parts.joined(separator: ", and ")
        }

        /// "127.0.0.1 (connect 0.3 ms, TLS 4.0 ms)".
        var workingSentence: String {
            let times = exchanges.compactMap { $0.timings.isEmpty ? nil : $0.timings }.last ?? ""
            return times.isEmpty ? address.label : "\(address.label) (\(times))"
        }
    }

    /// The status and sentences for what every address gave.
    static func verdict(_ reports: [AddressReport]) -> (DoctorStatus, String, String?) {
        let working = reports.filter(\.answered)
        let blocked = reports.filter { !$0.answered }
        let intercepted = reports.flatMap(\.exchanges).compactMap { exchange -> (String, String)? in
            guard case .intercepted(let issuer, _) = exchange.block else { return nil }
            return (exchange.target, issuer)
        }
        let count =
            reports.count == 1 ? "the service's one address answers" : "all \(reports.count) service addresses answer"
        if let (target, issuer) = intercepted.first {
            let others = intercepted.count > 1 ? " (and \(intercepted.count - 1) more)" : ""
            return (
                .fail,
                "TLS to the service is intercepted: \(target)\(others) answered with a certificate issued by \(issuer), "
                    + "not by a CA this machine trusts.",
                "Something on this network (a proxy, security software, the carrier) inspects TLS: use another network "
                    + "or turn the inspection off for the HTTPDNS service, since the SDKs refuse this certificate."
            )
        }
        if blocked.isEmpty {
            let schemes = Set(reports.flatMap { $0.exchanges.map { $0.url.hasPrefix("https") ? "HTTPS" : "HTTP" } })
            let over = schemes.sorted().joined(separator: " and ")
            let answered = working.map(\.workingSentence).joined(separator: "; ")
            return (.pass, "\(count.prefix(1).uppercased() + count.dropFirst()) over \(over): \(answered).", nil)
        }
        let blockedText = blocked.map(\.blockedSentence).joined(separator: "; ")
        if working.isEmpty {
            return (
                .fail, "No service address answers: \(blockedText).",
                "This network blocks the HTTPDNS service: try another network, or ask its operator to allow the "
                    + "service's addresses; meanwhile the SDKs fall back to the system resolver."
            )
        }
        let ways = working.map(\.address.label).joined(separator: ", ")
        return (
            .fail, "\(blockedText); \(working.map(\.workingSentence).joined(separator: "; ")) answers.",
            "The region's other service addresses (\(ways)) work: pin the SDK's start IPs to them (start_ips) until "
                + "the network's operator unblocks the others, since every request tried on a blocked one waits first."
        )
    }
}

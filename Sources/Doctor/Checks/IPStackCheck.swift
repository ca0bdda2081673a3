// The doctor's IP stack check: this machine's addresses and default routes per family, NAT64 found
// the RFC 7050 way, and what the SDKs' stack detection decides and so which query type they send.

import CurlTransport
import FoundationEssentials
import NameResolution

/// Warns where HTTPDNS's IPv4 answers cannot be reached as they are: an IPv6-only network, or a
/// NAT64 (HTTPDNS bypasses DNS64, so nobody synthesizes the IPv6 address for the app).
struct IPStackCheck: DoctorCheck {
    let id = DoctorCheckID.ipStack

    func run(_ context: DoctorContext) async -> DoctorFinding {
        var trace: [DoctorTraceLine] = []
        let global = InterfaceAddress.all().filter(\.isGlobal)
        let routes = DefaultRoute.all()
        for family in [IPFamily.v4, .v6] {
            let name = family == .v4 ? "IPv4" : "IPv6"
            let mine = global.filter { $0.address.family == family }
            let addresses = mine.map { "\($0.address) (\($0.interface))" }.joined(separator: ", ")
            trace.append(.init(.seen, "\(name) addresses: " + (addresses.isEmpty ? "none" : addresses)))
            let routed = routes.filter { $0.family == family }.map(\.sentence).joined(separator: ", ")
            trace.append(.init(.seen, "\(name) default route: " + (routed.isEmpty ? "none" : routed)))
        }
        let hasV4 = routes.contains { $0.family == .v4 } && global.contains { $0.address.family == .v4 }
        let hasV6 = routes.contains { $0.family == .v6 } && global.contains { $0.address.family == .v6 }
        let stack = hasV4 ? (hasV6 ? "dual-stack" : "IPv4-only") : (hasV6 ? "IPv6-only" : "without a default route")

        let sdk = SDKStackDetection.detect()
        trace.append(
            .init(
                .sent,
                "UDP connect to \(SDKStackDetection.probeV4):80 and [\(SDKStackDetection.probeV6)]:80, nothing sent, "
                    + "as the SDKs detect the stack"))
        let asks = sdk.asksAAAA ? "A and AAAA (q=4,6)" : "only A (q=4)"
        trace.append(.init(.seen, "the SDKs would detect \(sdk.rawValue) and ask HTTPDNS for \(asks)"))

        let nat64 = await discoverNAT64(context, trace: &trace)
        var reproduce = ["ip -4 route show default", "ip -6 route show default"]
        reproduce.append(nat64.dig)

        let ipv6Only = hasV6 && !hasV4
        guard nat64.prefix != nil || (ipv6Only && !sdk.asksAAAA) else {
            if !hasV4 && !hasV6 && context.lab == nil {
                return DoctorFinding(
                    check: id, status: .fail,
                    seen:
                        "This machine has no default route with an address (IPv4 or IPv6), so nothing beyond it is reachable.",
                    advice: "Connect to a network (check `ip route`), then run the doctor again.", trace: trace,
                    reproduce: reproduce)
            }
            let seen =
                "This machine is \(stack); \(nat64.clause); the SDKs would detect \(sdk.rawValue) and ask HTTPDNS "
                + "for \(asks)."
            return DoctorFinding(check: id, status: .pass, seen: seen, trace: trace, reproduce: reproduce)
        }

        guard let prefix = nat64.prefix else {
            // IPv6-only without NAT64, and the SDKs ask for A alone: nothing they get can be reached.
            return DoctorFinding(
                check: id, status: .warn,
                seen: "This machine is IPv6-only with no NAT64, and the SDKs would detect \(sdk.rawValue) and ask "
                    + "HTTPDNS for only A, whose addresses cannot be reached from here.",
                advice: "Ask HTTPDNS for AAAA as well (the SDK's query type both, q=4,6), so the answer holds "
                    + "addresses this network reaches.",
                trace: trace, reproduce: reproduce)
        }
        let example = await synthesizedExample(context, prefix: prefix, trace: &trace)
        let seen =
            "NAT64 found: \(NAT64Prefix.discoveryName) has AAAA \(nat64.answer), so the prefix is \(prefix); this "
            + "machine is \(stack) and the SDKs would ask HTTPDNS for \(asks), but HTTPDNS bypasses DNS64, so an "
            + "answer with only IPv4 is reachable only as its synthesized address (\(example))."
        let advice =
            "Synthesize IPv6 addresses from HTTPDNS's IPv4 answers with the prefix \(prefix) (\(example)), as "
            + "getaddrinfo does for an IPv4 literal on iOS, or ask HTTPDNS for AAAA (q=4,6) and prefer those."
        return DoctorFinding(check: id, status: .warn, seen: seen, advice: advice, trace: trace, reproduce: reproduce)
    }

    /// What RFC 7050 discovery found: the AAAA answer of `ipv4only.arpa` and the prefix in it.
    private struct Discovery {
        var prefix: NAT64Prefix?
        /// The AAAA addresses, comma-separated.
        var answer: String
        /// The dig command that asks the same.
        var dig: String
        /// Why there is no answer to read, when the resolver gave none at all (a timeout, a
        /// server failure) rather than saying the name has no AAAA.
        var unanswered: String? = nil

        /// The clause a passing finding says about NAT64.
        var clause: String {
            guard let unanswered else { return "no NAT64 (\(NAT64Prefix.discoveryName) has no AAAA)" }
            return "NAT64 not known (\(NAT64Prefix.discoveryName) got no answer: \(unanswered))"
        }
    }

    /// Asks the system resolver (with the lab, the lab's DNS server in its place) for the AAAA
    /// records of `ipv4only.arpa`, within one step (`context.systemResolve` waits `stepTimeout`).
    private func discoverNAT64(_ context: DoctorContext, trace: inout [DoctorTraceLine]) async -> Discovery {
        let server = context.labResolver
        if let server {
            trace.append(
                .init(
                    .sent,
                    "AAAA \(NAT64Prefix.discoveryName) to the lab's DNS server \(server), standing in for the "
                        + "system resolver (RFC 7050)"))
        } else {
            trace.append(.init(.sent, "AAAA \(NAT64Prefix.discoveryName) through the system resolver (RFC 7050)"))
        }
        let answer = await context.systemResolve(NAT64Prefix.discoveryName, families: [.v6])
        let dig =
            server.map { "dig @\($0.address) -p \($0.port) AAAA \(NAT64Prefix.discoveryName)" }
            ?? "dig AAAA \(NAT64Prefix.discoveryName)"
        if answer.ipv6.isEmpty {
            let why = answer.error.map { "\($0)" } ?? "no address"
            trace.append(.init(.seen, "no AAAA for \(NAT64Prefix.discoveryName): \(why)"))
            let unanswered = Self.saysNoAAAA(answer.error) ? nil : why
            return Discovery(prefix: nil, answer: "", dig: dig, unanswered: unanswered)
        }
        let listed = answer.ipv6.map(\.text).joined(separator: ", ")
        trace.append(.init(.seen, "AAAA \(NAT64Prefix.discoveryName): \(listed)"))
        let prefix = NAT64Prefix.derive(from: answer.ipv6)
        trace.append(
            .init(
                .note,
                prefix.map { "the well-known 192.0.0.170/171 sit inside: NAT64 prefix \($0)" }
                    ?? "no well-known address inside: not a DNS64 synthesis"))
        return Discovery(prefix: prefix, answer: listed, dig: dig)
    }

    /// Whether a lookup's failure says the name has no AAAA (NXDOMAIN, NODATA), as opposed to
    /// no answer at all.
    private static func saysNoAAAA(_ failure: ResolutionFailure?) -> Bool {
        switch failure {
        case nil: return true
        case .systemDNS(.noSuchName)?, .systemDNS(.noAddressOfFamily)?, .systemDNS(.noAddress)?: return true
        case .dnsServer(_, .noSuchName)?, .dnsServer(_, .noData)?: return true
        default: return false
        }
    }

    /// The canary's IPv4 answer from HTTPDNS inside the prefix (`plain.lab.test's 127.0.0.1 is
    /// 64:ff9b::7f00:1`); the well-known address's when the service gives none in time.
    private func synthesizedExample(
        _ context: DoctorContext, prefix: NAT64Prefix, trace: inout [DoctorTraceLine]
    ) async -> String {
        let timeout = context.stepTimeout
        let canary = context.canaryName
        let resolver = context.boundedResolver
        trace.append(.init(.sent, "HTTPDNS A \(canary), for an address to synthesize"))
        let departures = TransferDepartures()
        let answered = await Deadline.first(within: timeout) { () -> Result<ProviderAnswer, ResolutionError> in
            await TransferDepartures.$current.withValue(departures) {
                do throws(ResolutionError) {
                    return .success(try await ProviderFactory.make(resolver).resolve(canary, families: [.v4]))
                } catch {
                    return .failure(error)
                }
            }
        }
        if case .success(let answer)? = answered, let v4 = answer.ipv4.first, let v6 = prefix.synthesize(v4) {
            trace.append(.init(.seen, "HTTPDNS: \(canary) A \(answer.ipv4.map(\.text).joined(separator: ", "))"))
            return "\(canary)'s \(v4) is \(v6)"
        }
        switch answered {
        case .failure(let error)?: trace.append(.init(.seen, "HTTPDNS: \(canary): \(error)"))
        case .success?: trace.append(.init(.seen, "HTTPDNS: \(canary) has no A record"))
        case nil:
            // A query that never left (or left late) says so; one the service let time out, as before.
            let unanswered = ResolutionError.unanswered(within: timeout, departures.reading)
            if case .timeout = unanswered {
                let seconds = ResolutionError.format(timeout.inSeconds)
                trace.append(.init(.seen, "HTTPDNS: no answer for \(canary) within \(seconds) s"))
            } else {
                trace.append(.init(.seen, "HTTPDNS: \(canary): \(unanswered)"))
            }
        }
        let wellKnown: IPAddress = "192.0.0.170"
        return "\(wellKnown) is " + (prefix.synthesize(wellKnown).map(\.text) ?? "?")
    }
}

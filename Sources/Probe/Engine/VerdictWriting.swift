// Writes the verdict for one URL: which direct techniques worked, the one to use and why, how
// system DNS and HTTPDNS compared, and the notes a person needs (proxy, IPv6, redirects).
import FoundationEssentials
import NameResolution

enum VerdictWriting {
    static func verdict(
        url: ProbeURL, resolution: HostResolution, attempts: [Attempt], proxyVariables: [String]
    )
        -> Verdict
    {
        let baselineStatus = attempts.first { $0.scenario == .systemDNS && $0.outcome.reachedServer }?.status
        func worked(_ attempt: Attempt) -> Bool {
            if attempt.outcome == .ok { return true }
            // A 4xx/5xx counts when system DNS gets the same answer: the technique works,
            // the path does not. 421 means the server did not take the name we sent.
            return attempt.outcome == .httpStatus && attempt.status != 421 && attempt.status == baselineStatus
        }
        let order: [Scenario] = [.directSNI, .directHTTPS, .directHTTP]
        let works = order.filter { scenario in attempts.contains { $0.scenario == scenario && worked($0) } }
        let recommended = works.first
        let failures = attempts.filter { $0.scenario.isDirect && !worked($0) && $0.outcome != .skipped }

        var summary: String
        if let recommended {
            let why: String
            switch recommended {
            case .directSNI:
                if works.contains(.directHTTPS) {
                    why =
                        "direct-https works too, but direct-sni keeps SNI, the certificate check and cookies on the real name"
                } else if let failed = failures.first(where: { $0.scenario == .directHTTPS }) {
                    if failed.outcome == .certNameMismatch {
                        let presented = failed.certificate?.chain.first.map {
                            CertificateReading.names(of: $0).joined(separator: ", ")
                        }
                        why =
                            "without SNI the server presents its default certificate"
                            + (presented.map { " (for \($0))" } ?? "")
                    } else {
                        why =
                            "direct-https fails (\(failed.outcome.rawValue): \(failed.error?.sentence ?? "no detail"))"
                    }
                } else {
                    why = "the name pinned to the HTTPDNS IP keeps SNI, the certificate check and Host intact"
                }
            case .directHTTPS:
                if let failed = failures.first(where: { $0.scenario == .directSNI }) {
                    why = "direct-sni fails (\(failed.outcome.rawValue): \(failed.error?.sentence ?? "no detail"))"
                } else {
                    why = "the server's default certificate covers \(url.host), so no SNI is needed"
                }
            default:
                why = "the IP in the URL with Host: \(url.hostHeader) reaches the site"
            }
            summary = "use \(recommended.rawValue): \(why)"
            let partial = failures.filter { $0.scenario == recommended }
            if let bad = partial.first, let ip = bad.ip {
                summary += "; but not against \(ip) (\(bad.outcome.rawValue))"
            }
        } else if let failure = failures.first {
            summary =
                "no direct technique works: \(failure.scenario.rawValue) \(failure.outcome.rawValue): \(failure.error?.sentence ?? "no detail")"
        } else {
            summary = "no direct scenario was tried"
        }

        var notes = [agreementNote(resolution)]
        if let note = localDNSNote(resolution, attempts: attempts, worked: worked) { notes.append(note) }
        // Address versus technique: the system IP works where the HTTPDNS IP does not.
        let bySource = Dictionary(grouping: attempts.filter { $0.scenario.isDirect && $0.ip != nil }) { $0.ipSource }
        if let systemTries = bySource[.system], let dnsTries = bySource[.httpdns] ?? bySource[.cache],
            systemTries.contains(where: worked), !dnsTries.contains(where: worked)
        {
            notes.append(
                "the system IP \(systemTries[0].ip?.text ?? "?") works where the HTTPDNS IP \(dnsTries[0].ip?.text ?? "?") does not: the address is at fault, not the technique"
            )
        }
        if !proxyVariables.isEmpty {
            notes.append(
                "proxy variables are set (\(proxyVariables.joined(separator: ", "))); every attempt bypassed them, since IP-direct through a proxy is not what it seems"
            )
        }
        if resolution.httpdns.error == nil && resolution.httpdns.ipv4.isEmpty && !resolution.httpdns.ipv6.isEmpty {
            notes.append("HTTPDNS returned IPv6 addresses only; direct attempts need an IPv6 route")
        }
        var otherHosts: [String] = []
        for attempt in attempts {
            for hop in attempt.hops.dropFirst() {
                if let host = try? ProbeURL.parse(hop.originalURL).host, host != url.host, !otherHosts.contains(host) {
                    otherHosts.append(host)
                }
            }
        }
        if !otherHosts.isEmpty {
            notes.append(
                "redirects to another host (\(otherHosts.joined(separator: ", "))); each hop was resolved again with its attempt's technique"
            )
        }
        return Verdict(works: works, recommended: recommended, summary: summary, notes: notes)
    }

    static func agreementNote(_ resolution: HostResolution) -> String {
        let system = (resolution.system.ipv4 + resolution.system.ipv6).joined(separator: ", ")
        let httpdns = (resolution.httpdns.ipv4 + resolution.httpdns.ipv6).joined(separator: ", ")
        // "system DNS" for getaddrinfo, "DNS server 127.0.0.1:5353" for --dns-server.
        let local = resolution.system.resolver.label
        switch resolution.agreement {
        case .same:
            return "\(local) and HTTPDNS agree (\(httpdns))"
        case .overlap:
            return "\(local) (\(system)) and HTTPDNS (\(httpdns)) overlap but differ"
        case .disjoint:
            return
                "\(local) (\(system)) and HTTPDNS (\(httpdns)) disagree; direct attempts also went to the system IP"
        case .systemFailed:
            return "\(labelled(local, resolution.system.error)); HTTPDNS answered \(httpdns)"
        case .httpdnsFailed:
            return "\(labelled("HTTPDNS", resolution.httpdns.error)); direct attempts used \(local)'s \(system)"
        case .bothFailed:
            return "\(labelled(local, resolution.system.error)); \(labelled("HTTPDNS", resolution.httpdns.error))"
        }
    }

    /// When the local answer leads nowhere good and HTTPDNS's works: the words a hijack deserves,
    /// naming both addresses (nil when that is not what happened).
    static func localDNSNote(
        _ resolution: HostResolution, attempts: [Attempt], worked: (Attempt) -> Bool
    ) -> String? {
        guard resolution.agreement == .disjoint,
            let baseline = attempts.first(where: { $0.scenario == .systemDNS && $0.ip != nil }), !worked(baseline),
            let good = [Scenario.directSNI, .directHTTPS, .directHTTP].compactMap({ scenario in
                attempts.first { $0.scenario == scenario && $0.ipSource != .system && worked($0) }
            }).first,
            let localIP = baseline.ip, let goodIP = good.ip
        else { return nil }
        let why = baseline.error.map { "\(baseline.outcome.rawValue): \($0.sentence)" } ?? baseline.outcome.rawValue
        return
            "\(resolution.system.resolver.label) sent \(resolution.host) to \(localIP), where the request failed (\(why)); HTTPDNS's \(goodIP) works with \(good.scenario.rawValue): the local DNS answer is wrong or hijacked"
    }

    /// "system DNS: no such name x", whether or not the failure's sentence already names its resolver.
    private static func labelled(_ resolver: String, _ error: ResolutionFailure?) -> String {
        error?.sentence(from: resolver) ?? "\(resolver): no address"
    }
}

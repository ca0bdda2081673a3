// The doctor's proxies-and-resolvers check: which proxy variables would carry the HTTPDNS requests
// or the --host probes (as curl reads them), and what /etc/resolv.conf makes of the system resolver.

import CurlTransport
import FoundationEssentials
import NameResolution
import Probe

/// Warns when a proxy variable covers the HTTPDNS service or a `--host` name, and when the
/// system resolver has no nameserver to ask.
///
/// A resolv.conf without a nameserver warns rather than fails: IP-direct itself does not need
/// system DNS (HTTPDNS services are reached by address), but the SDKs' fallback to system DNS
/// and every name the app resolves without HTTPDNS then depend on whatever answers on
/// 127.0.0.1:53, glibc's default; the DNS paths check says whether anything does.
struct ProxiesAndResolversCheck: DoctorCheck {
    let id = DoctorCheckID.proxiesAndResolvers

    func run(_ context: DoctorContext) async -> DoctorFinding {
        var trace: [DoctorTraceLine] = []
        var warnings: [(seen: String, advice: String)] = []
        var reproduce = ["env | grep -i _proxy", "cat \(context.resolvConfPath)"]

        // Proxies: what curl would do with each request the doctor and the app make.
        let proxies = ProxyVariables(context.environment)
        if proxies.settings.isEmpty {
            trace.append(.init(.seen, "no proxy variable is set"))
        } else {
            trace.append(.init(.seen, "proxy variables: " + proxies.settings.map(\.shown).joined(separator: ", ")))
        }
        var carried: [(target: Target, proxy: ProxyVariables.Setting)] = []
        for target in Self.targets(context) {
            if let proxy = proxies.proxy(scheme: target.url.scheme, host: target.url.host) {
                carried.append((target, proxy))
                trace.append(.init(.note, "\(target.url.text) (\(target.role)) would go through \(proxy.shown)"))
            } else if !proxies.settings.isEmpty {
                let why = proxies.bypasses(target.url.host) ? "NO_PROXY covers it" : "no proxy for \(target.url.scheme)"
                trace.append(.init(.note, "\(target.url.text) (\(target.role)) goes direct: \(why)"))
            }
        }
        if !carried.isEmpty {
            warnings.append(proxyWarning(carried))
            reproduce += carried.prefix(2).map { "curl -sv -o /dev/null \($0.target.url.text)  # shows the proxy" }
        }

        // The system resolver's settings.
        let resolv = await resolverWarning(context, trace: &trace, reproduce: &reproduce)
        if let problem = resolv.problem { warnings.append(problem) }

        guard !warnings.isEmpty else {
            let proxySentence =
                proxies.settings.isEmpty
                ? "No proxy variable is set"
                : "Proxy variables are set (\(proxies.settings.map(\.name).joined(separator: ", "))) but carry "
                    + "neither the HTTPDNS service nor the hosts"
            return DoctorFinding(
                check: id, status: .pass, seen: "\(proxySentence); \(resolv.summary).", trace: trace,
                reproduce: reproduce)
        }
        return DoctorFinding(
            check: id, status: .warn, seen: warnings.map(\.seen).joined(separator: " "),
            advice: warnings.map(\.advice).joined(separator: " "), trace: trace, reproduce: reproduce)
    }

    /// A URL the doctor or the app requests, and what it is.
    struct Target {
        var role: String
        var url: ProbeURL
    }

    /// The HTTPDNS service's addresses (the endpoint, or the start IPs discovery asks) and each
    /// `--host` as its probe requests it.
    static func targets(_ context: DoctorContext) -> [Target] {
        let resolver = context.resolver
        var service: [String] = []
        if resolver.provider != .system, let endpoint = resolver.effectiveEndpoint {
            if (try? ProbeURL.parse(endpoint)) != nil && endpoint.contains("://") {
                service = [endpoint]
            } else if !resolver.startIPs.isEmpty {
                service = resolver.startIPs
            } else if let region = AliCloudRegion.named(resolver.region) {
                service = region.startIPv4.map { "https://\($0)/" }
            }
        }
        return service.compactMap { text in (try? ProbeURL.parse(text)).map { Target(role: "HTTPDNS", url: $0) } }
            + context.hosts.compactMap { text in (try? ProbeURL.parse(text)).map { Target(role: "probe", url: $0) } }
    }

    /// One sentence naming the proxy and what it would carry, and what to add to NO_PROXY.
    private func proxyWarning(_ carried: [(target: Target, proxy: ProxyVariables.Setting)]) -> (String, String) {
        var byProxy: [(proxy: ProxyVariables.Setting, hosts: [String], roles: Set<String>)] = []
        for (target, proxy) in carried {
            if let index = byProxy.firstIndex(where: { $0.proxy == proxy }) {
                if !byProxy[index].hosts.contains(target.url.host) { byProxy[index].hosts.append(target.url.host) }
                byProxy[index].roles.insert(target.role)
            } else {
                byProxy.append((proxy, [target.url.host], [target.role]))
            }
        }
        let clauses = byProxy.map { entry -> String in
            let what = [
                entry.roles.contains("HTTPDNS") ? "the HTTPDNS requests" : nil,
                entry.roles.contains("probe") ? "the probes" : nil,
            ].compactMap { $0 }.joined(separator: " and ")
            return "\(entry.proxy.shown) would carry \(what) to \(entry.hosts.joined(separator: ", "))"
        }
        let hosts = byProxy.flatMap(\.hosts).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let names = byProxy.map(\.proxy.name).joined(separator: ", ")
        let seen =
            clauses.joined(separator: "; ")
            + ": curl honours these variables (so do the reproduce commands and apps built on libcurl), though "
            + "ipdirect's own requests bypass them, and IP-direct through a proxy is not what it seems."
        let advice =
            "Add \(hosts.joined(separator: ",")) to NO_PROXY (export NO_PROXY=\"$NO_PROXY,\(hosts.joined(separator: ","))\"), "
            + "or unset \(names), so IP-direct requests reach the address itself."
        return (seen, advice)
    }

    /// Reads resolv.conf into the trace; a problem when it names no nameserver or cannot be read.
    private func resolverWarning(
        _ context: DoctorContext, trace: inout [DoctorTraceLine], reproduce: inout [String]
    ) async -> (summary: String, problem: (String, String)?) {
        let path = context.resolvConfPath
        let conf: ResolvConf
        do {
            conf = try ResolvConf.read(path)
        } catch {
            trace.append(.init(.seen, "\(path): \(error.reason)"))
            return (
                "\(path) cannot be read",
                (
                    "\(path) cannot be read (\(error.reason)), so the system resolver asks 127.0.0.1:53, glibc's "
                        + "default, and system DNS (the SDKs' fallback) works only if something answers there.",
                    "Restore \(path) with your network's nameserver (or your DHCP client's), then run the doctor again."
                )
            )
        }
        trace.append(.init(.seen, "\(path): \(conf.summary)"))
        for junk in conf.junk { trace.append(.init(.note, "nameserver \(junk) is not an address: ignored")) }
        if conf.ndots > 1 && !conf.search.isEmpty {
            trace.append(
                .init(
                    .note,
                    "ndots \(conf.ndots): a name with fewer dots is first tried with each search suffix, a query "
                        + "(and a wait) per suffix before the name itself"))
        }
        if let stub = conf.localStubs.first {
            reproduce.append("resolvectl status")
            let upstream = await ResolvedUpstream.servers(within: context.stepTimeout)
            switch upstream {
            case .some(let servers) where !servers.isEmpty:
                trace.append(.init(.seen, "resolvectl status: \(stub) forwards to \(servers.joined(separator: ", "))"))
            case .some:
                trace.append(.init(.seen, "resolvectl status names no upstream server for \(stub)"))
            case nil:
                trace.append(.init(.note, "\(stub) is a local stub; resolvectl is not installed or did not answer"))
            }
        }
        guard conf.nameservers.isEmpty else { return (path + ": " + conf.summary, nil) }
        return (
            path + ": " + conf.summary,
            (
                "\(path) names no nameserver, so the system resolver asks 127.0.0.1:53, glibc's default, and "
                    + "system DNS (the SDKs' fallback when HTTPDNS fails) works only if something answers there.",
                "Add your network's resolver to \(path) (nameserver ADDRESS) or let your DHCP client or "
                    + "systemd-resolved write it."
            )
        )
    }
}

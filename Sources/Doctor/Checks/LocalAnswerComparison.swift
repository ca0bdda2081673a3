// The one comparison HTTPDNS exists for: what the system resolver (and --dns-server) answers for
// the canary and each --host against what HTTPDNS answers, with the evidence a probe would show.

import CurlTransport
import FoundationEssentials
import NameResolution
import Probe

/// One name's local answers against HTTPDNS's, and what each side's address did when asked.
struct LocalAnswerComparison: Sendable {
    var name: String
    /// Each local resolver that answered, by the name the finding gives it, with its addresses.
    var local: [(resolver: String, addresses: [IPAddress])]
    var httpdns: [IPAddress]
    /// What the first local address not in HTTPDNS's answer did when asked for the name.
    var localTry: AddressTry?
    /// What HTTPDNS's first address did.
    var httpdnsTry: AddressTry?

    /// A request for the name pinned to one address, and what came of it in words.
    struct AddressTry: Sendable {
        var address: IPAddress
        var works: Bool
        /// "127.0.0.2 presented a certificate for isp-portal.lab.test, not hijacked.lab.test".
        var sentence: String
        var trace: [DoctorTraceLine]
        var reproduce: String
    }

    /// The local answers that share no address with HTTPDNS's.
    var disagreeing: [(resolver: String, addresses: [IPAddress])] {
        httpdns.isEmpty ? [] : local.filter { !$0.addresses.isEmpty && Set($0.addresses).isDisjoint(with: httpdns) }
    }

    /// Hijacked: a local answer that is not HTTPDNS's fails where HTTPDNS's works, as the probe reads it.
    var hijacked: Bool { !disagreeing.isEmpty && localTry?.works == false && httpdnsTry?.works == true }

    /// The sentence for a disagreement, nil when the answers agree.
    var sentence: String? {
        guard !disagreeing.isEmpty else { return nil }
        let said = disagreeing.map { "\($0.resolver) said \($0.addresses.map(\.text).joined(separator: ", "))" }
        var text =
            "The local answer for \(name) is not HTTPDNS's: \(said.joined(separator: "; ")), HTTPDNS said "
            + httpdns.map(\.text).joined(separator: ", ")
        let evidence = [localTry?.sentence, httpdnsTry?.sentence].compactMap { $0 }
        if !evidence.isEmpty { text += "; " + evidence.joined(separator: ", while ") }
        text +=
            hijacked
            ? ": the local DNS answer is wrong or hijacked."
            : ": both work, so it may be another view of the name (a CDN)."
        return text
    }

    /// Compares the names at once: each asked of every local resolver and of HTTPDNS, and the
    /// first differing address of each side tried with the name's certificate check.
    static func run(
        _ names: [String], servers: [DNSPathsCheck.Server], context: DoctorContext
    ) async -> [LocalAnswerComparison] {
        await withTaskGroup(of: (Int, LocalAnswerComparison).self) { group in
            for (index, name) in names.enumerated() {
                group.addTask { (index, await compare(name, servers: servers, context: context)) }
            }
            var all: [(Int, LocalAnswerComparison)] = []
            for await result in group { all.append(result) }
            return all.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    private static func compare(
        _ name: String, servers: [DNSPathsCheck.Server], context: DoctorContext
    ) async -> LocalAnswerComparison {
        var asked = context
        asked.canaryName = name
        async let canary = Canary.resolve(asked)
        let local = await withTaskGroup(of: (Int, [IPAddress]).self) { group in
            for (index, entry) in servers.enumerated() {
                group.addTask {
                    let answer = await DNSServerResolver(server: entry.server).resolve(
                        name, families: [.v4], timeout: context.stepTimeout)
                    return (index, answer.error == nil ? answer.ipv4.sorted() : [])
                }
            }
            var all: [Int: [IPAddress]] = [:]
            for await (index, addresses) in group { all[index] = addresses }
            return servers.indices.map { (servers[$0].name, all[$0] ?? []) }
        }
        let httpdns = (try? await canary.result.get().ipv4.sorted()) ?? []
        var comparison = LocalAnswerComparison(name: name, local: local, httpdns: httpdns)
        guard let differing = comparison.disagreeing.first?.addresses.first, let right = httpdns.first else {
            return comparison
        }
        async let localTry = attempt(name, at: differing, context: context)
        async let httpdnsTry = attempt(name, at: right, context: context)
        (comparison.localTry, comparison.httpdnsTry) = await (localTry, httpdnsTry)
        return comparison
    }

    /// GET of the name at one address, its certificate checked against the name (as the probe's
    /// direct-sni does); the lab's own port for the name where it runs.
    private static func attempt(_ name: String, at address: IPAddress, context: DoctorContext) async -> AddressTry {
        let base = context.lab?.sites[name] ?? "https://\(name)/"
        let components = URLComponents(string: base)
        let port = components?.port ?? (components?.scheme == "http" ? 80 : 443)
        // The in-handshake check against the name, so a refused certificate's names are kept.
        let exchange = await ServiceExchange.send(
            base, checkName: name, resolve: ["\(name):\(port):\(address.text)"], context: context)
        let works = exchange.block == nil
        let sentence: String
        if let tls = exchange.record.tls, tls.problem == .hostnameMismatch,
            let leaf = tls.chain.first.map(CertificateReading.summary)
        {
            sentence =
                "\(address) presented a certificate for \(CertificateReading.names(of: leaf).joined(separator: ", ")), not \(name)"
        } else if let block = exchange.block {
            sentence = "\(address) \(block.sentence)"
        } else {
            sentence = "\(address) answered HTTP \(exchange.record.status) with a certificate for \(name)"
        }
        return AddressTry(
            address: address, works: works, sentence: sentence, trace: exchange.trace, reproduce: exchange.reproduce)
    }
}

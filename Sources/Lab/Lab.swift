// The embedded lab: starts the HTTPDNS service, the fault switch and every origin on loopback (or
// an address given), with a CA made at start-up, and tears it all down again. `ipdirect lab`,
// `--lab` and tests use it.
import FoundationEssentials
import FoundationGaps
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A running lab. Start one with `Lab.start`, stop it with `shutdown()`.
public final class Lab: Sendable {
    /// Where everything is reached.
    public let endpoints: LabEndpoints

    private let group: MultiThreadedEventLoopGroup
    private let ledger: LabLedger
    private let httpdnsListeners: HTTPDNSListeners
    private let listeners: [LabListener]
    /// The LocalDNS stand-in's UDP and TCP channels (bound the usual NIO way: no fault takes them down).
    private let dnsChannels: [any Channel]
    /// The state directory, when the lab made it (removed at shutdown).
    private let ownedDirectory: String?
    private let stopped = LabOnce()

    private init(
        endpoints: LabEndpoints, group: MultiThreadedEventLoopGroup, ledger: LabLedger,
        httpdnsListeners: HTTPDNSListeners, listeners: [LabListener], dnsChannels: [any Channel],
        ownedDirectory: String?
    ) {
        self.endpoints = endpoints
        self.group = group
        self.ledger = ledger
        self.httpdnsListeners = httpdnsListeners
        self.listeners = listeners
        self.dnsChannels = dnsChannels
        self.ownedDirectory = ownedDirectory
    }

    /// Starts a lab: makes its CAs and certificates, writes `ca.pem`, binds every server.
    ///
    /// - Parameter options: ports, initial fault, state directory, delays, logger.
    /// - Returns: the running lab.
    /// - Throws: `LabError` when a port is taken (or cannot be held) or the state directory cannot be written.
    public static func start(_ options: LabOptions = LabOptions()) async throws -> Lab {
        var zone = try LabZone.bundled()
        if options.servesOnlyExtraNames { zone.records = [] }
        for extra in options.extraNames {
            var record = extra.record
            record.name = record.name.lowercased()
            record.origin = nil
            zone.records.append(record)
        }
        let serviceAddresses = options.effectiveServiceAddresses
        let ownAddresses = [options.listenAddress] + serviceAddresses.filter { $0 != options.listenAddress }
        for address in ownAddresses where LabAddress.bytes(address) == nil {
            throw LabError("the lab cannot listen on '\(address)': give an IPv4 or IPv6 address")
        }
        let (directory, owned) = try stateDirectory(options.stateDirectory)
        let authorities = try LabAuthorities.make(
            writingTo: directory, permitting: ownAddresses.compactMap(LabAddress.bytes))
        let account = options.account ?? "139450"
        let secret =
            options.secret ?? (0..<16).map { _ in String(cFormat: "%02x", UInt8.random(in: 0...255)) }.joined()
        let ledger = LabLedger(fault: options.fault)
        ledger.failingNames = Dictionary(
            options.extraNames.filter(\.failsHTTPDNS).map { ($0.record.name.lowercased(), $0.failureDelay) }
        ) { first, _ in first }
        let keys = LabKeys.generate()
        var service = HTTPDNSService(zone: zone, account: account, secret: secret, keys: keys)
        if let clock = options.clock { service.now = clock }
        if options.networkFaults.contains(.clockSkew) {
            // Its Date header and its signature check alike, as a service whose clock is off.
            let clock = service.now
            service.now = { clock() + LabOptions.clockSkewSeconds }
        }
        service.refusesUnsigned = options.networkFaults.contains(.unsignedRefused)
        service.serviceAddresses = serviceAddresses
        let httpdns = httpdnsResponder(
            service: service, ledger: ledger, slowDelay: options.slowFaultDelay, logger: options.logger)

        // Under tls-intercept a middlebox answers the service's TLS with its own CA's certificate.
        let httpdnsServers = try httpdnsServers(
            ca: options.networkFaults.contains(.tlsIntercept) ? authorities.interceptorCA : authorities.ca,
            listen: options.listenAddress, serviceAddresses: serviceAddresses, respond: httpdns)
        let origins =
            options.servesOnlyExtraNames
            ? [] : try originServers(authorities, zone: zone, ledger: ledger, options: options)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let httpdnsListeners = HTTPDNSListeners(
            servers: httpdnsServers, group: group, connections: LabConnections(), ledger: ledger)
        let control = LabServer(
            role: .control, addresses: [options.listenAddress], tls: nil,
            respond: controlResponder(ledger: ledger, listeners: httpdnsListeners))
        let servers = options.servesOnlyExtraNames ? [] : [control] + origins
        var bound: BoundServers
        var extraHosts: [String: String] = [:]
        var proxyPort: Int?
        do {
            bound = try await bind(
                httpdns: httpdnsServers, httpdnsListeners: httpdnsListeners, servers: servers, zone: zone,
                ca: authorities.ca, ledger: ledger, group: group, options: options)
        } catch {
            await httpdnsListeners.close()
            try? await group.shutdownGracefully()
            if owned { try? FileManager.default.removeItem(atPath: directory) }
            throw error
        }
        do {
            let extras = try await bindExtraNames(authorities, ledger: ledger, group: group, options: options)
            bound.listeners += extras.listeners
            extraHosts = extras.hosts
            if !options.extraNames.isEmpty { try authorities.writeDER(to: directory) }
            if options.recordingProxy {
                // Its channel closes at shutdown with the DNS server's.
                let proxy = try await LabConnectProxy.start(
                    group: group, host: options.listenAddress, port: 0, ledger: ledger, connections: LabConnections(),
                    address: proxyAddress(
                        zone: zone, own: ownAddresses,
                        ports: Set(bound.listeners.map(\.port) + bound.ports.values)))
                bound.dnsChannels.append(proxy.channel)
                proxyPort = proxy.port
            }
        } catch {
            for listener in bound.listeners { await listener.release() }
            for channel in bound.dnsChannels { try? await channel.close() }
            await httpdnsListeners.close()
            try? await group.shutdownGracefully()
            if owned { try? FileManager.default.removeItem(atPath: directory) }
            throw error
        }

        var endpoints = endpoints(
            ports: bound.ports, zone: zone, ledger: ledger, account: account, secret: secret, ca: authorities.caPath,
            keys: keys, listen: options.listenAddress, serviceAddresses: serviceAddresses)
        if let proxyPort { endpoints.proxy = "http://\(LabAddress.authority(options.listenAddress)):\(proxyPort)" }
        if !extraHosts.isEmpty {
            endpoints.hosts.merge(extraHosts) { $1 }
            ledger.hosts = endpoints.hosts
            endpoints.caDER = authorities.derPath(in: directory)
        }
        options.logger.info(
            "lab started",
            metadata: [
                "httpdns": "\(endpoints.httpdns)", "ca": "\(authorities.caPath)", "fault": "\(options.fault.rawValue)",
            ])
        return Lab(
            endpoints: endpoints, group: group, ledger: ledger, httpdnsListeners: httpdnsListeners,
            listeners: bound.listeners, dnsChannels: bound.dnsChannels, ownedDirectory: owned ? directory : nil)
    }

    /// Where the recording proxy connects for a CONNECT target: on one of the lab's own `ports`, a
    /// zone name's address or an IP that is the lab's own or a zone name's; nil for anything else,
    /// so a proxy reachable from the network opens no way to this machine's other services.
    private static func proxyAddress(
        zone: LabZone, own: [String], ports: Set<Int>
    ) -> @Sendable (String, Int) -> String? {
        let addresses = Set(own + zone.records.flatMap { $0.ipv4 + $0.ipv6 })
        return { host, port in
            guard ports.contains(port) else { return nil }
            if let record = zone.record(for: host) { return (record.ipv4 + record.ipv6).first }
            return addresses.contains(host) ? host : nil
        }
    }

    /// The lab's certificate authorities, made afresh at each start under a random tag.
    private struct LabAuthorities {
        /// Trusted for lab names (its certificate is `ca.pem`).
        var ca: LabCertificateAuthority
        /// Trusted by nobody: it issues `untrusted.lab.test`'s certificate.
        var untrustedCA: LabCertificateAuthority
        /// Trusted by nobody: a TLS-inspecting middlebox's, for the service under `tls-intercept`.
        var interceptorCA: LabCertificateAuthority
        var caPath: String

        /// Makes the authorities and writes the trusted one's certificate to `directory/ca.pem`;
        /// the trusted one vouches for lab names, loopback and `addresses` (the lab's own).
        static func make(writingTo directory: String, permitting addresses: [[UInt8]]) throws -> LabAuthorities {
            let tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
            let ca = try LabCertificateAuthority.make(
                commonName: "ipdirect lab CA \(tag)", constrainedToLab: true, permitting: addresses)
            let untrustedCA = try LabCertificateAuthority.make(
                commonName: "ipdirect untrusted CA \(tag)", constrainedToLab: false)
            let interceptorCA = try LabCertificateAuthority.make(
                commonName: "ipdirect lab interceptor CA \(tag)", constrainedToLab: false)
            let caPath = directory.appendingPathComponent("ca.pem")
            do {
                try ca.pem().write(toFile: caPath, atomically: true, encoding: .utf8)
            } catch {
                throw LabError("cannot write the lab CA to \(caPath): \(SystemReason.words(for: error))")
            }
            return LabAuthorities(ca: ca, untrustedCA: untrustedCA, interceptorCA: interceptorCA, caPath: caPath)
        }

        /// Where `writeDER` puts the trusted CA's certificate as DER.
        func derPath(in directory: String) -> String { directory.appendingPathComponent("ca.der") }

        /// Writes the trusted CA's certificate as DER (`ca.der`), for a device's trust store.
        func writeDER(to directory: String) throws {
            let path = derPath(in: directory)
            do {
                try Data(try ca.der()).write(to: URL(fileURLWithPath: path))
            } catch {
                throw LabError("cannot write the lab CA to \(path): \(SystemReason.words(for: error))")
            }
        }
    }

    /// Binds an origin per extra name on a free port (the same on each of its addresses), with the
    /// certificate it asks for and its handshakes recorded; returns the listeners and each name's URL.
    private static func bindExtraNames(
        _ authorities: LabAuthorities, ledger: LabLedger, group: MultiThreadedEventLoopGroup, options: LabOptions
    ) async throws -> (listeners: [LabListener], hosts: [String: String]) {
        let ca = authorities.ca
        let now = Date()
        let connections = LabConnections()
        var listeners: [LabListener] = []
        var hosts: [String: String] = [:]
        do {
            for extra in options.extraNames {
                let name = extra.record.name.lowercased()
                let tls: LabTLS
                switch extra.certificate {
                case .trusted:
                    tls = LabTLS(byName: [:], fallback: try ca.issue(dnsNames: [name]).serverContext())
                case .otherName(let other):
                    tls = LabTLS(byName: [:], fallback: try ca.issue(dnsNames: [other]).serverContext())
                case .untrusted:
                    tls = LabTLS(
                        byName: [:], fallback: try authorities.untrustedCA.issue(dnsNames: [name]).serverContext())
                case .expired:
                    let past = (now - 60 * 86400)...(now - 30 * 86400)
                    tls = LabTLS(
                        byName: [:], fallback: try ca.issue(dnsNames: [name], validity: past).serverContext())
                case .bySNI(let other):
                    tls = LabTLS(
                        byName: [name: try ca.issue(dnsNames: [name]).serverContext()],
                        fallback: try ca.issue(dnsNames: [other]).serverContext())
                }
                let behaviour: LabOriginBehaviour
                switch extra.behaviour {
                case .answer: behaviour = .answer
                case .redirect(let target): behaviour = .redirect(to: target.lowercased())
                case .servesBody(let size): behaviour = .servesBody(LabExtraName.body(size: size))
                case .setsCookie(let cookie): behaviour = .setsCookie(cookie)
                }
                let addresses = extra.addresses.isEmpty ? [options.listenAddress] : extra.addresses
                let listener = try LabListener(
                    server: LabServer(
                        role: .extra, addresses: addresses, tls: tls,
                        respond: originResponder(name: name, behaviour: behaviour, ledger: ledger),
                        handshakes: (ledger, name)),
                    port: 0, group: group, connections: connections)
                listeners.append(listener)
                try await listener.open()
                hosts[name] = "https://\(name):\(listener.port)/"
            }
        } catch {
            for listener in listeners { await listener.release() }
            throw error
        }
        return (listeners, hosts)
    }

    /// The HTTPDNS service over plain HTTP and over TLS on `listen`, with a certificate from `ca`
    /// for its name and every address it is reached at: loopback, `listen` and each service
    /// address, as a real service's covers each of its IPs.
    private static func httpdnsServers(
        ca: LabCertificateAuthority, listen: String, serviceAddresses: [String], respond: @escaping LabResponder
    ) throws
        -> [LabServer]
    {
        var covered: [[UInt8]] = [[127, 0, 0, 1], LabCertificateAuthority.ipv6Loopback]
        for address in [listen] + serviceAddresses {
            if let bytes = LabAddress.bytes(address), !covered.contains(bytes) { covered.append(bytes) }
        }
        return [
            LabServer(role: .httpdns, addresses: [listen], tls: nil, respond: respond),
            LabServer(
                role: .httpdnsTLS, addresses: [listen],
                tls: LabTLS(
                    byName: [:],
                    fallback: try ca.issue(dnsNames: [LabEndpoints.serviceName], addresses: covered).serverContext()),
                respond: respond),
        ]
    }

    /// One origin per situation the zone's names lead to, each with the certificate its situation needs.
    private static func originServers(
        _ authorities: LabAuthorities, zone: LabZone, ledger: LabLedger, options: LabOptions
    ) throws -> [LabServer] {
        let ca = authorities.ca
        func single(_ identity: LabIdentity) throws -> LabTLS {
            LabTLS(byName: [:], fallback: try identity.serverContext())
        }
        func issued(_ name: String) throws -> LabTLS { try single(ca.issue(dnsNames: [name])) }
        func origin(_ role: LabRole, _ behaviour: LabOriginBehaviour = .answer) -> LabResponder {
            originResponder(name: role.rawValue, behaviour: behaviour, ledger: ledger)
        }
        let now = Date()
        let here = [options.listenAddress]
        let plainNames = Set(zone.records.filter { $0.origin == LabRole.plain.rawValue }.map(\.name))
        return [
            LabServer(
                role: .plain, addresses: here, tls: nil,
                respond: connectivityCheckResponder(
                    portal: options.networkFaults.contains(.captivePortal), ledger: ledger,
                    next: origin(.plain, .routeByHost(plainNames)))),
            LabServer(
                role: .single, addresses: here, tls: try issued("single.lab.test"), respond: origin(.single)),
            LabServer(
                role: .sni, addresses: here,
                tls: LabTLS(
                    byName: [
                        "sni-a.lab.test": try ca.issue(dnsNames: ["sni-a.lab.test"]).serverContext(),
                        "sni-b.lab.test": try ca.issue(dnsNames: ["sni-b.lab.test"]).serverContext(),
                    ],
                    fallback: try ca.issue(dnsNames: ["default.lab.test"]).serverContext()),
                respond: origin(.sni)),
            LabServer(
                role: .wrongName, addresses: here, tls: try issued("other.lab.test"),
                respond: origin(.wrongName)),
            LabServer(
                role: .expired, addresses: here,
                tls: try single(
                    ca.issue(dnsNames: ["expired.lab.test"], validity: (now - 60 * 86400)...(now - 30 * 86400))),
                respond: origin(.expired)),
            LabServer(
                role: .selfSigned, addresses: here,
                tls: try single(LabCertificateAuthority.selfSigned(dnsNames: ["self-signed.lab.test"])),
                respond: origin(.selfSigned)),
            LabServer(
                role: .untrusted, addresses: here,
                tls: try single(authorities.untrustedCA.issue(dnsNames: ["untrusted.lab.test"])),
                respond: origin(.untrusted)),
            LabServer(
                role: .slow, addresses: here, tls: try issued("slow.lab.test"),
                respond: origin(.slow, .slow(options.slowOriginDelay))),
            LabServer(
                role: .redirect, addresses: here, tls: try issued("redirect.lab.test"),
                respond: origin(.redirect, .redirect(to: "sni-b.lab.test"))),
            LabServer(
                role: .dual, addresses: here == ["127.0.0.1"] ? ["127.0.0.1", "::1"] : here,
                tls: try issued("dual.lab.test"), respond: origin(.dual)
            ),
            LabServer(
                role: .shortTTL, addresses: here, tls: try issued("short-ttl.lab.test"),
                respond: origin(.shortTTL)),
            LabServer(
                role: .poisoned, addresses: here, tls: try issued("poisoned.lab.test"),
                respond: origin(.poisoned)),
            LabServer(
                role: .hostile, addresses: here, tls: try issued("hostile.lab.test"),
                respond: hostileOriginResponder(name: LabRole.hostile.rawValue, ledger: ledger)),
        ]
    }

    /// What `bind` holds until shutdown.
    private struct BoundServers {
        var listeners: [LabListener]
        var dnsChannels: [any Channel]
        var ports: [LabRole: Int]
    }

    /// Binds every server's port once (held until shutdown): the HTTPDNS service, its second
    /// service IP, the origins, and the LocalDNS stand-ins. On failure, what was bound is released.
    private static func bind(
        httpdns httpdnsServers: [LabServer], httpdnsListeners: HTTPDNSListeners, servers: [LabServer], zone: LabZone,
        ca: LabCertificateAuthority, ledger: LabLedger, group: MultiThreadedEventLoopGroup, options: LabOptions
    ) async throws -> BoundServers {
        let connections = LabConnections()
        var listeners: [LabListener] = []
        var dnsChannels: [any Channel] = []
        do {
            var ports = try await httpdnsListeners.start(port: options.port, down: options.fault == .down)
            // The other service addresses (127.0.0.2 by default): the same service, same ports, same certificate.
            let others = options.effectiveServiceAddresses.filter { $0 != options.listenAddress }
            for (index, address) in others.enumerated() {
                for server in httpdnsServers {
                    let listener = try LabListener(
                        server: LabServer(
                            role: server.role == .httpdns ? .httpdnsServiceIP : .httpdnsTLSServiceIP,
                            addresses: [address], tls: server.tls,
                            respond: serviceIPResponder(address, ledger: ledger, next: server.respond)),
                        port: ports[server.role, default: 0], group: group, connections: connections)
                    listeners.append(listener)
                    // Under service-blocked the first one's port stays reserved and unheard:
                    // connections are refused.
                    if !(index == 0 && options.networkFaults.contains(.serviceBlocked)) { try await listener.open() }
                }
            }
            for server in servers {
                let listener = try LabListener(
                    server: server, port: options.port(server.role), group: group,
                    connections: connections)
                listeners.append(listener)
                ports[server.role] = listener.port
                try await listener.open()
            }
            let localDNS = try await LabLocalDNSServers.start(
                responder: LabDNSResponder(
                    zone: zone, slowDelay: options.slowDNSDelay, ledger: ledger, networkFaults: options.networkFaults),
                ca: ca,
                group: group, connections: connections, ledger: ledger,
                ports: (options.port(.hijacked), options.port(.dns)), dnsAddress: options.listenAddress)
            listeners += localDNS.listeners
            dnsChannels = localDNS.channels
            ports[.hijacked] = localDNS.hijackedPort
            ports[.dns] = localDNS.dnsPort
            return BoundServers(listeners: listeners, dnsChannels: dnsChannels, ports: ports)
        } catch {
            for listener in listeners { await listener.release() }
            for channel in dnsChannels { try? await channel.close() }
            throw error
        }
    }

    /// Where everything is reached, from the bound ports; the ledger learns each name's URL too.
    private static func endpoints(
        ports: [LabRole: Int], zone: LabZone, ledger: LabLedger, account: String, secret: String, ca: String,
        keys: LabKeys, listen: String, serviceAddresses: [String]
    ) -> LabEndpoints {
        let host = LabAddress.authority(listen)
        var hosts: [String: String] = [:]
        for record in zone.records {
            guard let role = record.origin.flatMap(LabRole.init(rawValue:)), let port = ports[role] else { continue }
            hosts[record.name] = "\(role == .plain ? "http" : "https")://\(record.name):\(port)/"
        }
        ledger.hosts = hosts
        return LabEndpoints(
            httpdns: "http://\(host):\(ports[.httpdns, default: 0])",
            httpdnsTLS: "https://\(host):\(ports[.httpdnsTLS, default: 0])", account: account, secret: secret,
            ca: ca, control: "http://\(host):\(ports[.control, default: 0])",
            hosts: hosts, zone: zone.records, keys: keys,
            serviceIPs: serviceAddresses.map { "http://\(LabAddress.authority($0)):\(ports[.httpdns, default: 0])" },
            dns: "\(host):\(ports[.dns, default: 0])")
    }

    /// The HTTPDNS fault in force.
    public var fault: HTTPDNSFault { ledger.fault }

    /// Switches the HTTPDNS fault. `down` stops the HTTPDNS listeners listening (the kernel then
    /// refuses connections) while their ports stay reserved; leaving `down` listens on them again.
    ///
    /// - Throws: `LabError` when the lab is shut down or a listener cannot stop or start listening.
    public func setFault(_ fault: HTTPDNSFault) async throws {
        try await httpdnsListeners.apply(fault)
    }

    /// Makes one of the alicloud service IPs `/ss` names answer HTTP 503 (nil: none).
    public func setServiceIPDown(_ ip: String?) { ledger.downServiceIP = ip }

    /// The queries the HTTPDNS service answered, oldest first (the latest 10,000 or more).
    public func httpdnsQueries() -> [LabHTTPDNSQuery] { ledger.queries }

    /// The queries the lab's DNS server answered, oldest first (the latest 10,000 or more).
    public func dnsQueries() -> [LabDNSQueryRecord] { ledger.dnsQueries }

    /// The requests the origins answered, oldest first (the latest 10,000 or more).
    public func originRequests() -> [LabOriginRequest] { ledger.originRequests }

    /// The TLS handshakes the extra names' origins took part in, oldest first, however they ended.
    public func tlsHandshakes() -> [LabTLSHandshake] { ledger.handshakes }

    /// The recording proxy's CONNECTs, oldest first (none without `LabOptions.recordingProxy`).
    public func proxyTunnels() -> [LabProxyTunnel] { ledger.tunnels }

    /// How many requests the origins answered since the lab started.
    public func originRequestsServed() -> Int { ledger.originRequestsServed }

    /// Closes every listener and connection, stops the lab's threads and frees its ports.
    /// Calling it again does nothing.
    public func shutdown() async throws {
        guard stopped.claim() else { return }
        for listener in listeners { await listener.release() }
        for channel in dnsChannels { try? await channel.close() }
        await httpdnsListeners.close()
        try await group.shutdownGracefully()
        if let ownedDirectory { try? FileManager.default.removeItem(atPath: ownedDirectory) }
    }

    private static func stateDirectory(_ path: String?) throws -> (String, owned: Bool) {
        if let path {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw LabError("cannot create the lab state directory \(path): \(SystemReason.words(for: error))")
            }
            return (path, false)
        }
        var template = Array(
            FileManager.default.temporaryDirectory.path.appendingPathComponent("ipdirect-lab-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw LabError("cannot create a temporary directory for the lab CA")
        }
        return (String(cString: made), true)
    }
}

/// Something that happens once (shutdown), whoever asks first.
final class LabOnce: Sendable {
    private let done = Locked(false)

    /// True for the first caller only.
    func claim() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

/// The HTTPDNS listeners (plain and TLS), which the `down` fault takes off their reserved ports
/// and back on.
actor HTTPDNSListeners {
    private let servers: [LabServer]
    private let group: any EventLoopGroup
    private let connections: LabConnections
    private let ledger: LabLedger
    private var listeners: [LabListener] = []
    private var closed = false

    init(servers: [LabServer], group: any EventLoopGroup, connections: LabConnections, ledger: LabLedger) {
        self.servers = servers
        self.group = group
        self.connections = connections
        self.ledger = ledger
    }

    /// Reserves every server's port (`port` of its role: 0 for a free one) and, unless the lab
    /// starts `down`, listens on it.
    ///
    /// - Returns: each server's port.
    func start(port: (LabRole) -> Int, down: Bool) async throws -> [LabRole: Int] {
        var ports: [LabRole: Int] = [:]
        for server in servers {
            let listener = try LabListener(
                server: server, port: port(server.role), group: group, connections: connections)
            listeners.append(listener)
            ports[server.role] = listener.port
            if !down { try await listener.open() }
        }
        return ports
    }

    func apply(_ fault: HTTPDNSFault) async throws {
        guard !closed else { throw LabError("the lab is shut down") }
        if fault == .down {
            ledger.fault = fault  // answers already on their way hang up
            for listener in listeners { try await listener.refuse() }
        } else {
            for listener in listeners { try await listener.open() }
            ledger.fault = fault
        }
    }

    func close() async {
        closed = true
        for listener in listeners { await listener.release() }
    }
}

/// The HTTPDNS service with the fault switch applied and every answer logged.
private func httpdnsResponder(
    service: HTTPDNSService, ledger: LabLedger, slowDelay: Double, logger: Logger
) -> LabResponder {
    { request, loop in
        let fault = ledger.fault
        let answer = service.discovery(request) ?? service.answer(request)
        var response = answer.response
        // Every answer carries the service's time, as real servers' do (the doctor's clock check).
        if !response.headers.contains(where: { $0.0.lowercased() == "date" }) {
            response.headers.append(("Date", HTTPDNSService.httpDate(service.now())))
        }
        switch fault {
        case .none:
            break
        case .slow:
            response.delay = slowDelay
        case .error:
            response = .text(500, "lab fault: internal error\n")
        case .malformed:
            response.body = garbled(response.body, json: answer.isJSON)
        case .down:
            response = .hangUp
        }
        if fault != .down, let delay = ledger.failureDelay(answer.host) {
            response = .text(
                delay > 0 ? 504 : 500, "lab: HTTPDNS fails for \(answer.host) until its origin is reached\n")
            response.delay = delay
        }
        ledger.record(
            LabHTTPDNSQuery(
                time: Date(), path: request.target, format: answer.format, host: answer.host,
                status: response.status, fault: fault, userAgent: request.headers.first(name: "user-agent"),
                edns: answer.dnsQuery?.udpPayloadSize, dnsQueryLength: answer.dnsQuery?.length))
        logger.info(
            "httpdns \(answer.format) host=\(answer.host) status=\(response.status) fault=\(fault.rawValue) \(request.method) \(request.path)"
        )
        return loop.makeSucceededFuture(response)
    }
}

/// One alicloud service IP: answers 503 while it is the one made to fail, else as `next`.
private func serviceIPResponder(_ ip: String, ledger: LabLedger, next: @escaping LabResponder) -> LabResponder {
    { request, loop in
        guard ledger.downServiceIP == ip else { return next(request, loop) }
        ledger.record(
            LabHTTPDNSQuery(
                time: Date(), path: request.target, format: "service-ip-down \(ip)", host: "", status: 503,
                fault: ledger.fault))
        return loop.makeSucceededFuture(.text(503, "lab: service IP \(ip) is down\n"))
    }
}

/// A body a client must reject: JSON cut in half, or text that is no answer at all.
private func garbled(_ body: [UInt8], json: Bool) -> [UInt8] {
    if json { return Array(body.prefix(max(1, body.count / 2))) }
    return Array("<html>\u{1}lab;;,garbage-".utf8)
}

/// The fault switch over HTTP: `GET /fault`, `POST /fault?mode=M`, and the logs as JSON.
private func controlResponder(ledger: LabLedger, listeners: HTTPDNSListeners) -> LabResponder {
    { request, loop in
        switch (request.method, request.path) {
        case ("GET", "/fault"):
            return loop.makeSucceededFuture(.json(200, #"{"fault":"\#(ledger.fault.rawValue)"}"#))
        case ("POST", "/fault"), ("PUT", "/fault"):
            let mode = request.query["mode"] ?? String(decoding: request.body, as: UTF8.self)
            guard let fault = HTTPDNSFault(rawValue: mode.trimmingWhitespaceAndNewlines()) else {
                let modes = HTTPDNSFault.allCases.map(\.rawValue).joined(separator: ", ")
                return loop.makeSucceededFuture(
                    .json(400, #"{"error":"unknown fault mode \#(mode); use one of \#(modes)"}"#))
            }
            let promise = loop.makePromise(of: LabResponse.self)
            promise.completeWithTask {
                do {
                    try await listeners.apply(fault)
                    return .json(200, #"{"fault":"\#(fault.rawValue)"}"#)
                } catch {
                    return .json(500, #"{"error":\#(json("\(error)"))}"#)
                }
            }
            return promise.futureResult
        case ("GET", "/queries"):
            return loop.makeSucceededFuture(.json(200, encoded(ledger.queries)))
        case ("GET", "/requests"):
            return loop.makeSucceededFuture(.json(200, encoded(ledger.originRequests)))
        default:
            return loop.makeSucceededFuture(
                .text(
                    404,
                    "control: GET /fault, POST /fault?mode=none|slow|error|malformed|down, GET /queries, GET /requests\n"
                ))
        }
    }
}

private func encoded(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "[]"
}

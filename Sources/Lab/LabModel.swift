// The lab's public vocabulary: options, endpoints, zone records and what the servers saw.
// Other modules and the tests code against these types; keep names and JSON fields stable.
import FoundationEssentials
@_exported import LabFaults
import Logging

/// The servers of a lab, in port order: with a port base N the i-th listens on N+i.
/// A zone record's `origin` names one of them.
enum LabRole: String, CaseIterable, Sendable {
    case httpdns
    case httpdnsTLS = "httpdns-tls"
    case control, plain, single, sni
    case wrongName = "wrong-name"
    case expired
    case selfSigned = "self-signed"
    case untrusted, slow, redirect, dual
    case shortTTL = "short-ttl"
    case poisoned, hostile
    /// `hijacked.lab.test`'s real site on 127.0.0.1 (the hijacker shares its port on 127.0.0.2).
    case hijacked
    /// The LocalDNS stand-in, UDP and TCP.
    case dns
    /// The second alicloud service IP (127.0.0.2), on the HTTPDNS ports rather than in the layout.
    case httpdnsServiceIP = "httpdns-service-ip"
    case httpdnsTLSServiceIP = "httpdns-tls-service-ip"
    /// The hijacker's site on 127.0.0.2, on the hijacked site's port.
    case hijacker
    /// An origin of a name beyond the zone (`LabOptions.extraNames`, the audit's traps): always on a
    /// free port, outside the layout.
    case extra

    /// The roles with a place in the `portBase` layout.
    static let layout = allCases.filter { $0 != .extra }

    /// This server's port in the layout after `base`; 0 (a free port) without a base.
    func port(after base: Int?) -> Int {
        guard let base else { return 0 }
        guard self != .extra else { return 0 }
        return base + (Self.allCases.firstIndex(of: self) ?? 0)
    }

    /// The port a real service or DNS server listens on for this role (HTTP 80, HTTPS 443, DNS
    /// 53); nil for the lab's own servers, which have no such port.
    var wellKnownPort: Int? {
        switch self {
        case .httpdns: return 80
        case .httpdnsTLS: return 443
        case .dns: return 53
        default: return nil
        }
    }
}

/// How to start a lab.
public struct LabOptions: Sendable {
    /// First port of a fixed, deterministic layout (N, N+1, ...); nil picks free ports.
    public var portBase: Int?
    /// The bases whose whole layout fits below port 65536: one port for each of the lab's servers.
    public static let portBases: ClosedRange<Int> = 1...(65_535 - (LabRole.layout.count - 1))
    /// The HTTPDNS fault at start-up.
    public var fault: HTTPDNSFault
    /// The network faults the lab fakes from the start (one per doctor check); none by default.
    public var networkFaults: Set<NetworkFault> = []
    /// Where `ca.pem` is written; nil makes a fresh temporary directory, removed at shutdown.
    public var stateDirectory: String?
    /// Delay before the `slow.lab.test` origin answers, in seconds.
    public var slowOriginDelay: Double
    /// Delay before the HTTPDNS service answers under the `slow` fault, in seconds.
    public var slowFaultDelay: Double
    /// Delay before the lab's DNS server answers a `slow` name, in seconds.
    public var slowDNSDelay: Double
    /// Where the lab logs every HTTPDNS query it answers; silent by default.
    public var logger: Logger
    /// The alicloud account the lab serves (legacy API and v2); nil for the lab's own, 139450.
    public var account: String?
    /// That account's signing secret; nil makes a fresh random one. A secret that is not hex still
    /// signs the legacy API, but no v2 request (v2 keys its HMAC with the hex-decoded secret).
    public var secret: String?
    /// The clock signatures are checked against, in seconds since 1970; nil for the system clock.
    /// Requests signed at a known time (an SDK's captured ones) are checked with a clock at it.
    public var clock: (@Sendable () -> Int)?
    /// The address the lab's servers listen on (the HTTPDNS service, the origins, the fault
    /// switch and the DNS server): loopback by default; a network namespace's own address makes
    /// the lab a stand-in service that other namespaces reach.
    public var listenAddress = "127.0.0.1"
    /// The service addresses `/ss` names, in its order; the HTTPDNS service listens on each (the
    /// same ports as on `listenAddress`) and its certificate covers each. The first is the one the
    /// `service-blocked` fault takes down, unless it is `listenAddress`. Nil: 127.0.0.2 then
    /// 127.0.0.1 on loopback, else `listenAddress` alone.
    public var serviceAddresses: [String]?
    /// Whether the HTTPDNS service listens on 80 and 443 and the DNS server on 53, as the real
    /// ones do (the other servers keep `portBase`'s layout or free ports); binding them needs root
    /// or CAP_NET_BIND_SERVICE.
    public var wellKnownPorts = false
    /// Names served beyond the bundled zone, each with an origin of its own on a free port (the
    /// audit's traps); none by default. With any, the lab also writes its CA as DER (`ca.der`).
    public var extraNames: [LabExtraName] = []
    /// Whether the lab serves `extraNames` alone: its HTTPDNS service and DNS server answer no
    /// bundled name, and neither the bundled names' origins nor the fault switch listen (the
    /// audit beyond loopback, where everyone on the network reaches what listens). `control` in
    /// the endpoints then names no server (port 0).
    public var servesOnlyExtraNames = false
    /// Whether the lab runs a recording HTTP CONNECT proxy on `listenAddress` (the audit's proxy
    /// trap): it records each CONNECT's target and tunnels to lab names and addresses only.
    public var recordingProxy = false

    /// The service addresses `/ss` names, `serviceAddresses` or its default.
    public var effectiveServiceAddresses: [String] {
        serviceAddresses ?? (listenAddress == "127.0.0.1" ? HTTPDNSService.labServiceIPs : [listenAddress])
    }

    /// The port `role` listens on: its well-known port with `wellKnownPorts`, else its place in
    /// the layout after `portBase` (0, a free port, without one).
    func port(_ role: LabRole) -> Int {
        if wellKnownPorts, let port = role.wellKnownPort { return port }
        return role.port(after: portBase)
    }

    /// How far ahead of this machine the service's clock runs under the `clock-skew` fault, in
    /// seconds: past the v2 signature's 600 s window, so a request signed now arrives expired.
    public static let clockSkewSeconds = 900

    public init(
        portBase: Int? = nil, fault: HTTPDNSFault = .none, stateDirectory: String? = nil,
        slowOriginDelay: Double = 3, slowFaultDelay: Double = 5, slowDNSDelay: Double = 3,
        logger: Logger = Logger(label: "ipdirect.lab", factory: { _ in SwiftLogNoOpLogHandler() }),
        account: String? = nil, secret: String? = nil, clock: (@Sendable () -> Int)? = nil
    ) {
        self.account = account
        self.secret = secret
        self.clock = clock
        self.portBase = portBase
        self.fault = fault
        self.stateDirectory = stateDirectory
        self.slowOriginDelay = slowOriginDelay
        self.slowFaultDelay = slowFaultDelay
        self.slowDNSDelay = slowDNSDelay
        self.logger = logger
    }
}

/// One name of the lab's zone.
/// A DNS error the lab answers for a name, as dig names it.
public enum LabDNSRcode: String, Sendable, Codable, CaseIterable {
    case formerr, servfail, notimp, refused

    /// The RCODE written in the header (RFC 1035 4.1.1).
    public var code: Int {
        switch self {
        case .formerr: return 1
        case .servfail: return 2
        case .notimp: return 4
        case .refused: return 5
        }
    }
}

public struct LabZoneRecord: Sendable, Codable, Equatable {
    public var name: String
    /// What the HTTPDNS service answers for A queries. Not always IP literals: the
    /// `poisoned.lab.test` record carries junk on purpose.
    public var ipv4: [String]
    /// What the alicloud formats answer for A queries from a client address that is not loopback
    /// (the peer's, or the one `cip`/`ip=` names), as a CDN answers by where the client is; nil
    /// answers `ipv4` to every client.
    public var ipv4Elsewhere: [String]?
    /// What the HTTPDNS service answers for AAAA queries.
    public var ipv6: [String]
    /// TTL in seconds (of the AAAA records too, unless `ttlV6` says otherwise).
    public var ttl: Int
    /// The AAAA records' own TTL, for a name whose families expire apart (v2 `v6.ttl`, the
    /// legacy batch's `type: 28` record).
    public var ttlV6: Int?
    /// The legacy API's `origin_ttl` (the authoritative TTL before the service's own); `ttl` when nil.
    public var originTTL: Int?
    /// The legacy API's `extra`, as the service sends it: HTML-entity-encoded.
    public var extra: String?
    /// The lab origin serving the name (`plain`, `sni`, ...), nil when nothing serves it.
    public var origin: String?
    /// A CNAME chain, first alias first: DNS replies (RFC 8484, the DNS server) lead through it to
    /// the addresses; the HTTPDNS formats answer the addresses alone, as the real services do.
    public var cname: [String]?
    /// How the lab's DNS server (the carrier's LocalDNS) answers; nil means as HTTPDNS does.
    public var localDNS: LabLocalDNS?
    /// The error every DNS answer about the name carries (the DNS server, RFC 8484 and DoH JSON's
    /// `Status` alike); nil for NOERROR. The alicloud and tencent formats still answer the addresses.
    public var rcode: LabDNSRcode?

    enum CodingKeys: String, CodingKey {
        case name, ipv4, ipv6, ttl, origin, cname, rcode, extra
        case localDNS = "localdns"
        case ipv4Elsewhere = "ipv4_elsewhere"
        case ttlV6 = "ttl_v6"
        case originTTL = "origin_ttl"
    }

    public init(
        name: String, ipv4: [String], ipv6: [String], ttl: Int, origin: String? = nil, cname: [String]? = nil,
        localDNS: LabLocalDNS? = nil, rcode: LabDNSRcode? = nil
    ) {
        self.rcode = rcode
        self.name = name
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.ttl = ttl
        self.origin = origin
        self.cname = cname
        self.localDNS = localDNS
    }

    /// The A records answered to `client`: `ipv4Elsewhere` for an address off this machine.
    public func ipv4(forClient client: String) -> [String] {
        guard let ipv4Elsewhere, !client.hasPrefix("127."), client != "::1" else { return ipv4 }
        return ipv4Elsewhere
    }

    /// The TTL of one family's records.
    public func ttl(_ v6: Bool) -> Int { v6 ? ttlV6 ?? ttl : ttl }
}

/// Where everything of a running lab is reached.
public struct LabEndpoints: Sendable, Codable {
    /// HTTPDNS base URL: alicloud `{httpdns}/{account}/d`, tencent `{httpdns}/d`,
    /// DoH `{httpdns}/resolve` and `{httpdns}/dns-query`.
    public var httpdns: String
    /// The same service over HTTPS (certificate for 127.0.0.1 and httpdns.lab.test).
    public var httpdnsTLS: String
    public var account: String
    public var secret: String
    /// Path of the lab CA's PEM file.
    public var ca: String
    /// The lab's DNS server (the carrier LocalDNS stand-in), `127.0.0.1:PORT`, UDP and TCP.
    public var dns: String
    /// Base URL of the fault switch: `POST {control}/fault?mode=slow`, `GET {control}/fault`.
    public var control: String
    /// Name → base URL with port, e.g. `"sni-a.lab.test": "https://sni-a.lab.test:43121/"`.
    public var hosts: [String: String]
    public var zone: [LabZoneRecord]
    /// The keys, tokens and extra ids the wire formats need (alicloud AES, tencent DES/AES/token).
    public var keys: LabKeys
    /// The alicloud service IPs `{httpdns}/{account}/ss` names, as base URLs; the first can be
    /// made to fail (`Lab.setServiceIPDown`).
    public var serviceIPs: [String]
    /// A doctor command that checks the lab as a real service from another process (`ipdirect
    /// lab` sets it, with the configuration file it reads); nil for a lab started in-process.
    public var doctor: String?
    /// Path of the lab CA as DER (a device's trust store takes it); nil unless the lab serves
    /// extra names.
    public var caDER: String?
    /// The recording proxy, `http://ADDRESS:PORT`; nil unless `LabOptions.recordingProxy`.
    public var proxy: String?

    public init(
        httpdns: String, httpdnsTLS: String, account: String, secret: String, ca: String, control: String,
        hosts: [String: String], zone: [LabZoneRecord], keys: LabKeys, serviceIPs: [String] = [],
        dns: String = ""
    ) {
        self.dns = dns
        self.keys = keys
        self.serviceIPs = serviceIPs
        self.httpdns = httpdns
        self.httpdnsTLS = httpdnsTLS
        self.account = account
        self.secret = secret
        self.ca = ca
        self.control = control
        self.hosts = hosts
        self.zone = zone
    }

    /// The name the service's certificate carries on every service IP, as Alibaba's carries
    /// 203.107.1.1: a client checks each service IP's certificate against it (`service_name`).
    public static let serviceName = "httpdns.lab.test"

    /// The port of a host's base URL, e.g. `port(of: "sni-a.lab.test")`.
    public func port(of name: String) -> Int? {
        guard let url = hosts[name], let components = URLComponents(string: url) else { return nil }
        return components.port
    }
}

/// One query the HTTPDNS service answered.
public struct LabHTTPDNSQuery: Sendable, Codable, Equatable {
    public var time: Date
    /// Request target as sent, path and query.
    public var path: String
    /// `alicloud`, `alicloud-signed`, `alicloud-batch`, `alicloud-batch-signed`, `alicloud-ss`,
    /// `alicloud-v2`, `tencent`, `doh-json`, `doh-wire` and their variants, or `unknown`.
    public var format: String
    /// The name asked for (comma-joined for a batch), empty when missing.
    public var host: String
    public var status: Int
    /// The fault in force when it answered.
    public var fault: HTTPDNSFault
    /// The client's User-Agent header, when it sent one.
    public var userAgent: String? = nil
    /// RFC 8484: the DNS query's EDNS(0) payload size (nil without OPT) and its length in bytes.
    public var edns: Int? = nil
    public var dnsQueryLength: Int? = nil
}

/// One request an origin answered.
public struct LabOriginRequest: Sendable, Codable, Equatable {
    /// The origin's name: `plain`, `single`, `sni`, `slow`, ...
    public var origin: String
    /// The Host header as received, port included.
    public var host: String
    /// The TLS server name the client sent, nil when none (or plain HTTP).
    public var sni: String?
    public var method: String
    public var path: String
    public var bodyLength: Int
    public var status: Int
    public var time: Date
    /// The query as received (after `?`), nil when there was none.
    public var query: String? = nil
    /// The address the connection came to (an origin listening on several tells them apart).
    public var localAddress: String? = nil
    /// The SHA-256 of the body, lowercase hex, when there was one and all of it was kept (1 MiB).
    public var bodySHA256: String? = nil
    /// The Cookie header, when one came.
    public var cookie: String? = nil
    /// The port the connection came from: a recording proxy's tunnel (`LabProxyTunnel.fromPort`) is told by it.
    public var remotePort: Int? = nil
}

/// One TLS connection to an extra name's origin, recorded when it closed: how its handshake went.
public struct LabTLSHandshake: Sendable, Codable, Equatable {
    /// The origin's name (the extra name it serves).
    public var origin: String
    /// The server name the client sent, nil when none.
    public var sni: String?
    /// Whether the server saw the handshake complete. Under TLS 1.3 that happens before the client
    /// has checked the certificate: a refusing client then shows as an alert in `failure`.
    public var completed: Bool
    /// The first error or alert on the connection, nil when none came.
    public var failure: String?
    /// When the connection's ClientHello arrived.
    public var time: Date
    /// The address the connection came to.
    public var localAddress: String?
}

/// Why the lab could not start or switch.
public struct LabError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

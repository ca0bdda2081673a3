// One request the doctor sends to an HTTPDNS service address, and what became of it: connect and
// TLS times, how a blocked one was blocked, the service's `Date`, its trace and the curl that repeats it.

import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe
import TerminalText

/// How a service address failed to answer, as a person names it.
enum ServiceBlock: Sendable, Equatable {
    /// Nothing within the timeout; `connected` when TCP got through and the answer did not.
    case timeout(seconds: Double, connected: Bool)
    /// The connection failed at once, in the shared words: refused or reset by the far side, or
    /// stopped on this machine (a local firewall, no route).
    case connection(ConnectionFailure)
    /// TLS answered with a certificate that does not chain to a trusted CA: something on the path
    /// intercepts TLS.
    case intercepted(issuer: String, subject: String)
    /// Another certificate problem (a wrong name, expired), in OpenSSL's words and ours.
    case certificate(String)
    /// Any other failure, in curl's words.
    case unreachable(String)
    /// An answer, but a server error: the address is there and does not serve.
    case serverError(Int)

    /// The short form for a sentence: "refused the connection", "timed out", ...
    var sentence: String {
        switch self {
        case .timeout(let seconds, let connected):
            let limit = ResolutionError.format(seconds)
            return connected ? "accepted the connection and sent no answer within \(limit) s" : "timed out (\(limit) s)"
        case .connection(let how): return how.clause
        case .intercepted(let issuer, _):
            return "answered TLS with a certificate issued by \(issuer), which does not chain to a trusted CA"
        case .certificate(let detail): return "presented a certificate that was refused (\(detail))"
        case .unreachable(let detail): return "could not be reached (\(detail))"
        case .serverError(let status): return "answered HTTP \(status)"
        }
    }
}

/// One exchange with a service address.
struct ServiceExchange: Sendable {
    /// The URL as sent. It may carry a signature: only `shownURL` is ever shown.
    let url: String
    let record: TransferRecord
    let timeout: Duration
    let caFile: String?

    /// Sends a GET and waits for the whole exchange, never longer than `timeout`.
    ///
    /// - Parameters:
    ///   - checkName: the name the certificate must carry instead of the URL's host (an alicloud
    ///     service IP is checked against `service_name`, as the SDKs check it).
    ///   - resolve: `host:port:address` pins, so a named endpoint is asked at one of its addresses.
    static func send(
        _ url: String, checkName: String? = nil, resolve: [String] = [], context: DoctorContext
    ) async -> ServiceExchange {
        let timeout = context.stepTimeout
        let spec = TransferSpec(
            url: url, headers: [HeaderField(name: "User-Agent", value: context.resolver.sdk.userAgent)],
            timeout: timeout, caFile: context.resolver.caFile, resolve: resolve, checkName: checkName,
            verifyHost: checkName == nil, bodyLimit: .keepFirst(16 * 1024))
        let record = await DoctorWaits.on("the service at \(url.prefix { $0 != "?" })", owner: .serviceReachability) {
            await TransferLoop.shared.perform(spec)
        }
        return ServiceExchange(url: url, record: record, timeout: timeout, caFile: context.resolver.caFile)
    }

    /// The URL with its signature and other secret values hidden.
    var shownURL: String { Redaction.url(url) }

    /// Where the exchange went, `127.0.0.2:443`.
    var target: String {
        guard let components = URLComponents(string: url), let host = components.host else { return url }
        let port = components.port ?? (components.scheme == "https" ? 443 : 80)
        return IPAddress(host).map { $0.hostPort(port) } ?? "\(host):\(port)"
    }

    /// How the address failed to answer; nil when it answered (any status below 500).
    var block: ServiceBlock? {
        if let tls = record.tls, let problem = tls.problem {
            let chain = tls.chain.map(CertificateReading.summary)
            switch problem {
            case .untrustedIssuer, .selfSigned:
                let leaf = chain.first
                return .intercepted(issuer: leaf?.issuer ?? "an unknown issuer", subject: leaf?.subject ?? "?")
            default:
                return .certificate(tls.verifyMessage)
            }
        }
        guard let failure = record.failure else {
            return record.status >= 500 ? .serverError(record.status) : nil
        }
        // The shared reading of the errno (only where the kind says a connection failed or
        // broke: a timeout's may be left over from an earlier call).
        if let how = failure.connection { return .connection(how) }
        switch failure.kind {
        case .timeout: return .timeout(seconds: timeout.inSeconds, connected: record.connectUs > 0)
        case .transfer: return .connection(.reset)
        case .certificate: return .certificate(TerminalText.escaped(failure.message, cutAt: 200))
        default: return .unreachable(TerminalText.escaped(failure.message, cutAt: 200))
        }
    }

    /// TCP connect time in milliseconds, nil when no connection was made.
    var connectMs: Double? { record.connectUs > 0 ? Double(record.connectUs) / 1000 : nil }

    /// TLS handshake time in milliseconds (after the connect), nil for HTTP or no handshake.
    var tlsMs: Double? {
        record.appConnectUs > 0 ? Double(record.appConnectUs - record.connectUs) / 1000 : nil
    }

    /// "connect 0.3 ms, TLS 5.1 ms".
    var timings: String {
        var parts: [String] = []
        if let connectMs { parts.append("connect \(Self.ms(connectMs))") }
        if let tlsMs { parts.append("TLS \(Self.ms(tlsMs))") }
        return parts.joined(separator: ", ")
    }

    static func ms(_ value: Double) -> String { String(cFormat: "%.1f ms", value) }

    /// The service's `Date` header, cleaned, and the time it says.
    var serviceDate: (text: String, date: Date)? {
        guard let text = record.header("Date").map({ TerminalText.escaped($0, cutAt: 64) }),
            let date = AliCloudServiceRequests.httpDate(text)
        else { return nil }
        return (text, date)
    }

    /// This machine's time halfway through the exchange: the moment the service's `Date` is
    /// compared with.
    var localMidpoint: Date {
        record.startedAt.addingTimeInterval(
            Double(record.startTransferUs > 0 ? record.startTransferUs : record.totalUs) / 2e6)
    }

    /// The service's refusal code and answer mode, when the body is a JSON answer.
    var reading: (code: String?, mode: Int?) { AliCloudServiceRequests.reading(record.body) }

    /// What was sent and seen, for the finding's trace.
    var trace: [DoctorTraceLine] {
        var lines = [DoctorTraceLine(.sent, "GET \(shownURL)")]
        if let block {
            lines.append(DoctorTraceLine(.seen, "\(target) \(block.sentence)"))
        } else {
            var seen = "HTTP \(record.status) from \(target)"
            if !timings.isEmpty { seen += " (\(timings))" }
            lines.append(DoctorTraceLine(.seen, seen))
        }
        if let date = serviceDate { lines.append(DoctorTraceLine(.seen, "Date: \(date.text)")) }
        if record.failure == nil, !record.body.isEmpty {
            lines.append(DoctorTraceLine(.seen, TerminalText.quoted(bytes: record.body, cutAt: 160)))
        }
        return lines
    }

    /// The skipped finding of a check that could not ask the service because this exchange was
    /// blocked (nil when it was not): the reachability check's finding says why.
    func unreachable(
        _ check: DoctorCheckID, so consequence: String, trace: [DoctorTraceLine], reproduce: [String]
    ) -> DoctorFinding? {
        guard let block else { return nil }
        return DoctorFinding(
            check: check, status: .skipped, seen: "The service at \(target) \(block.sentence), so \(consequence).",
            advice: "The service reachability check says why the service cannot be reached.", trace: trace,
            reproduce: reproduce)
    }

    /// The curl command that repeats the exchange; a signature or other secret value is a
    /// variable the user sets, never written out.
    var reproduce: String {
        guard let probeURL = try? ProbeURL.parse(url) else { return "curl -sS -i \(ReproduceCommand.quoted(shownURL))" }
        return ReproduceCommand.command(
            for: ReproduceCommand.Exchange(
                scenario: .systemDNS, url: probeURL, ip: nil, caFile: caFile, timeout: timeout))
    }
}

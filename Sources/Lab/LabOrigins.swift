// The lab's origins: each answers with one line naming itself, the Host header and the SNI
// it saw, so a test can tell exactly what reached it; `/echo` adds the request body length.
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// What an origin does beyond saying who it is.
enum LabOriginBehaviour: Sendable {
    /// Answers every request.
    case answer
    /// Answers only requests whose Host (without port) is one of these names; 421 otherwise.
    case routeByHost(Set<String>)
    /// Waits this many seconds before the first byte.
    case slow(Double)
    /// Answers 302 to this host's URL (looked up when the request comes, so the port is known).
    case redirect(to: String)
    /// Hands these bytes out at `GET /body` (for a client to post back whole).
    case servesBody([UInt8])
    /// Sets this cookie (`name=value`) for the path `/` on every answer.
    case setsCookie(String)
}

/// Makes the responder of one origin.
///
/// - Parameters:
///   - name: the origin's name, as it reports itself (`origin=sni`).
///   - behaviour: what it does.
///   - ledger: where each answered request is recorded.
func originResponder(name: String, behaviour: LabOriginBehaviour, ledger: LabLedger) -> LabResponder {
    { request, loop in
        var line = "origin=\(name) ; host=\(request.host) ; sni=\(request.sni ?? "none")"
        if request.path == "/echo" { line += " ; method=\(request.method) ; body-bytes=\(request.bodyLength)" }
        var response = LabResponse.text(200, line + "\n")
        switch behaviour {
        case .answer:
            break
        case .routeByHost(let names):
            let bare = hostWithoutPort(request.host).lowercased()
            if !names.contains(bare) {
                response = .text(
                    421, line + " ; misdirected: this origin serves \(names.sorted().joined(separator: ", "))\n")
            }
        case .slow(let delay):
            response.delay = delay
        case .redirect(let target):
            let base = ledger.hosts[target] ?? "https://\(target)/"
            let location = base + request.target.drop { $0 == "/" }
            response = .text(302, line + " ; redirect=\(location)\n")
            response.headers.append(("Location", location))
        case .servesBody(let bytes):
            if request.method == "GET" && request.path == "/body" {
                response = LabResponse(
                    status: 200, headers: [("Content-Type", "application/octet-stream")], body: bytes)
            }
        case .setsCookie(let cookie):
            response.headers.append(("Set-Cookie", cookie + "; Path=/"))
        }
        // A name whose HTTPDNS fails until its origin is reached recovers now (LabExtraName.failsHTTPDNS).
        ledger.heal(name)
        ledger.record(
            LabOriginRequest(
                origin: name, host: request.host, sni: request.sni, method: request.method, path: request.path,
                bodyLength: request.bodyLength, status: response.status, time: Date(),
                query: request.target.firstIndex(of: "?").map {
                    String(request.target[request.target.index(after: $0)...])
                }, localAddress: request.localAddress,
                bodySHA256: request.bodyLength > 0 && request.bodyLength == request.body.count
                    ? LabExtraName.sha256(request.body) : nil,
                cookie: request.headers.first(name: "cookie"), remotePort: request.remotePort))
        return loop.makeSucceededFuture(response)
    }
}

/// `host:port`, `[v6]:port` or `host` → the host alone.
func hostWithoutPort(_ host: String) -> String {
    if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
        return String(host[host.index(after: host.startIndex)..<close])
    }
    if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
        return String(host[..<colon])
    }
    return host
}

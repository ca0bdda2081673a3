// The lab's connectivity check URL (the generate_204 convention Android uses: 204, empty body), on
// the plain origin, and the captive portal that answers it in its place under `captive-portal`.
import FoundationEssentials
import NIOCore

/// The lab's connectivity check and its captive portal.
public enum LabConnectivityCheck {
    /// The path that answers 204 with an empty body, as `connectivitycheck.gstatic.com` does.
    public static let path = "/generate_204"
    /// Where the portal sends every client under `captive-portal`.
    public static let portalPath = "/portal/login"
    /// The portal's page: what a client that follows the redirect gets instead of nothing.
    static let portalPage =
        "<!DOCTYPE html><html><head><title>Lab Wi-Fi: sign in</title></head><body><h1>Welcome to Lab Wi-Fi</h1>"
        + "<form method=\"post\" action=\"\(portalPath)\"><input name=\"room\"><button>Sign in</button></form>"
        + "</body></html>\n"
}

extension LabEndpoints {
    /// The lab's connectivity check, `http://127.0.0.1:PORT/generate_204` on the plain origin (on
    /// the address the lab listens on): an IP in the URL, so no resolver stands between a client
    /// and it. Nil when the lab has no plain origin.
    public var connectivityCheckURL: String? {
        guard let port = port(of: "plain.lab.test"), let host = URLComponents(string: httpdns)?.host else { return nil }
        return "http://\(LabAddress.authority(host)):\(port)\(LabConnectivityCheck.path)"
    }
}

/// Answers the connectivity check (whatever the Host, as a portal does), or under the fault
/// redirects it to the portal's sign-in page; every other request goes to `next`.
///
/// - Parameters:
///   - portal: whether the `captive-portal` fault is in force.
///   - ledger: where each answered request is recorded, as the plain origin's.
///   - next: the plain origin.
func connectivityCheckResponder(portal: Bool, ledger: LabLedger, next: @escaping LabResponder) -> LabResponder {
    { request, loop in
        var response: LabResponse
        switch (request.path, portal) {
        case (LabConnectivityCheck.path, false):
            response = LabResponse(status: 204, headers: [], body: [])
        case (LabConnectivityCheck.path, true):
            let location = "http://\(request.host)\(LabConnectivityCheck.portalPath)"
            response = LabResponse(
                status: 302, headers: [("Location", location), ("Content-Type", "text/html")],
                body: Array("<html><body>Redirecting to <a href=\"\(location)\">sign in</a></body></html>\n".utf8))
        case (LabConnectivityCheck.portalPath, true):
            response = LabResponse(
                status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
                body: Array(LabConnectivityCheck.portalPage.utf8))
        default:
            return next(request, loop)
        }
        ledger.record(
            LabOriginRequest(
                origin: LabRole.plain.rawValue, host: request.host, sni: nil, method: request.method,
                path: request.path, bodyLength: request.bodyLength, status: response.status, time: Date()))
        return loop.makeSucceededFuture(response)
    }
}

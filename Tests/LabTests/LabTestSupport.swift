// What the lab's tests share: a lab per test, requests through the shared transfer loop (async,
// as the HTTPDNS providers make them), and small readers for the lab's endpoints and answers.
import CurlTransport
import Foundation
import Lab

/// A request as the lab's tests write it: header lines as text, the certificate name to check
/// in the handshake (libcurl's own name check is then off). It becomes a `TransferSpec`.
struct HTTPRequest: Sendable {
    var url: String
    var method = "GET"
    var headers: [String] = []
    var body: [UInt8]? = nil
    /// Wide by default: every suite's labs start at once on two cores and can starve a 2 s
    /// deadline; tests that wait for a timeout on purpose set a short one.
    var timeout: Double = 10
    var caFile: String? = nil
    var resolve: [String] = []
    var checkCertificateName: String? = nil

    /// What the shared transfer loop performs; whole bodies are kept, up to a megabyte.
    var spec: TransferSpec {
        TransferSpec(
            url: url, method: method, headers: headers.compactMap(HeaderField.init(line:)), body: body,
            timeout: .seconds(timeout), caFile: caFile, resolve: resolve, checkName: checkCertificateName,
            verifyHost: checkCertificateName == nil, bodyLimit: .failBeyond(1 << 20))
    }
}

/// Performs a request on the process-wide transfer loop, as the HTTPDNS providers do.
///
/// - Throws: `CurlError`; `refusedCertificate` is set when the in-handshake check refused.
func fetch(_ request: HTTPRequest) async throws(CurlError) -> TransferRecord {
    try await TransferLoop.shared.fetch(request.spec)
}

/// The error a request failed with, or nil if it succeeded.
func failure(of request: HTTPRequest) async -> (any Error)? {
    do {
        _ = try await fetch(request)
        return nil
    } catch {
        return error
    }
}

extension Lab {
    /// The port serving a lab name.
    func port(_ name: String) -> Int { endpoints.port(of: name) ?? 0 }

    /// A request for a lab name with the name pinned to 127.0.0.1 below TLS (SNI and Host keep the name).
    func pinned(_ name: String, path: String = "/", address: String = "127.0.0.1") -> HTTPRequest {
        let port = port(name)
        let pinAddress = address.contains(":") ? "[\(address)]" : address
        return HTTPRequest(
            url: "https://\(name):\(port)\(path)", caFile: endpoints.ca, resolve: ["\(name):\(port):\(pinAddress)"])
    }

    /// A request to the IP URL of a lab name's port, with the name only in the Host header (no SNI).
    func direct(
        _ name: String, path: String = "/", scheme: String = "https", checkName: String? = nil
    )
        -> HTTPRequest
    {
        HTTPRequest(
            url: "\(scheme)://127.0.0.1:\(port(name))\(path)", headers: ["Host: \(name)"], caFile: endpoints.ca,
            checkCertificateName: checkName)
    }

    /// Requests the origins answered for one origin name.
    func requests(to origin: String) -> [LabOriginRequest] { originRequests().filter { $0.origin == origin } }
}

extension TransferRecord {
    /// The body parsed as a JSON object, nil when it is not one.
    var jsonObject: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }

    /// Whether the leaf certificate names this DNS name (its DER holds the name as text).
    func leafNames(_ name: String) -> Bool {
        guard let leaf = tls?.chain.first else { return false }
        let needle = Array(name.utf8)
        guard leaf.count >= needle.count else { return false }
        return (0...(leaf.count - needle.count)).contains { leaf[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

extension Error {
    /// libcurl's kind of failure, whether the in-handshake check or libcurl itself refused.
    var curlKind: CurlError.Kind? { (self as? CurlError)?.kind }

    /// What the in-handshake certificate check saw when it refused the server, else nil.
    var refusedCertificate: TLSObservation? { (self as? CurlError)?.refusedCertificate }
}

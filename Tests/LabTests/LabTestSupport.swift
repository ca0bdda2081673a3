// What the lab's tests share: a lab per test, requests through our libcurl shim off the
// cooperative pool, and small readers for the lab's endpoints and answers.
import CurlTransport
import Foundation
import Lab

/// Performs a blocking libcurl request on a thread of its own, so the test's executor stays free
/// for the lab's own async work.
func fetch(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try HTTPFetch.perform(request) })
        }
    }
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

extension HTTPResponse {
    /// The body parsed as a JSON object, nil when it is not one.
    var jsonObject: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }

    /// Whether the leaf certificate names this DNS name (its DER holds the name as text).
    func leafNames(_ name: String) -> Bool {
        guard let leaf = peerChain.first else { return false }
        let needle = Array(name.utf8)
        guard leaf.count >= needle.count else { return false }
        return (0...(leaf.count - needle.count)).contains { leaf[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

extension Error {
    /// libcurl's kind of failure, whether the in-handshake check or libcurl itself refused.
    var curlKind: CurlError.Kind? {
        if let check = self as? CertificateCheckFailure { return check.curl.kind }
        return (self as? CurlError)?.kind
    }
}

// The verdict the three certificate traps share: the app must refuse the certificate, so a
// handshake that completed and carried a request is the mistake, one refused is the pass.
import Lab

/// The remedy for accepting a certificate not valid for the name, by client kind.
let keepTheNameCheck =
    "Check the certificate against the original host, never the IP, and never turn verification off: on Apple platforms evaluate the server trust with SecPolicyCreateSSL(true, host); with libcurl pin the name below TLS with CURLOPT_RESOLVE (curl --resolve) instead of -k; in Node give the agent a lookup; in Python connect to the IP with server_hostname=host and verification on."

extension AuditTrap {
    /// The verdict of a trap whose certificate (`what`) the app must refuse.
    ///
    /// - Parameters:
    ///   - what: the certificate, as a sentence names it (`a certificate for someone-else...`).
    func refusalVerdict(_ evidence: AuditEvidence, name: String, what: String) -> AuditFinding {
        let requests = evidence.requests(at: name)
        let handshakes = evidence.handshakes(at: name)
        if let first = requests.first {
            return finding(
                .fail,
                "The app accepted \(what) and sent \(requests.count) request\(requests.count == 1 ? "" : "s") (first \(first.method) \(first.path)).",
                advice: keepTheNameCheck, evidence: evidence, names: [name])
        }
        // The server's side of a TLS 1.3 handshake completes before the client checks the
        // certificate, so the refusal is the connection closing (with an alert) before any request.
        if !handshakes.isEmpty {
            return finding(
                .pass,
                "The app refused \(what): \(handshakes.count) connection\(handshakes.count == 1 ? "" : "s") closed before any request.",
                evidence: evidence, names: [name])
        }
        return notExercised(evidence, names: [name])
    }
}

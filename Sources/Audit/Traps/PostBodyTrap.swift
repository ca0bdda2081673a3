// The POST-body trap: the app fetches a body of a known size and digest and posts it back, so a
// body lost on the way (NSURLProtocol's HTTPBodyStream) or altered (line ends stripped) is caught.
import Lab

/// A POST body arrives whole: the same length and SHA-256 as the one handed out.
public struct PostBodyTrap: AuditTrap {
    /// The body's size: past the 64 KiB a stream buffers at once.
    public static let size = 100_000

    public let id = AuditTrapID.postBody
    public let exercises = "A POST body arrives whole (its length and SHA-256) over the IP-direct path."
    public let asks =
        "GET URL/body (\(PostBodyTrap.size) bytes), then POST exactly those bytes to the URL through your IP-direct path."

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [LabExtraName(record: run.record(run.name(id)), behaviour: .servesBody(size: Self.size))]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        let name = run.name(id)
        let posts = evidence.requests(at: name).filter { $0.method != "GET" && $0.method != "HEAD" }
        guard !posts.isEmpty else { return notExercised(evidence, names: [name]) }
        let digest = LabExtraName.sha256(LabExtraName.body(size: Self.size))
        if let broken = posts.first(where: { $0.bodyLength != Self.size || $0.bodySHA256 != digest }) {
            let seen =
                broken.bodyLength != Self.size
                ? "A \(broken.method) arrived with \(broken.bodyLength) of the \(Self.size) bytes."
                : "A \(broken.method) arrived with \(Self.size) bytes whose SHA-256 is not the body's: it was altered."
            return finding(
                .fail, seen,
                advice:
                    "Send the body as bytes: a custom NSURLProtocol must read HTTPBodyStream when httpBody is nil; with curl use --data-binary (not -d, which strips line ends) or CURLOPT_POSTFIELDS with its size.",
                evidence: evidence, names: [name])
        }
        return finding(
            .pass, "Every POST arrived whole: \(Self.size) bytes, SHA-256 \(digest.prefix(16))….", evidence: evidence,
            names: [name])
    }
}

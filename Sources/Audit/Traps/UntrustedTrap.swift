// The untrusted-certificate trap: the origin's certificate is for the name but from a CA nobody
// trusts, so an app that turned verification off (or trusts everything) is caught.
import Lab

/// A certificate for the name from an untrusted CA: must be refused.
public struct UntrustedTrap: AuditTrap {
    public let id = AuditTrapID.untrusted
    public let exercises = "The certificate chain is verified against the trusted CAs (the lab CA, for the audit)."
    public let asks =
        "Request the URL once through your IP-direct path; the request must fail with a certificate error."

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [LabExtraName(record: run.record(run.name(id)), certificate: .untrusted)]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        refusalVerdict(evidence, name: run.name(id), what: "a certificate from a CA nobody trusts")
    }
}

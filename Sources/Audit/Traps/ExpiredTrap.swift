// The expired-certificate trap: the origin's certificate is for the name, from the lab CA, but
// expired a month ago, so an app that skips the validity check is caught.
import Lab

/// An expired certificate for the name: must be refused.
public struct ExpiredTrap: AuditTrap {
    public let id = AuditTrapID.expired
    public let exercises = "The certificate's validity dates are checked."
    public let asks =
        "Request the URL once through your IP-direct path; the request must fail with a certificate error."

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [LabExtraName(record: run.record(run.name(id)), certificate: .expired)]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        refusalVerdict(evidence, name: run.name(id), what: "a certificate that expired a month ago")
    }
}

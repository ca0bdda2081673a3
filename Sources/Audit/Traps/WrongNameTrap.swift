// The wrong-name trap: HTTPDNS answers an IP whose origin presents a valid certificate for another
// name, so an app that checks the certificate against the IP (or not at all) is caught.
import Lab

/// A certificate from the trusted CA for another name at the answered IP: must be refused.
public struct WrongNameTrap: AuditTrap {
    public let id = AuditTrapID.wrongName
    public let exercises =
        "The certificate is checked against the name asked for, not the IP or any name the CA vouches for."
    public let asks =
        "Request the URL once through your IP-direct path; the request must fail with a certificate error."

    func otherName(_ run: AuditNames) -> String { run.name("someone-else") }

    public func names(_ run: AuditNames) -> [LabExtraName] {
        [LabExtraName(record: run.record(run.name(id)), certificate: .otherName(otherName(run)))]
    }

    public func judge(_ evidence: AuditEvidence, _ run: AuditNames) -> AuditFinding {
        refusalVerdict(evidence, name: run.name(id), what: "a certificate for \(otherName(run)) only")
    }
}

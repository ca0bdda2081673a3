// PEM files for a server the lab does not run itself (the benchmarks' nginx origin): a CA made
// as the lab makes its own, and a certificate it signs for lab names, written to a directory.
import Crypto
import FoundationEssentials
import FoundationGaps
import SwiftASN1
import X509

/// A lab-style CA and one server certificate it signed, as PEM files.
public struct LabCertificateFiles: Sendable {
    /// The CA's certificate, to trust (`--cacert`).
    public let caFile: String
    /// The server's certificate (leaf only).
    public let certificateFile: String
    /// The server's private key (PKCS #8).
    public let keyFile: String

    /// Makes a CA name-constrained to lab names and loopback, as the lab's own, and a
    /// certificate for `dnsNames`, and writes the three files into `directory`.
    ///
    /// - Parameters:
    ///   - dnsNames: the names the server certificate is for (all under `lab.test`).
    ///   - directory: an existing directory to write `ca.pem`, `server.pem` and `server.key` into.
    /// - Throws: when a certificate cannot be made or a file cannot be written.
    public static func write(dnsNames: [String], to directory: String) throws -> LabCertificateFiles {
        let ca = try LabCertificateAuthority.make(commonName: "ipdirect bench CA", constrainedToLab: true)
        let server = try ca.issue(dnsNames: dnsNames)
        let files = LabCertificateFiles(
            caFile: directory.appendingPathComponent("ca.pem"),
            certificateFile: directory.appendingPathComponent("server.pem"),
            keyFile: directory.appendingPathComponent("server.key"))
        try ca.pem().write(toFile: files.caFile, atomically: true, encoding: .utf8)
        try server.certificate.serializeAsPEM().pemString.write(
            toFile: files.certificateFile, atomically: true, encoding: .utf8)
        try server.key.pemRepresentation.write(toFile: files.keyFile, atomically: true, encoding: .utf8)
        return files
    }
}

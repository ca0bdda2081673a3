// The lab's private CAs and the certificate of every TLS origin, made fresh at each start.
// P-256 keys keep start-up fast; the trusted CA is name-constrained to lab names and loopback.
import Crypto
import FoundationEssentials
import NIOSSL
import SwiftASN1
import X509

/// A certificate with its key, ready for a NIOSSL server context.
struct LabIdentity: Sendable {
    var certificate: Certificate
    var key: P256.Signing.PrivateKey

    /// A server context presenting only this certificate (never the CA behind it).
    func serverContext() throws -> NIOSSLContext {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let der = serializer.serializedBytes
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: der, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)))
        return try NIOSSLContext(configuration: configuration)
    }
}

/// A certificate authority of the lab: the trusted one (written to ca.pem) or the one nobody trusts.
struct LabCertificateAuthority: Sendable {
    let identity: LabIdentity

    /// The CA's certificate as PEM text.
    func pem() throws -> String { try identity.certificate.serializeAsPEM().pemString }

    /// The CA's certificate as DER.
    func der() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(identity.certificate)
        return serializer.serializedBytes
    }

    /// Makes a CA valid from an hour ago for thirty days.
    ///
    /// - Parameters:
    ///   - commonName: the CA's subject CN.
    ///   - constrainedToLab: add a critical NameConstraints extension permitting only DNS
    ///     `lab.test` (and below), the loopback ranges and `addresses`, so trusting the CA vouches
    ///     for nothing else.
    ///   - addresses: the lab's own addresses off loopback (4 or 16 bytes each), each permitted alone.
    static func make(
        commonName: String, constrainedToLab: Bool, permitting addresses: [[UInt8]] = []
    ) throws -> LabCertificateAuthority {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName("ipdirect lab")
            CommonName(commonName)
        }
        let publicKey = Certificate.PublicKey(key.publicKey)
        let now = Date()
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: publicKey)
            if constrainedToLab {
                Critical(
                    NameConstraints(
                        permittedDNSDomains: ["lab.test"],
                        permittedIPRanges: [
                            ASN1OctetString(contentBytes: [127, 0, 0, 0, 255, 0, 0, 0]),
                            ASN1OctetString(
                                contentBytes: ArraySlice(Self.ipv6Loopback + [UInt8](repeating: 255, count: 16))),
                        ]
                            + addresses.map {
                                ASN1OctetString(contentBytes: ArraySlice($0 + [UInt8](repeating: 255, count: $0.count)))
                            }))
            }
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now - 3600, notValidAfter: now + 30 * 86400, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key))
        return LabCertificateAuthority(identity: LabIdentity(certificate: certificate, key: key))
    }

    static let ipv6Loopback: [UInt8] = [UInt8](repeating: 0, count: 15) + [1]

    /// Issues a server certificate.
    ///
    /// - Parameters:
    ///   - dnsNames: subject alternative DNS names; the first is also the subject CN.
    ///   - addresses: subject alternative IP addresses, as raw bytes (4 or 16).
    ///   - validity: when the certificate is valid; the default is now, for thirty days.
    func issue(
        dnsNames: [String], addresses: [[UInt8]] = [], validity: ClosedRange<Date>? = nil
    ) throws -> LabIdentity {
        try Self.sign(
            dnsNames: dnsNames, addresses: addresses, validity: validity, issuer: identity.certificate.subject,
            issuerKey: identity.key, authorityKeyID: Self.keyIdentifier(of: identity.certificate))
    }

    /// Makes a certificate signed by its own key, for `self-signed.lab.test`.
    static func selfSigned(dnsNames: [String]) throws -> LabIdentity {
        try sign(dnsNames: dnsNames, addresses: [], validity: nil, issuer: nil, issuerKey: nil, authorityKeyID: nil)
    }

    private static func keyIdentifier(of certificate: Certificate) -> ArraySlice<UInt8>? {
        (try? certificate.extensions.subjectKeyIdentifier)??.keyIdentifier
    }

    private static func sign(
        dnsNames: [String], addresses: [[UInt8]], validity: ClosedRange<Date>?, issuer: DistinguishedName?,
        issuerKey: P256.Signing.PrivateKey?, authorityKeyID: ArraySlice<UInt8>?
    ) throws -> LabIdentity {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            OrganizationName("ipdirect lab")
            CommonName(dnsNames.first ?? "lab.test")
        }
        let now = Date()
        let validity = validity ?? (now - 3600)...(now + 30 * 86400)
        let publicKey = Certificate.PublicKey(key.publicKey)
        let alternativeNames =
            dnsNames.map { GeneralName.dnsName($0) }
            + addresses.map { GeneralName.ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectKeyIdentifier(hash: publicKey)
            if let authorityKeyID {
                AuthorityKeyIdentifier(keyIdentifier: authorityKeyID)
            }
            SubjectAlternativeNames(alternativeNames)
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, issuer: issuer ?? subject,
            subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(issuerKey ?? key))
        return LabIdentity(certificate: certificate, key: key)
    }
}

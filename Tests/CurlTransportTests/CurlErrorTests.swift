// libcurl's failures read once, where they enter: which refusal of a certificate was libcurl's own
// name check, which it says only in words, under the code every certificate refusal shares.
import CCurl
import Testing

@testable import CurlTransport

@Suite("libcurl failures")
struct CurlErrorTests {
    @Test("libcurl's own name check is told from the other certificate refusals it shares a code with")
    func nameRefusal() {
        // The words curl 7.88's OpenSSL backend writes (lib/vtls/openssl.c, verifyhost).
        for words in [
            "SSL: no alternative certificate subject name matches target host name 'a.lab.test'",
            "SSL: certificate subject name 'b.lab.test' does not match target host name 'a.lab.test'",
        ] {
            #expect(CurlError(code: CURLE_PEER_FAILED_VERIFICATION, message: words).refusesHostName, "\(words)")
        }
        #expect(
            !CurlError(
                code: CURLE_PEER_FAILED_VERIFICATION,
                message: "SSL certificate problem: unable to get local issuer certificate"
            ).refusesHostName)
        // Another code with the same words is not a certificate refusal at all.
        #expect(!CurlError(code: CURLE_RECV_ERROR, message: "certificate subject name does not match").refusesHostName)
    }
}

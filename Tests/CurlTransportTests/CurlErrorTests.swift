// libcurl's failures read once, where they enter: which refusal of a certificate was libcurl's own
// name check, which it says only in words, under the code every certificate refusal shares.
import CCurl
import Glibc
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

    @Test("a reset before the TLS handshake's first send is a reset, though libcurl keeps the next send's EPIPE")
    func resetBeforeTheClientHello() {
        // What curl 7.88 reports when the far side's RST arrives between connect and the
        // ClientHello (a listener that accepts and resets at once, a slow client).
        let early = CurlError(
            code: CURLE_SSL_CONNECT_ERROR, message: "Send failure: Connection reset by peer", osErrno: Int(EPIPE))
        #expect(early.connection == .reset)
        #expect(
            CurlError(code: CURLE_SEND_ERROR, message: "Send failure: Broken pipe", osErrno: Int(EPIPE)).connection
                == .reset)
        // A handshake that failed on its own words, with no broken connection, is not a reset.
        #expect(
            CurlError(code: CURLE_SSL_CONNECT_ERROR, message: "OpenSSL SSL_connect: SSL_ERROR_SYSCALL").connection
                == nil)
    }
}

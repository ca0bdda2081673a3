// The lab's origins as stock clients meet them, through our libcurl shim: SNI and default
// certificates, Host routing, bad certificates that fail for the reason their name says.
import CurlTransport
import Foundation
import Lab
import Testing

@Suite("Lab origins")
struct LabOriginTests {
    @Test("pinning sni-a below TLS gets sni-a's certificate and page")
    func sniPinnedGetsItsOwnCertificate() async throws {
        try await withLab { lab in
            let port = lab.port("sni-a.lab.test")
            let response = try await fetch(lab.pinned("sni-a.lab.test"))
            #expect(response.status == 200)
            #expect(response.text == "origin=sni ; host=sni-a.lab.test:\(port) ; sni=sni-a.lab.test\n")
            #expect(response.leafNames("sni-a.lab.test"))
            #expect(!response.leafNames("default.lab.test"))

            let other = try await fetch(lab.pinned("sni-b.lab.test"))
            #expect(other.text == "origin=sni ; host=sni-b.lab.test:\(port) ; sni=sni-b.lab.test\n")
            #expect(other.leafNames("sni-b.lab.test"))
        }
    }

    @Test("the IP URL with Host sni-a and no SNI gets the default certificate")
    func noSNIGetsDefaultCertificate() async throws {
        try await withLab { lab in
            let response = try await fetch(lab.direct("sni-a.lab.test", checkName: "default.lab.test"))
            #expect(response.status == 200)
            #expect(response.text == "origin=sni ; host=sni-a.lab.test ; sni=none\n")
            #expect(response.leafNames("default.lab.test"))

            let before = lab.requests(to: "sni").count
            let error = await failure(of: lab.direct("sni-a.lab.test", checkName: "sni-a.lab.test"))
            let check = try #require(error?.refusedCertificate)
            #expect(check.verifyError == 62)  // X509_V_ERR_HOSTNAME_MISMATCH
            #expect(check.verifyMessage.contains("hostname mismatch"))
            #expect(lab.requests(to: "sni").count == before, "no request may reach an origin whose check failed")
        }
    }

    @Test("single serves its certificate with and without SNI")
    func singleWithAndWithoutSNI() async throws {
        try await withLab { lab in
            let direct = try await fetch(lab.direct("single.lab.test", checkName: "single.lab.test"))
            #expect(direct.status == 200)
            #expect(direct.text == "origin=single ; host=single.lab.test ; sni=none\n")
            let pinned = try await fetch(lab.pinned("single.lab.test"))
            #expect(pinned.text.hasSuffix("sni=single.lab.test\n"))
        }
    }

    @Test("plain answers 200 only to its own Host, 421 to any other")
    func plainRoutesByHost() async throws {
        try await withLab { lab in
            let right = try await fetch(lab.direct("plain.lab.test", scheme: "http"))
            #expect(right.status == 200)
            #expect(right.text == "origin=plain ; host=plain.lab.test ; sni=none\n")

            let port = lab.port("plain.lab.test")
            let withPort = try await fetch(
                HTTPRequest(url: "http://127.0.0.1:\(port)/", headers: ["Host: plain.lab.test:\(port)"]))
            #expect(withPort.status == 200)

            let wrong = try await fetch(lab.direct("plain.lab.test", scheme: "http").withHost("sni-a.lab.test"))
            #expect(wrong.status == 421)
            #expect(lab.requests(to: "plain").map(\.status) == [200, 200, 421])
        }
    }

    @Test(
        "each bad-certificate origin fails verification for the reason its name says",
        arguments: [
            ("wrong-name.lab.test", "wrong-name", 62),  // hostname mismatch
            ("expired.lab.test", "expired", 10),  // certificate has expired
            ("self-signed.lab.test", "self-signed", 18),  // self-signed certificate
            ("untrusted.lab.test", "untrusted", 20),  // unable to get local issuer certificate
        ])
    func badCertificates(name: String, origin: String, verifyError: Int) async throws {
        try await withLab { lab in
            var inHandshake = lab.pinned(name)
            inHandshake.checkCertificateName = name
            let error = await failure(of: inHandshake)
            let check = try #require(error?.refusedCertificate)
            #expect(check.verifyError == verifyError, "\(check.verifyMessage)")

            let byCurl = try #require(await failure(of: lab.pinned(name)))
            #expect(byCurl.curlKind == .certificate, "\(byCurl)")

            #expect(lab.requests(to: origin).isEmpty, "the origin must log no request")
        }
    }

    @Test("/echo reports the request body length on HTTPS and plain origins")
    func echoCountsBody() async throws {
        try await withLab { lab in
            let body = [UInt8](repeating: 0x61, count: 100_000)
            var post = lab.pinned("sni-a.lab.test", path: "/echo")
            post.method = "POST"
            post.body = body
            let response = try await fetch(post)
            #expect(response.text.contains("body-bytes=100000"))
            #expect(lab.requests(to: "sni").last?.bodyLength == 100_000)

            // A client that asks for 100-continue first (libcurl does for large bodies) must be told to go on.
            var large = lab.pinned("single.lab.test", path: "/echo")
            large.method = "POST"
            large.headers.append("Expect: 100-continue")
            large.body = [UInt8](repeating: 0x62, count: 3 << 20)
            large.timeout = 10
            #expect(try await fetch(large).text.contains("body-bytes=\(3 << 20)"))

            var plain = lab.direct("plain.lab.test", path: "/echo", scheme: "http")
            plain.method = "PUT"
            plain.body = Array("hello".utf8)
            #expect(try await fetch(plain).text.contains("method=PUT ; body-bytes=5"))
        }
    }

    @Test("redirect answers 302 to sni-b with its port")
    func redirectToSNIB() async throws {
        try await withLab { lab in
            let response = try await fetch(lab.pinned("redirect.lab.test", path: "/next?x=1"))
            #expect(response.status == 302)
            #expect(response.header("Location") == "https://sni-b.lab.test:\(lab.port("sni-b.lab.test"))/next?x=1")
        }
    }

    @Test("dual answers on 127.0.0.1 and ::1 at the same port")
    func dualStack() async throws {
        try await withLab { lab in
            let v4 = try await fetch(lab.pinned("dual.lab.test"))
            let v6 = try await fetch(lab.pinned("dual.lab.test", address: "::1"))
            #expect(v4.remoteIP == "127.0.0.1")
            #expect(v6.remoteIP == "::1")
            #expect(v6.text.hasPrefix("origin=dual ;"))
        }
    }

    @Test("slow holds its first byte past a short client timeout")
    func slowOrigin() async throws {
        try await withLab(LabOptions(slowOriginDelay: 3)) { lab in
            var request = lab.pinned("slow.lab.test")
            request.timeout = 0.5
            let error = try #require(await failure(of: request) as? CurlError)
            #expect(error.kind == .timeout)
        }
    }

}

extension HTTPRequest {
    /// The same request with another Host header.
    func withHost(_ host: String) -> HTTPRequest {
        var copy = self
        copy.headers = copy.headers.filter { !$0.lowercased().hasPrefix("host:") } + ["Host: \(host)"]
        return copy
    }
}

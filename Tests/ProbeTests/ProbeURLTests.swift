// URL handling a user relies on: only the authority's host changes, IPv6 is bracketed, the
// port and query survive, Host carries a non-default port, and a bare name means https.
import NameResolution
import Probe
import Testing

@Suite("URL rewriting")
struct ProbeURLTests {
    @Test("the host in the path and query is left alone")
    func hostInPathAndQueryKept() throws {
        let url = try ProbeURL.parse(
            "https://api.example.com:8443/api.example.com/x?next=https://api.example.com/y#top")
        #expect(
            try url.replacingHost(with: "10.0.0.7")
                == "https://10.0.0.7:8443/api.example.com/x?next=https://api.example.com/y")
        #expect(url.hostHeader == "api.example.com:8443")
        #expect(url.resolvePin(to: "10.0.0.7") == "api.example.com:8443:10.0.0.7")
    }

    @Test("an IPv6 address goes in brackets, in the URL and in the pin")
    func ipv6Bracketed() throws {
        let url = try ProbeURL.parse("http://dual.lab.test/p?q=1")
        #expect(try url.replacingHost(with: "::1") == "http://[::1]/p?q=1")
        #expect(url.resolvePin(to: "::1") == "dual.lab.test:80:[::1]")
        #expect(url.hostHeader == "dual.lab.test")
    }

    @Test("Host carries the port only when it is not the scheme's default")
    func hostHeaderPort() throws {
        #expect(try ProbeURL.parse("https://a.test:443/").hostHeader == "a.test")
        #expect(try ProbeURL.parse("http://a.test:80/").hostHeader == "a.test")
        #expect(try ProbeURL.parse("http://a.test:8080/").hostHeader == "a.test:8080")
    }

    @Test("a URL without a scheme means https")
    func bareNameIsHTTPS() throws {
        let url = try ProbeURL.parse("sni-a.lab.test/path?x=1")
        #expect(url.scheme == "https")
        #expect(url.port == 443)
        #expect(url.text == "https://sni-a.lab.test/path?x=1")
    }

    @Test("an internationalised name becomes its ASCII form")
    func idnToASCII() throws {
        let url = try ProbeURL.parse("https://bücher.example/")
        #expect(url.host == "xn--bcher-kva.example")
        #expect(url.text == "https://xn--bcher-kva.example/")
        #expect(try url.replacingHost(with: "127.0.0.1") == "https://127.0.0.1/")
        #expect(try ProbeURL.parse("http://MÜNCHEN.de:8080/ü").hostHeader == "xn--mnchen-3ya.de:8080")
        #expect(try ProbeURL.parse("https://例え.テスト/").host == "xn--r8jz45g.xn--zckzah")
    }

    @Test("one trailing dot is the same name: host, Host, pin and URL all go without it")
    func trailingDot() throws {
        let url = try ProbeURL.parse("https://Sni-A.lab.test.:8443/x")
        #expect(url.host == "sni-a.lab.test")
        #expect(url.text == "https://Sni-A.lab.test:8443/x")
        #expect(url.hostHeader == "sni-a.lab.test:8443")
        #expect(url.resolvePin(to: "127.0.0.1") == "sni-a.lab.test:8443:127.0.0.1")
        #expect(throws: ProbeURLError.self) { try ProbeURL.parse("https://./") }
    }

    @Test("a label too long for DNS once encoded is refused before the work, in words")
    func longPunycodeLabel() throws {
        let long = String(repeating: "ü", count: 5_000)
        do {
            _ = try ProbeURL.parse("https://\(long).example/")
            Issue.record("a 5,000-character label was accepted")
        } catch {
            #expect(error.reason.contains("longer than 63 octets"), "\(error)")
        }
        // 59 code points can still fit; their encoding is measured, not guessed.
        #expect(throws: ProbeURLError.self) {
            try ProbeURL.parse("https://\(String(repeating: "ü", count: 59)).example/")
        }
        #expect(try ProbeURL.parse("https://\(String(repeating: "a", count: 50))ü.example/").host.hasPrefix("xn--"))
    }

    @Test("something that is not an address cannot be put in the URL in place of the host")
    func rewriteRefusesNonAddresses() throws {
        // The host is replaced by an `IPAddress` only, and these never become one.
        for bad in ["a.test", "1.2.3.4\u{0}x", "", "::1]/evil"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }

    @Test("unusable URLs are refused with a reason", arguments: ["ftp://x.test/", "https://", "http://[::1/", ""])
    func refused(input: String) {
        #expect(throws: ProbeURLError.self) { try ProbeURL.parse(input) }
    }

    @Test("a relative Location resolves against the hop's URL")
    func relativeLocation() throws {
        let url = try ProbeURL.parse("https://a.test:8443/one/two?x=1")
        #expect(try url.resolving("/three").text == "https://a.test:8443/three")
        #expect(try url.resolving("https://b.test/four").host == "b.test")
    }
}

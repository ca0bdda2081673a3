// The redirect rules of one attempt as a value, without a network: the limit, loops, the method
// and body on 301/302/303, credentials across origins, downgrades, link-local addresses.
import CurlTransport
import Foundation
import NameResolution
import Testing

@testable import Probe

/// A URL the tests know to be well formed.
private func url(_ text: String) -> ProbeURL { try! ProbeURL.parse(text) }

/// The request a step follows to; nil when it does not follow.
private func followed(_ step: RedirectChain.Step) -> RedirectChain.Request? {
    if case .follow(let request, _) = step { request } else { nil }
}

/// The notes a step hands to the next hop's trace.
private func notes(_ step: RedirectChain.Step) -> [String] {
    if case .follow(_, let notes) = step { notes } else { [] }
}

@Suite("Redirect chain")
struct RedirectChainTests {
    @Test("a response that is not a redirect, or a redirect without Location, ends the chain as it is")
    func notARedirect() {
        var chain = RedirectChain(start: url("https://a.test/"), options: ProbeOptions())
        #expect(chain.next(status: 200, location: "https://b.test/") == .done)
        #expect(chain.next(status: 302, location: nil) == .done)
        #expect(chain.next(status: nil, location: "https://b.test/") == .done)
        #expect(chain.request.url == url("https://a.test/"))
    }

    @Test("a relative Location is followed from the URL that answered")
    func relativeLocation() {
        var chain = RedirectChain(start: url("https://a.test/x/y"), options: ProbeOptions())
        #expect(followed(chain.next(status: 302, location: "../z"))?.url == url("https://a.test/z"))
        #expect(chain.request.url == url("https://a.test/z"))
    }

    @Test("the redirect after the limit stops the attempt too-many-redirects")
    func limit() {
        var chain = RedirectChain(start: url("https://a.test/0"), options: ProbeOptions(maxRedirects: 2))
        #expect(followed(chain.next(status: 302, location: "/1")) != nil)
        #expect(followed(chain.next(status: 302, location: "/2")) != nil)
        #expect(
            chain.next(status: 302, location: "/3")
                == .stop(.tooManyRedirects, "stopped after 2 redirects: the chain is longer than the limit"))
    }

    @Test("a request made again in the same chain is a loop, named in the error")
    func loop() {
        var chain = RedirectChain(start: url("https://a.test/one"), options: ProbeOptions())
        #expect(followed(chain.next(status: 302, location: "/two")) != nil)
        #expect(
            chain.next(status: 302, location: "/one")
                == .stop(.tooManyRedirects, "redirect loop: https://a.test/one was already requested in this chain"))
    }

    @Test("the same URL with another method is not a loop: a POST redirected by 307 to itself, then 303")
    func loopKeysOnMethod() {
        var chain = RedirectChain(
            start: url("https://a.test/form"), options: ProbeOptions(method: .post, body: Array("x=1".utf8)))
        #expect(followed(chain.next(status: 307, location: "/next"))?.method == .post)
        let back = followed(chain.next(status: 303, location: "/form"))
        #expect(back?.method == .get)
        #expect(back?.body == nil)
    }

    @Test("301, 302 and 303 turn a POST into a GET without its body; 307 and 308 keep both")
    func methodAndBody() {
        let body = Array("a=1".utf8)
        for status in [301, 302, 303] {
            var chain = RedirectChain(
                start: url("https://a.test/"), options: ProbeOptions(method: .post, body: body))
            let next = followed(chain.next(status: status, location: "/after"))
            #expect(next?.method == .get, "\(status)")
            #expect(next?.body == nil, "\(status)")
        }
        for status in [307, 308] {
            var chain = RedirectChain(
                start: url("https://a.test/"), options: ProbeOptions(method: .post, body: body))
            let next = followed(chain.next(status: status, location: "/after"))
            #expect(next?.method == .post, "\(status)")
            #expect(next?.body == body, "\(status)")
        }
    }

    @Test("HEAD stays HEAD on a 303")
    func headStaysHead() {
        var chain = RedirectChain(start: url("https://a.test/"), options: ProbeOptions(method: .head))
        #expect(followed(chain.next(status: 303, location: "/after"))?.method == .head)
    }

    @Test("credential headers are dropped when the redirect leaves the origin, with a note; others stay")
    func credentialsAcrossOrigins() {
        let headers = [
            HeaderField(name: "Authorization", value: "Bearer t"), HeaderField(name: "Cookie", value: "s=1"),
            HeaderField(name: "X-Trace", value: "7"),
        ]
        var chain = RedirectChain(start: url("https://a.test/"), options: ProbeOptions(headers: headers))
        let step = chain.next(status: 302, location: "https://b.test/")
        #expect(followed(step)?.headers == [HeaderField(name: "X-Trace", value: "7")])
        #expect(
            notes(step) == [
                "ipdirect: dropped Authorization, Cookie: the redirect leaves https://a.test for https://b.test "
                    + "(--location-trusted keeps them)"
            ])
    }

    @Test("another port or scheme is another origin too; the same origin keeps the credentials")
    func originIsSchemeHostAndPort() {
        let headers = [HeaderField(name: "Authorization", value: "Bearer t")]
        var samePlace = RedirectChain(start: url("http://a.test/"), options: ProbeOptions(headers: headers))
        #expect(followed(samePlace.next(status: 302, location: "/elsewhere"))?.headers == headers)
        var otherPort = RedirectChain(start: url("http://a.test/"), options: ProbeOptions(headers: headers))
        #expect(followed(otherPort.next(status: 302, location: "http://a.test:8080/"))?.headers == [])
        var otherScheme = RedirectChain(start: url("http://a.test/"), options: ProbeOptions(headers: headers))
        #expect(followed(otherScheme.next(status: 302, location: "https://a.test/"))?.headers == [])
    }

    @Test("--location-trusted keeps the credentials across origins")
    func locationTrusted() {
        let headers = [HeaderField(name: "Authorization", value: "Bearer t")]
        var options = ProbeOptions(headers: headers)
        options.locationTrusted = true
        var chain = RedirectChain(start: url("https://a.test/"), options: options)
        let step = chain.next(status: 302, location: "https://b.test/")
        #expect(followed(step)?.headers == headers)
        #expect(notes(step).isEmpty)
    }

    @Test("a body kept by 307 is not carried to another origin, with a note")
    func bodyStaysWithItsOrigin() {
        var chain = RedirectChain(
            start: url("https://a.test/"), options: ProbeOptions(method: .post, body: Array("a=1".utf8)))
        let step = chain.next(status: 307, location: "https://b.test/")
        #expect(followed(step)?.method == .post)
        #expect(followed(step)?.body == nil)
        #expect(notes(step) == ["ipdirect: the request body is not carried to another origin (b.test)"])
    }

    @Test("https to plain http is refused unless --allow-downgrade")
    func downgrade() {
        var chain = RedirectChain(start: url("https://a.test/"), options: ProbeOptions())
        #expect(
            chain.next(status: 302, location: "http://a.test/")
                == .stop(
                    .redirectRefused,
                    "refused to follow a redirect from https to plain http (http://a.test/); --allow-downgrade follows it"
                ))
        var options = ProbeOptions()
        options.allowDowngrade = true
        var allowed = RedirectChain(start: url("https://a.test/"), options: options)
        #expect(followed(allowed.next(status: 302, location: "http://a.test/"))?.url == url("http://a.test/"))
    }

    @Test("a Location that is no usable URL stops the chain with the reason, the hop's outcome kept")
    func unusableLocation() {
        var chain = RedirectChain(start: url("https://a.test/"), options: ProbeOptions())
        guard case .stop(let outcome, let error) = chain.next(status: 302, location: "ftp://a.test/file") else {
            Issue.record("an ftp Location was followed")
            return
        }
        #expect(outcome == nil)
        #expect(error.sentence.hasPrefix("the redirect goes nowhere usable: "))
    }

    @Test("a secret in the next URL is redacted in what the chain says, unless --no-redact")
    func shownRedacted() {
        var chain = RedirectChain(start: url("https://a.test/"), options: ProbeOptions())
        guard case .stop(_, let error) = chain.next(status: 302, location: "http://a.test/?token=hunter2") else {
            Issue.record("the downgrade was followed")
            return
        }
        #expect(!error.sentence.contains("hunter2"))
    }

    @Test("an address where metadata services answer: noted under the CLI's policy, refused under the agent's")
    func linkLocal() {
        let next = url("http://metadata.test/latest")
        let noting = RedirectChain(start: url("http://a.test/"), options: ProbeOptions())
        #expect(noting.judge(connectingTo: ["10.0.0.1"], for: next) == .connect)
        #expect(
            noting.judge(connectingTo: ["169.254.169.254"], for: next)
                == .connectNoting(
                    "a redirect led to http://metadata.test/latest, which connects to 169.254.169.254 (metadata.test), "
                        + "a link-local address where cloud metadata services answer (followed; the agent refuses it)"))
        var options = ProbeOptions()
        options.linkLocal = .refuse
        let refusing = RedirectChain(start: url("http://a.test/"), options: options)
        #expect(
            refusing.judge(connectingTo: ["10.0.0.1", "fe80::1"], for: url("http://[fe80::1]/"))
                == .refuse(
                    .reported(
                        "refused to follow a redirect to http://[fe80::1]/: it connects to fe80::1, a link-local "
                            + "address where cloud metadata services answer; this prober does not go there")))
    }

    @Test("a destination policy: a refused name or address stops the redirect with the policy's reason")
    func destinations() {
        struct OffLimits: DestinationPolicy {
            func refusal(host: String) -> String? { host == "evil.test" ? "\(host) is off limits" : nil }
            func refusal(address: IPAddress) -> String? {
                address.text.hasPrefix("10.") ? "\(address) is off limits" : nil
            }
        }
        var options = ProbeOptions()
        options.linkLocal = .refuse
        let chain = RedirectChain(start: url("http://a.test/"), options: options)
        #expect(chain.refusal(of: url("http://b.test/"), by: OffLimits()) == nil)
        #expect(
            chain.refusal(of: url("http://evil.test/x"), by: OffLimits())?.sentence
                == "refused to follow a redirect to http://evil.test/x: evil.test is off limits")
        #expect(chain.judge(connectingTo: ["127.0.0.1"], for: url("http://b.test/"), by: OffLimits()) == .connect)
        // Every address the hop may connect to is asked, not only the first.
        #expect(
            chain.judge(connectingTo: ["127.0.0.1", "10.0.0.1"], for: url("http://b.test/"), by: OffLimits())
                == .refuse(.reported("refused to follow a redirect to http://b.test/: 10.0.0.1 is off limits")))
        #expect(chain.judge(connectingTo: ["10.0.0.1"], for: url("http://b.test/")) == .connect)
    }
}

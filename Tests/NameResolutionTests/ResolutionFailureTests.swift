// Failures as values: the engine decides by their case, the sentence is written in one place,
// and the `error` a script reads in JSON is the same sentence as before failures had a type.
import Foundation
import Testing

@testable import NameResolution

@Suite("Resolution failures")
struct ResolutionFailureTests {
    @Test("a failure is written as its sentence under error, and reads back as the same failure")
    func jsonIsTheSentence() throws {
        let answer = SystemAnswer(error: .systemDNS(.noSuchName(host: "nx.lab.test")))
        let json = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
        #expect(json.contains(#""error":"system DNS: no such name nx.lab.test""#), "\(json)")
        let decoded = try JSONDecoder().decode(SystemAnswer.self, from: Data(json.utf8))
        #expect(decoded.error == answer.error)
        #expect(answer.error?.kind == "system-dns")
        #expect(decoded.error?.kind == "reported")
    }

    @Test("a sentence is led by its resolver's name only when it does not already start with it")
    func ledByResolver() {
        let server = DNSServer(address: "127.0.0.1", port: 5353)
        let noSuchName = ResolutionFailure.systemDNS(.noSuchName(host: "x.test"))
        #expect(noSuchName.sentence(from: "system DNS") == "system DNS: no such name x.test")
        #expect(
            ResolutionFailure.dnsServer(server, .noSuchName(host: "x.test")).sentence(from: "system DNS")
                == "system DNS: DNS server 127.0.0.1:5353: no such name x.test (NXDOMAIN): the name does not exist")
        #expect(
            ResolutionFailure.httpdns(.http(status: 403, code: nil)).sentence(from: "HTTPDNS")
                == "HTTPDNS answered HTTP 403")
        #expect(
            ResolutionFailure.httpdns(.timeout(seconds: 2)).sentence(from: "HTTPDNS") == "HTTPDNS: timed out after 2 s")
    }
}

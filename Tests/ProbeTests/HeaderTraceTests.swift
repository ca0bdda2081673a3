// Headers as a trace records them: as libcurl sent and received them on the transfer loop, whole,
// secret ones hidden in the header lists and in curl's log (the line parsing: CurlTransportTests).
import CurlTransport
import Foundation
import Lab
import Probe
import Testing

@Suite("Header traces")
struct HeaderTraceTests {
    @Test("sent and received headers are recorded whole, and a secret one is hidden everywhere")
    func headersRecordedAndSecretsHidden() async throws {
        try await withLab { lab in
            var options = ProbeOptions(scenarios: [.directSNI])
            options.headers = [
                HeaderField(name: "Authorization", value: "Bearer tok-7f3a9c"),
                HeaderField(name: "X-Trace", value: "a:b:c"),
            ]
            let reports = await lab.engine(options).probeAll([lab.url("single.lab.test", "/echo")])
            let attempt = try #require(reports.first?.attempts(.directSNI).first)
            #expect(attempt.outcome == .ok)
            let hop = try #require(attempt.hops.first)
            #expect(hop.requestHeaders.contains(HeaderField(name: "X-Trace", value: "a:b:c")))
            #expect(hop.requestHeaders.contains(HeaderField(name: "Authorization", value: Redaction.marker)))
            #expect(hop.requestHeaders.contains { $0.name == "Host" && $0.value.hasPrefix("single.lab.test") })
            #expect(hop.responseHeaders.contains { $0.name.lowercased() == "content-length" && !$0.value.isEmpty })
            #expect(hop.log.contains { $0.kind == .headerOut && $0.text == "Authorization: [redacted]" })
            #expect(hop.log.contains { $0.kind == .headerOut && $0.text == "X-Trace: a:b:c" })
            #expect(hop.log.contains { $0.kind == .headerIn && $0.text.hasPrefix("HTTP/1.1 200") })
            let outputs = [
                try exportedText(reports, .jsonLines),
                try exportedText(reports, .har),
            ]
            for output in outputs { #expect(!output.contains("tok-7f3a9c")) }
        }
    }
}

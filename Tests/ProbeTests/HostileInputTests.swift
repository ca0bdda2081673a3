// The lab's hostile origin against the real engine: a query pair without a name, escape
// sequences in the reason phrase and headers, a password in the URL. Nothing crashes, a server's
// words are escaped where they enter (table, JSON and HAR alike), secrets stay hidden.
import CurlTransport
import Foundation
import Lab
import NameResolution
import Probe
import Testing

@Suite("Hostile input")
struct HostileInputTests {
    /// Whether a terminal would act on some of the text (C0, DEL, C1, format characters).
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            let v = scalar.value
            return v < 0x20 && scalar != "\n" || (0x7F...0x9F).contains(v)
                || scalar.properties.generalCategory == .format
        }
    }

    @Test("a query pair without a name, typed or in a Location, is probed and exported")
    func emptyQueryName() async throws {
        try await withLab { lab in
            let reports = await lab.engine(ProbeOptions(scenarios: [.directSNI])).probeAll([
                lab.url("hostile.lab.test", "/?="), lab.url("hostile.lab.test", LabHostilePath.emptyQueryName),
            ])
            #expect(reports.count == 2)
            for report in reports { #expect(report.outcome(.directSNI) == .ok, "\(report.url)") }
            let followed = try #require(reports[1].attempts(.directSNI).first)
            #expect(followed.hops.count == 2)
            #expect(followed.hops.last?.url.hasSuffix("/?=") == true)
            let har = try #require(try JSONSerialization.jsonObject(with: exported(reports, .har)) as? [String: Any])
            let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
            let query = try #require(
                (entries.last?["request"] as? [String: Any])?["queryString"] as? [[String: String]])
            #expect(query == [["name": "", "value": ""]])
            #expect(!ProbeExport.table(reports).isEmpty)
            #expect(try ProbeURL.parse("https://example.com/?=&=x&&a").queryItems.count == 3)
        }
    }

    /// `LabHostilePath.hostileHeader` as it is kept: every control and format character escaped.
    static let keptHeader = "\\x1b[31mred\\u009b1m\\u202etxt\\u200b"

    @Test("escape sequences from a server: escaped where they enter, so the table, JSON and HAR hold escapes")
    func escapesFromTheServer() async throws {
        try await withLab { lab in
            let reports = await lab.engine(ProbeOptions(scenarios: [.directSNI])).probeAll([
                lab.url("hostile.lab.test", LabHostilePath.escapes)
            ])
            let attempt = try #require(reports.first?.attempts(.directSNI).first)
            #expect(attempt.outcome == .ok)
            let hop = try #require(attempt.hops.first)
            #expect(hop.responseHeaders.contains { $0.name == "X-Hostile" && $0.value == Self.keptHeader })
            #expect(hop.log.contains { $0.text.contains("\\x1b]0;pwned\\x07") }, "curl's log carries the reason phrase")
            #expect(!hop.log.contains { Self.hasControl($0.text) })

            // The table quotes what it shows from outside; a server's text in an error
            // sentence, a verdict or a note reaches it escaped.
            var hostile = reports[0]
            hostile.attempts[0].error = .reported("server said: " + LabHostilePath.hostileReason)
            hostile.verdict.summary = "no direct technique works: " + LabHostilePath.hostileHeader
            let table = ProbeExport.table([hostile])
            #expect(!Self.hasControl(table), "\(table)")
            #expect(table.contains("\\x1b]0;pwned\\x07"))
            #expect(table.contains("\\u202e"))

            // JSON and HAR: the header as kept, decoded back exactly; no control left to escape.
            let har = try #require(try JSONSerialization.jsonObject(with: exported(reports, .har)) as? [String: Any])
            let entry = try #require(((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
            let headers = try #require((entry["response"] as? [String: Any])?["headers"] as? [[String: String]])
            #expect(headers.contains { $0["name"] == "X-Hostile" && $0["value"] == Self.keptHeader })
            let jsonText = try exportedText(reports, .jsonLines)
            #expect(!jsonText.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
            #expect(jsonText.contains("\\\\x1b[31mred"), "the header is kept escaped in JSON Lines")
        }
    }

    /// Unicode's line breaks a line-splitting reader cuts at (Python's `splitlines`), besides `\n`.
    static let lineBreakers: Set<Unicode.Scalar> = ["\u{85}", "\u{2028}", "\u{2029}", "\r", "\u{0B}", "\u{0C}"]

    /// Whether exported text holds a raw line break, C1 control or DEL.
    static func hasRawBreakOrControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { lineBreakers.contains($0) || (0x7F...0x9F).contains($0.value) }
    }

    @Test("line breaks and C1 from a server's body and headers are escaped in JSON, JSON Lines and HAR")
    func lineBreaksFromTheServer() async throws {
        try await withLab { lab in
            let reports = await lab.engine(ProbeOptions(scenarios: [.directSNI])).probeAll([
                lab.url("hostile.lab.test", LabHostilePath.lineBreaks)
            ])
            let hop = try #require(reports.first?.attempts(.directSNI).first?.hops.first)
            #expect(hop.bodyPreview.contains(LabHostilePath.lineBreaksText), "the body is kept as sent")

            // JSON Lines (probe --jsonl, agent --jsonl): one record a line, however a reader splits.
            for text in [
                try exportedText(reports, .jsonLines),
                String(decoding: ReportWriter.jsonLine(reports[0]), as: UTF8.self),
            ] {
                #expect(!Self.hasRawBreakOrControl(text))
                let pieces = text.unicodeScalars.split { $0 == "\n" || Self.lineBreakers.contains($0) }
                #expect(pieces.count == 1)
                for piece in pieces {
                    let record = try JSONSerialization.jsonObject(with: Data(String(piece).utf8)) as? [String: Any]
                    #expect(record != nil)
                }
                let record = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                let attempt = (record?["attempts"] as? [[String: Any]])?.first
                let decoded = (attempt?["hops"] as? [[String: Any]])?.first?["bodyPreview"] as? String
                #expect(decoded == hop.bodyPreview, "decoded back exactly")
            }

            // JSON documents and HAR: no raw break, and the body decodes back exactly.
            for format in [ReportWriter.Format.jsonArray, .har] {
                let text = try exportedText(reports, format)
                #expect(!Self.hasRawBreakOrControl(text), "\(format)")
                #expect(text.contains("\\u0085") && text.contains("\\u2028") && text.contains("\\u2029"))
                #expect(text.contains("\\u009b") && text.contains("\\u007f"))
            }
            let har = try #require(try JSONSerialization.jsonObject(with: exported(reports, .har)) as? [String: Any])
            let entry = try #require(((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
            let content = try #require((entry["response"] as? [String: Any])?["content"] as? [String: Any])
            #expect(content["text"] as? String == hop.bodyPreview)

            // Other reports written in the same conventions (the doctor's), compact and pretty.
            for pretty in [false, true] {
                let document = try #require(
                    ProbeExport.document(["said": LabHostilePath.lineBreaksText], pretty: pretty))
                #expect(!Self.hasRawBreakOrControl(String(decoding: document, as: UTF8.self)))
                let back = try JSONDecoder().decode([String: String].self, from: document)
                #expect(back["said"] == LabHostilePath.lineBreaksText)
            }
        }
    }

    @Test("an IP-literal host is checked against the certificate's IP addresses, not called a mismatch")
    func ipLiteralHost() async throws {
        try await withLab { lab in
            // The HTTPDNS service's certificate names 127.0.0.1 and ::1 as IP addresses.
            let url = lab.endpoints.httpdnsTLS + "/"
            let engine = lab.engine(ProbeOptions(scenarios: [.systemDNS]), system: ["127.0.0.1": ["127.0.0.1"]])
            let attempt = try #require(await engine.probeAll([url]).first?.attempts(.systemDNS).first)
            #expect(attempt.checkedName == "127.0.0.1")
            #expect(attempt.outcome.reachedServer, "\(attempt.outcome): \(attempt.error ?? "")")
            #expect(attempt.certificate?.verifyResult == 0, "\(String(describing: attempt.certificate))")
        }
    }

    @Test("a trailing dot is the same name: resolved, pinned, sent as SNI and checked without it")
    func trailingDotHost() async throws {
        try await withLab { lab in
            let url = lab.url("sni-a.lab.test", "/echo").replacingOccurrences(
                of: "sni-a.lab.test", with: "sni-a.lab.test.")
            #expect(url.contains("sni-a.lab.test.:"))
            let reports = await lab.engine(ProbeOptions(scenarios: [.directSNI])).probeAll([url])
            let attempt = try #require(reports.first?.attempts(.directSNI).first)
            #expect(attempt.outcome == .ok, "\(attempt.outcome): \(attempt.error ?? "")")
            #expect(attempt.sni == "sni-a.lab.test" && attempt.checkedName == "sni-a.lab.test")
            #expect(lab.requests(to: "sni").last?.host.hasPrefix("sni-a.lab.test:") == true)
        }
    }

    @Test("a password in the URL is redacted in JSON, JSON Lines, HAR and the table")
    func passwordInURL() async throws {
        try await withLab { lab in
            let base = lab.url("hostile.lab.test", "/echo")
            let url = base.replacingOccurrences(of: "https://", with: "https://alice:hunter2pw@")
            let reports = await lab.engine(ProbeOptions(scenarios: [.directSNI])).probeAll([url])
            let attempt = try #require(reports.first?.attempts(.directSNI).first)
            #expect(attempt.outcome == .ok)
            let outputs = [
                try exportedText(reports, .jsonArray),
                try exportedText(reports, .jsonLines),
                try exportedText(reports, .har), ProbeExport.table(reports),
            ]
            for output in outputs {
                #expect(!output.contains("hunter2pw"))
                #expect(output.contains("alice:[redacted]@"))
            }
            #expect(
                Redaction.url("https://u:p%40ss@h.test:8443/x?token=t&q=1")
                    == "https://u:[redacted]@h.test:8443/x?token=[redacted]&q=1")
            #expect(Redaction.url("https://h.test/a@b?x=1") == "https://h.test/a@b?x=1")
            #expect(Redaction.url("https://h.test/?=&a") == "https://h.test/?=&a")
        }
    }

    @Test("a redirect loop is too-many-redirects, never a technique that works")
    func redirectLoop() async throws {
        try await withLab { lab in
            let report = try #require(
                await lab.engine(ProbeOptions(scenarios: [.systemDNS, .directSNI])).probeAll([
                    lab.url("hostile.lab.test", LabHostilePath.loop)
                ]).first)
            let attempt = try #require(report.attempts(.directSNI).first)
            #expect(attempt.outcome == .tooManyRedirects)
            #expect(attempt.hops.count == 1, "the loop is seen as soon as the same request would be made again")
            #expect(attempt.error?.sentence.contains("redirect loop") == true)
            #expect(!report.verdict.works.contains(.directSNI))
            #expect(report.verdict.recommended == nil)

            // A chain merely longer than the limit: the same outcome.
            let short = try #require(
                await lab.engine(ProbeOptions(scenarios: [.directSNI], maxRedirects: 0)).probeAll([
                    lab.url("redirect.lab.test")
                ]).first)
            #expect(short.outcome(.directSNI) == .tooManyRedirects)
            #expect(short.verdict.works.isEmpty)
        }
    }

    @Test("credential headers and the body stay with their origin on a 307 elsewhere; the trace says so")
    func credentialsStayWithTheirOrigin() async throws {
        try await withLab { lab in
            let secrets = [
                HeaderField(name: "Authorization", value: "Bearer hunter2"),
                HeaderField(name: "Cookie", value: "session=s3cret"),
                HeaderField(name: "X-Api-Key", value: "k3y"), HeaderField(name: "X-Trace", value: "keep-me"),
            ]
            let options = ProbeOptions(
                scenarios: [.directSNI], method: .post, body: Array("payload".utf8), headers: secrets, redact: false)
            let url = lab.url("hostile.lab.test", LabHostilePath.away307)
            let report = try #require(await lab.engine(options).probeAll([url]).first)
            let attempt = try #require(report.attempts(.directSNI).first)
            #expect(attempt.hops.count == 2)
            let first = try #require(attempt.hops.first)
            let second = try #require(attempt.hops.last)
            // What curl put on the wire, hop by hop.
            #expect(first.requestHeaders.contains { $0.name == "Authorization" })
            let sentAway = Set(second.requestHeaders.map { $0.name.lowercased() })
            #expect(sentAway.isDisjoint(with: ["authorization", "cookie", "x-api-key"]), "\(sentAway)")
            #expect(sentAway.contains("x-trace"))
            #expect(second.requestBodyBytes == 0)
            #expect(
                second.log.contains {
                    $0.text.contains("dropped Authorization, Cookie, X-Api-Key")
                        && $0.text.contains("--location-trusted")
                })
            #expect(second.originalURL.contains("sni-b.lab.test"))

            // --location-trusted keeps them.
            var trusted = options
            trusted.locationTrusted = true
            let kept = try #require(await lab.engine(trusted).probeAll([url]).first?.attempts(.directSNI).first)
            #expect(kept.hops.last?.requestHeaders.contains { $0.name == "Authorization" } == true)
        }
    }

    @Test("a redirect from https to plain http is refused unless asked")
    func downgradeRefused() async throws {
        try await withLab { lab in
            let options = ProbeOptions(
                scenarios: [.directSNI], headers: [HeaderField(name: "Authorization", value: "Bearer hunter2")])
            let url = lab.url("hostile.lab.test", LabHostilePath.downgrade)
            let report = try #require(await lab.engine(options).probeAll([url]).first)
            let attempt = try #require(report.attempts(.directSNI).first)
            #expect(attempt.outcome == .redirectRefused)
            #expect(attempt.hops.count == 1)
            #expect(attempt.error?.sentence.contains("--allow-downgrade") == true)
            #expect(report.verdict.works.isEmpty)

            var allowed = options
            allowed.allowDowngrade = true
            let followed = try #require(await lab.engine(allowed).probeAll([url]).first?.attempts(.directSNI).first)
            #expect(followed.hops.count == 2)
            #expect(followed.hops.last?.url.hasPrefix("http://") == true)
            #expect(followed.hops.last?.requestHeaders.contains { $0.name == "Authorization" } == false)
        }
    }
}

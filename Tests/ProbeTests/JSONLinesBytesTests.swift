// JSON Lines are written by a fast in-order encoder: a script reading them must find the same
// documents Foundation's JSONEncoder wrote, strings escaped byte for byte as it escapes them.
import CurlTransport
import Foundation
import Lab
import NameResolution
import Testing

@testable import Probe

@Suite("JSON Lines bytes")
struct JSONLinesBytesTests {
    /// What JSON Lines were before: Foundation's encoder, compact, slashes as they are, dates as
    /// ISO8601DateFormatter writes them (TimestampTests holds the export to that), the model's
    /// absent values as null (NullWritingEncoder). Its keys of synthesised types came in hash
    /// order, different each run, so documents are compared.
    private static func foundationLine(_ report: URLReport) throws -> String {
        let encoder = Self.foundationEncoder()
        return String(decoding: try encoder.encode(NullWritingEncoder.Root(value: report)), as: UTF8.self) + "\n"
    }

    private static func foundationEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            var container = encoder.singleValueContainer()
            try container.encode(formatter.string(from: date))
        }
        return encoder
    }

    /// The same JSON document: objects, arrays, strings and numbers equal, whatever the key order.
    private static func sameDocument(_ a: String, _ b: String) throws -> Bool {
        let left = try JSONSerialization.jsonObject(with: Data(a.utf8)) as? NSDictionary
        let right = try JSONSerialization.jsonObject(with: Data(b.utf8)) as? NSDictionary
        return left != nil && left == right
    }

    private static func written(_ report: URLReport) throws -> String {
        try exportedText([report], .jsonLines, redact: false)
    }

    /// Every C0 control, DEL, quotes, backslashes, slashes, bidi and zero-width characters,
    /// combining marks, emoji and a lone carriage return: all in places a server fills.
    static let hostile =
        String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }) + "\u{7F}\"\\/ \\\"a\"b/c\u{202E}evil\u{200B}"
        + "e\u{301} 👩🏽‍💻 日本 \r\n\t"

    static func hostileReport() -> URLReport {
        let certificate = CertificateReport(
            chain: [
                CertificateSummary(
                    subject: "CN=\(hostile)", subjectAlternativeNames: [hostile, "a.test"], issuer: "O=\"x\"/y",
                    notBefore: Date(timeIntervalSince1970: 0),
                    notAfter: Date(timeIntervalSince1970: 1_795_420_800.5678),
                    sha256: "ab:cd")
            ], verifyResult: 62, verifyMessage: hostile)
        let hop = Hop(
            url: "https://a.test/p?q=\(hostile)", originalURL: "https://a.test/", method: "POST",
            requestHeaders: [HeaderField(name: "X-\u{1B}", value: hostile)], requestBodyBytes: 12,
            remoteIP: "2001:db8::1", remotePort: 443, resolver: .httpdns, sni: hostile, checkedName: "a.test",
            outcome: .certNameMismatch, status: 599, httpVersion: "HTTP/1.1",
            responseHeaders: [HeaderField(name: "Location", value: "/?=\u{0}"), HeaderField(name: "", value: "")],
            responseBytes: Int.max, bodyPreview: hostile,
            timings: PhaseTimings(
                nameLookup: 0, connect: 0.1, tlsDone: 1e-7, preTransfer: 123_456_789.125, firstByte: 1e21,
                total: 12.0),
            certificate: certificate, error: .reported(hostile),
            log: [CurlLogLine(atMs: 0.5, kind: .info, text: hostile), CurlLogLine(atMs: 3, kind: .headerIn, text: "")],
            startedAt: Date(timeIntervalSince1970: 1_700_000_000.001))
        let attempts = [
            Attempt(
                url: "https://a.test/", scenario: .directSNI, ip: "192.0.2.1", ipSource: .httpdns, sni: "a.test",
                checkedName: "a.test", outcome: .certNameMismatch, status: 200, httpVersion: "HTTP/2",
                timings: hop.timings, certificate: certificate, error: .reported(hostile), hops: [hop, hop],
                reproduce: "curl '\(hostile)'"),
            Attempt(url: "http://a.test/", scenario: .directHTTP, outcome: .skipped),
        ]
        return URLReport(
            url: "https://a.test/\(hostile)", host: "a.test",
            resolution: HostResolution(
                host: "a.test", system: SystemAnswer(error: .reported(hostile)),
                httpdns: HTTPDNSAnswer(provider: ProviderID(hostile))),
            attempts: attempts,
            verdict: Verdict(
                works: [.directSNI, .directHTTPS], recommended: nil, summary: hostile, notes: [hostile, ""]))
    }

    @Test("hostile text, odd numbers and absent values: the document and escapes JSONEncoder wrote")
    func hostileBytes() throws {
        let report = Self.hostileReport()
        let line = try Self.written(report)
        let expected = try Self.foundationLine(report)
        #expect(try Self.sameDocument(line, expected))
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        // Strings escaped exactly as JSONEncoder escapes them, DEL, C1 and U+2028/9 then escaped too.
        let escaped = String(
            decoding: ProbeJSON.escapingSeparators(try Self.foundationEncoder().encode(Self.hostile)), as: UTF8.self)
        #expect(line.contains("\"bodyPreview\":\(escaped),"))
        // Keys in the order the model lists them, the same every run.
        #expect(line.contains("\"timings\":{\"nameLookup\":0,\"connect\":0.1,\"tlsDone\":1e-07,"))
        // And it reads back as the same report.
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return try #require(formatter.date(from: try decoder.singleValueContainer().decode(String.self)))
        }
        let decoded = try decoder.decode(URLReport.self, from: Data(line.utf8))
        #expect(decoded.attempts.first?.hops.first?.bodyPreview == Self.hostile)
        #expect(decoded.verdict.summary == Self.hostile)
    }

    @Test("a real trace of every lab name is the document JSONEncoder wrote")
    func labBytes() async throws {
        try await withLab(LabOptions(slowOriginDelay: 30)) { lab in
            let reports = await lab.engine(ProbeOptions(allIPs: true, timeout: .seconds(3)))
                .probeAll(LabScenarioTests.everyName.map { lab.url($0, "/echo?a=1/2") })
            #expect(reports.count == LabScenarioTests.everyName.count)
            for report in reports {
                let expected = try Self.foundationLine(report)
                #expect(try Self.sameDocument(Self.written(report), expected), "\(report.url)")
            }
        }
    }

    /// Every integer width, floats, optionals, nested arrays and empty containers: the kinds of
    /// value a future model field may bring. A Float falls back to JSONEncoder; the rest are
    /// written in order (an integer other than Int once recursed through its own encode(to:)).
    struct Everything: Codable {
        var i8: Int8 = -8, i16: Int16 = -16, i32: Int32 = -32, i64: Int64 = .min
        var u8: UInt8 = 8, u16: UInt16 = 16, u32: UInt32 = 32, u64: UInt64 = .max, u: UInt = 7
        var nested: [[Int?]] = [[1, nil], [], [3]]
        var empty: [String: Int] = [:]
        var maybe: UInt16? = nil
    }

    struct WithFloat: Codable {
        var f: Float = 0.1
        var s = "x"
    }

    @Test("integers of every width, optionals and nested arrays: the document JSONEncoder writes")
    func everyKindOfValue() throws {
        let fast = String(decoding: try CompactJSONEncoder.encodeInOrder(Everything()), as: UTF8.self)
        let foundation = String(decoding: try Self.foundationEncoder().encode(Everything()), as: UTF8.self)
        #expect(try Self.sameDocument(fast, foundation))
        #expect(fast.contains(#""i64":-9223372036854775808"#) && fast.contains(#""u64":18446744073709551615"#))
        // A Float is not written in order; the fallback still gives JSONEncoder's document.
        #expect(throws: CompactJSONEncoder.Unsupported.self) { try CompactJSONEncoder.encodeInOrder(WithFloat()) }
        let fallback = String(decoding: try CompactJSONEncoder.encode(WithFloat()), as: UTF8.self)
        let expected = String(decoding: try Self.foundationEncoder().encode(WithFloat()), as: UTF8.self)
        #expect(try Self.sameDocument(fallback, expected))
    }
}

@Suite("JSON Lines bytes: directly written values")
struct JSONLinesDirectWritesTests {
    /// A value written through its own `encode(to:)`, past the encoder's direct writers.
    struct ThroughCodable<Value: Encodable>: Encodable {
        var value: Value
        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }

    static let hostile = JSONLinesBytesTests.hostile

    @Test("curl's log lines and headers: the bytes their own encode(to:) writes, keys in the same order")
    func logAndHeaders() throws {
        let log = [
            CurlLogLine(atMs: 0.5, kind: .info, text: Self.hostile),
            CurlLogLine(atMs: 3, kind: .headerIn, text: ""),
            CurlLogLine(atMs: 1e-7, kind: .headerOut, text: "GET /?a=1 HTTP/1.1"),
            CurlLogLine(atMs: 123_456.125, kind: .ssl, text: "TLS handshake, Finished (20):"),
        ]
        let headers = [
            HeaderField(name: "X-\u{1B}", value: Self.hostile), HeaderField(name: "", value: ""),
            HeaderField(name: "Host", value: "a.test:443"),
        ]
        for lines in [log, [], [log[0]]] {
            let direct = String(decoding: try CompactJSONEncoder.encodeInOrder(lines), as: UTF8.self)
            let codable = String(
                decoding: try CompactJSONEncoder.encodeInOrder(ThroughCodable(value: lines)), as: UTF8.self)
            #expect(direct == codable)
        }
        for fields in [headers, [], [headers[2]]] {
            let direct = String(decoding: try CompactJSONEncoder.encodeInOrder(fields), as: UTF8.self)
            let codable = String(
                decoding: try CompactJSONEncoder.encodeInOrder(ThroughCodable(value: fields)), as: UTF8.self)
            #expect(direct == codable)
        }
        let written = String(decoding: try CompactJSONEncoder.encodeInOrder(log), as: UTF8.self)
        #expect(written.hasPrefix(#"[{"atMs":0.5,"kind":"info","text":"#))
        #expect(written.contains(#"{"atMs":3,"kind":"header-in","text":""}"#))
        #expect(written.contains(#"{"atMs":1e-07,"kind":"header-out","text":"GET /?a=1 HTTP/1.1"}"#))
    }

    /// Optional fields and plain scalars, through keyed, unkeyed and single-value containers.
    struct Scalars: Encodable {
        var text: String? = "a\"b"
        var none: String? = nil
        var count: Int? = -3
        var ratio: Double? = 2.0
        var flag = true
        var list: [Double] = [1.5, 2, -0.0]
        var words: [String?] = ["x", nil]

        private enum Field: String, CodingKey { case text, none, count, ratio, flag, list, words, absent }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Field.self)
            try c.encode(text, forKey: .text)
            try c.encode(none, forKey: .none)
            try c.encode(count, forKey: .count)
            try c.encode(ratio, forKey: .ratio)
            try c.encode(flag, forKey: .flag)
            try c.encode(list, forKey: .list)
            try c.encode(words, forKey: .words)
            try c.encodeIfPresent(none, forKey: .absent)
        }
    }

    /// Every kind of optional field, absent, in a type that writes absent values as null.
    struct Absent: Encodable, AbsentAsNull {
        var text: String? = nil
        var count: Int? = nil
        var ratio: Double? = nil
        var flag: Bool? = nil
        var small: UInt16? = nil
        var when: Date? = nil
        var verdict: Verdict? = nil
        var present = "x"
        var inner = Omitted()
    }

    /// The same, in a type that leaves absent values out (as URLReport's `ranking`).
    struct Omitted: Encodable {
        var text: String? = nil
        var verdict: Verdict? = nil
        var present = 1
    }

    @Test("absent values: null in the model's types, left out elsewhere, by both encoders alike")
    func absentAsNull() throws {
        let fast = String(decoding: try CompactJSONEncoder.encodeInOrder(Absent()), as: UTF8.self)
        #expect(
            fast
                == #"{"text":null,"count":null,"ratio":null,"flag":null,"small":null,"when":null,"verdict":null,"present":"x","inner":{"present":1}}"#
        )
        let foundation = String(decoding: try ProbeJSON.foundation(Absent(), pretty: false), as: UTF8.self)
        let left = try JSONSerialization.jsonObject(with: Data(fast.utf8)) as? NSDictionary
        let right = try JSONSerialization.jsonObject(with: Data(foundation.utf8)) as? NSDictionary
        #expect(left != nil && left == right)
    }

    @Test("optionals written as null or their value, scalars as JSONEncoder writes them")
    func scalars() throws {
        let fast = String(decoding: try CompactJSONEncoder.encodeInOrder(Scalars()), as: UTF8.self)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        let foundation = String(decoding: try encoder.encode(Scalars()), as: UTF8.self)
        #expect(
            fast
                == #"{"text":"a\"b","none":null,"count":-3,"ratio":2,"flag":true,"list":[1.5,2,-0],"words":["x",null]}"#
        )
        // The same document as JSONEncoder's (its keys sorted here, so compared as objects).
        let left = try JSONSerialization.jsonObject(with: Data(fast.utf8)) as? NSDictionary
        let right = try JSONSerialization.jsonObject(with: Data(foundation.utf8)) as? NSDictionary
        #expect(left != nil && left == right)
    }
}

// The lab's hostile origin: a server that misbehaves on purpose, so tests can show that no
// response crashes ipdirect, paints the terminal, steals credentials or bends a verdict.
import FoundationEssentials
import NIOCore

/// What the hostile origin sends, by path. Everything else gets the ordinary origin line.
public enum LabHostilePath {
    /// A reason phrase and a header full of escape sequences, C1 controls and bidi overrides.
    public static let escapes = "/escapes"
    /// A redirect to `/?=`, a query pair without a name.
    public static let emptyQueryName = "/location-empty-name"
    /// A redirect to itself, forever.
    public static let loop = "/loop"
    /// A 307 to another lab host (sni-b.lab.test's `/echo`), so credentials would cross origins.
    public static let away307 = "/redirect-307-away"
    /// A 302 from https to plain http (plain.lab.test's `/echo`): a downgrade.
    public static let downgrade = "/redirect-downgrade"
    /// A 200 with one header of a megabyte, past what libcurl reads (100 KB a line).
    public static let hugeHeader = "/huge-header"
    /// A 302 to the cloud metadata address, `http://169.254.169.254/latest/meta-data/`.
    public static let metadata = "/redirect-metadata"
    /// A 302 to an IPv6 link-local address without a zone (`http://[fe80::1]/`): a connect to it
    /// fails on this machine, so a test that follows it sends nothing off loopback.
    public static let linkLocalV6 = "/redirect-link-local-v6"
    /// A 302 to `http://metadata.lab.test/`, a name a test's resolver answers with a link-local address.
    public static let metadataName = "/redirect-metadata-name"
    /// A 302 to an address literal, the hijacker's site (`https://127.0.0.2:PORT/`): an allow list
    /// of 127.0.0.1 alone must not let a target it allows lead there.
    public static let address = "/redirect-address"

    /// A body, a header and a reason phrase holding Unicode's line breaks (NEL, U+2028, U+2029)
    /// and a C1 control: JSON allows them raw, and a reader splitting lines on them would cut a
    /// record in two.
    public static let lineBreaks = "/line-breaks"

    /// The text `/line-breaks` puts in its body, its `X-Line-Breaks` header and its reason phrase.
    public static let lineBreaksText = "one\u{85}two\u{2028}three\u{2029}four\u{9b}five\u{7f}six"

    /// How large `/huge-header`'s header is.
    public static let hugeHeaderBytes = 1 << 20

    /// The reason phrase `/escapes` answers with: a title change, a screen clear, a bidi override.
    public static let hostileReason = "OK \u{1b}]0;pwned\u{07}\u{1b}[2J\u{202e}gnp.exe"
    /// The value of the `X-Hostile` header `/escapes` answers with (C1 CSI, bidi, zero width).
    public static let hostileHeader = "\u{1b}[31mred\u{9b}1m\u{202e}txt\u{200b}"
}

/// Makes the responder of the hostile origin.
func hostileOriginResponder(name: String, ledger: LabLedger) -> LabResponder {
    { request, loop in
        let line = "origin=\(name) ; host=\(request.host) ; sni=\(request.sni ?? "none")"
        var response = LabResponse.text(200, line + "\n")
        switch request.path {
        case LabHostilePath.escapes:
            response = .text(200, line + " ; " + LabHostilePath.hostileHeader + "\n")
            response.reason = LabHostilePath.hostileReason
            response.headers.append(("X-Hostile", LabHostilePath.hostileHeader))
        case LabHostilePath.lineBreaks:
            response = .text(200, line + " ; " + LabHostilePath.lineBreaksText + "\n")
            response.reason = "OK " + LabHostilePath.lineBreaksText
            response.headers.append(("X-Line-Breaks", LabHostilePath.lineBreaksText))
        case LabHostilePath.emptyQueryName:
            response = .text(302, line + " ; redirect=/?=\n")
            response.headers.append(("Location", "/?="))
        case LabHostilePath.loop:
            response = .text(302, line + " ; redirect=\(LabHostilePath.loop)\n")
            response.headers.append(("Location", LabHostilePath.loop))
        case LabHostilePath.away307, LabHostilePath.downgrade:
            let target = request.path == LabHostilePath.away307 ? "sni-b.lab.test" : "plain.lab.test"
            let location = (ledger.hosts[target] ?? "https://\(target)/") + "echo"
            response = .text(request.path == LabHostilePath.away307 ? 307 : 302, line + " ; redirect=\(location)\n")
            response.headers.append(("Location", location))
        case LabHostilePath.address:
            let site = ledger.hosts["hijacked.lab.test"] ?? "https://hijacked.lab.test/"
            let location = site.replacing("hijacked.lab.test", with: LabLocalDNS.hijackAddress)
            response = .text(302, line + " ; redirect=\(location)\n")
            response.headers.append(("Location", location))
        case LabHostilePath.hugeHeader:
            response.headers.append(("X-Huge", String(repeating: "a", count: LabHostilePath.hugeHeaderBytes)))
        case LabHostilePath.metadata, LabHostilePath.linkLocalV6, LabHostilePath.metadataName:
            let location =
                [
                    LabHostilePath.metadata: "http://169.254.169.254/latest/meta-data/",
                    LabHostilePath.linkLocalV6: "http://[fe80::1]/",
                    LabHostilePath.metadataName: "http://metadata.lab.test/",
                ][request.path] ?? "/"
            response = .text(302, line + " ; redirect=\(location)\n")
            response.headers.append(("Location", location))
        default:
            break
        }
        ledger.record(
            LabOriginRequest(
                origin: name, host: request.host, sni: request.sni, method: request.method, path: request.path,
                bodyLength: request.bodyLength, status: response.status, time: Date()))
        return loop.makeSucceededFuture(response)
    }
}

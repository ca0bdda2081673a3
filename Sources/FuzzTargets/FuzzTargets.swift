// The fuzz targets: every parser that takes bytes from outside, one entry point each, shared by
// the libFuzzer executable (`make fuzz`) and the corpus replay test in `make test`.
import ConfigurationSources
import Console
import CurlTransport
import Foundation
import NameResolution
import Probe
import TerminalText

/// One parser under fuzzing. The raw value names its corpus folder, `Tests/Fuzz/Corpus/<name>/`.
public enum FuzzTarget: Hashable, CaseIterable, Sendable, RawRepresentable {
    /// A URL as typed: parsing, host rewriting, the pin, Host, query items, redaction.
    case url
    /// A `probe --input` list (the agent's targets too): lines, comments, `key=value` words, then
    /// each URL as the probe takes it. A name it accepts fits DNS and libcurl's pins; an error
    /// quotes the line cut short.
    case inputLines
    /// A redirect: the first line is the base URL (a default when it does not parse), the rest
    /// the `Location` value resolved against it.
    case location
    /// A provider's answers: every parser a row of `ProviderRegistry` fuzzes under this corpus
    /// (alicloud v2 and legacy share `alicloud`; Tencent; DoH JSON; DNS wire replies).
    case providerAnswers(corpus: String)
    /// The persistent cache file.
    case cacheFile
    /// The TOML configuration file.
    case configuration
    /// HTTP header buffers as the transfer loop splits them.
    case headerLines
    /// The terminal sanitizer: it must never emit a control.
    case terminalText
    /// A service's words (error codes, messages, `extra`) through every provider's paths, then
    /// every output they reach: what is kept, the resolve table, JSON, the console's cells. None
    /// may hold a control, a line break of its own, a C1 control or a bidi override.
    case serviceText

    /// Every target: the fixed ones and one per provider corpus the registry names.
    public static var allCases: [FuzzTarget] {
        [.url, .inputLines, .location] + ProviderRegistry.fuzzCorpora.map { .providerAnswers(corpus: $0) }
            + [.cacheFile, .configuration, .headerLines, .terminalText, .serviceText]
    }

    public init?(rawValue: String) {
        guard let target = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = target
    }

    public var rawValue: String {
        switch self {
        case .url: return "url"
        case .inputLines: return "input-lines"
        case .location: return "location"
        case .providerAnswers(let corpus): return corpus
        case .cacheFile: return "cache-file"
        case .configuration: return "configuration"
        case .headerLines: return "header-lines"
        case .terminalText: return "terminal-text"
        case .serviceText: return "service-text"
        }
    }

    /// Runs the target on one input. A trap here is a finding.
    public func run(_ bytes: [UInt8]) {
        switch self {
        case .url:
            Self.exercise(String(decoding: bytes, as: UTF8.self))
        case .inputLines:
            Self.inputLines(String(decoding: bytes, as: UTF8.self))
        case .location:
            let text = String(decoding: bytes, as: UTF8.self)
            let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            let base =
                (try? ProbeURL.parse(String(parts[0])))
                ?? (try? ProbeURL.parse("https://fuzz.lab.test:8443/a/b?x=1"))
            guard let base else { return }
            let location = parts.count > 1 ? String(parts[1]) : String(parts[0])
            if let next = try? base.resolving(location) { Self.exercise(next.text) }
            _ = Redaction.url(location)
        case .providerAnswers(let corpus): ProviderRegistry.fuzz(corpus: corpus, bytes)
        case .cacheFile: ParserEntryPoints.cacheFile(bytes, path: Self.scratchFile)
        case .configuration: ParserEntryPoints.configuration(bytes)
        case .headerLines:
            let (fields, whole) = HeaderLineParsing.fields(bytes)
            _ = Redaction.headers(fields)
            _ = Redaction.logLine(CurlLogLine(atMs: 0, kind: .headerIn, text: whole))
        case .terminalText:
            let shown = [
                TerminalText.escaped(bytes: bytes), TerminalText.escaped(String(decoding: bytes, as: UTF8.self)),
                TerminalText.prefix(String(decoding: bytes, as: UTF8.self), cells: 7),
                TerminalText.padded(String(decoding: bytes, as: UTF8.self), to: 9),
            ]
            for text in shown {
                precondition(
                    !text.unicodeScalars.contains(where: TerminalText.needsEscape),
                    "the sanitizer let a control through: \(Array(text.utf8))")
            }
            precondition(TerminalText.width(shown[2]) <= 7, "prefix went past its cells")
        case .serviceText:
            for words in ParserEntryPoints.serviceWords(bytes) {
                let answer = HTTPDNSAnswer(provider: "fuzz", error: .reported(words))
                let json = (try? JSONEncoder().encode(answer)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                var cells = CellBuffer(width: 200, height: 1)
                _ = cells.put(words, x: 0, y: 0)
                let outputs =
                    [words, json, (0..<cells.width).map { String(cells[$0, 0].character) }.joined()]
                    + TextTable.lines(header: ["HOST", "HTTPDNS"], rows: [["fuzz.lab.test", words]])
                for output in outputs {
                    precondition(
                        !output.unicodeScalars.contains {
                            TerminalText.needsEscape($0) && $0 != CellBuffer.continuation
                        },
                        "a service's words reached an output unescaped: \(Array(output.utf8))")
                }
            }
        }
    }

    /// Everything the probe does with a URL before and after a transfer.
    private static func exercise(_ text: String) {
        _ = Redaction.url(text)
        guard let url = try? ProbeURL.parse(text) else { return }
        _ = try? url.replacingHost(with: "127.0.0.1")
        _ = try? url.replacingHost(with: "::1")
        _ = url.resolvePin(to: "127.0.0.1")
        _ = url.hostHeader
        _ = url.pathAndQuery
        _ = url.queryItems
        _ = Redaction.url(url.text)
        _ = Redaction.secrets(headers: [HeaderField(name: "Authorization", value: "Bearer x")], url: url)
    }

    /// A list as `probe --input` and the agent read it, with what must hold of every line.
    private static func inputLines(_ text: String) {
        for (_, entry) in TargetLine.entries(text) {
            let url: String
            do {
                url = try TargetLine.parse(entry).url
            } catch {
                precondition(error.reason.utf8.count < 2 * InputQuote.limit + 400, "an error quoted the line whole")
                url = entry
            }
            let parsed: ProbeURL
            do {
                parsed = try ProbeURL.parse(url)
            } catch {
                precondition(error.description.utf8.count < 2 * InputQuote.limit + 400, "an error quoted the URL whole")
                continue
            }
            // What reaches DNS and libcurl's pin: no NUL, within DNS's limits, and the pin names it.
            let host = parsed.host.utf8
            precondition(!host.contains(0), "a NUL byte reached the host")
            precondition(host.count <= 253, "a name of \(host.count) bytes was accepted")
            precondition(
                !host.split(separator: UInt8(ascii: ".")).contains { $0.count > 63 },
                "a label over 63 bytes was accepted")
            precondition(
                parsed.resolvePin(to: "127.0.0.1").utf8.starts(with: host), "the pin does not name the host")
            exercise(parsed.text)
        }
    }

    /// Where the cache-file target writes its input (one file per process).
    private static let scratchFile =
        NSTemporaryDirectory() + "ipdirect-fuzz-cache-\(ProcessInfo.processInfo.processIdentifier).json"
}

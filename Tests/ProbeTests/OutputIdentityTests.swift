// The probe's JSON, JSON Lines and HAR and the resolver's JSON, byte for byte as recorded before a
// refactoring: the real binary against its own lab, with what varies run to run masked.
import Foundation
import TestSupport
import Testing

/// The `ipdirect` binary built beside the test bundle, when the build made one.
private let ipdirectBinary = BuiltBinary.ipdirect

/// Where the recorded outputs live, beside this file.
private let recordedOutputs = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("RecordedOutputs")

/// Set to 1 to write the outputs of this run as the new recording (on purpose, for a change that
/// alters output; review the diff): `IPDIRECT_RECORD_OUTPUTS=1 swift test --filter OutputIdentity`.
private let recording = ProcessInfo.processInfo.environment["IPDIRECT_RECORD_OUTPUTS"] == "1"

/// One name per situation a user meets: plain HTTP, HTTPS that works every way, a name that needs
/// SNI, a name the LocalDNS hijacks, a redirect across hosts, a certificate for another name, an
/// expired certificate, a name with an IPv4 and an IPv6 address.
private let probedURLs = [
    "http://plain.lab.test/", "https://single.lab.test/", "https://sni-b.lab.test/", "https://hijacked.lab.test/",
    "https://redirect.lab.test/", "https://wrong-name.lab.test/", "https://expired.lab.test/",
    "https://dual.lab.test/",
]

/// Names for `resolve`: agreeing, two families, hijacked, addresses that are not IPs, no address.
private let resolvedNames = [
    "plain.lab.test", "dual.lab.test", "hijacked.lab.test", "poisoned.lab.test", "nodata.lab.test",
]

/// The text of an output with what differs between two runs on the same lab replaced by a
/// placeholder, so what is left compares byte for byte.
///
/// Masked: the lab's ports (every number that appears as a lab port anywhere in the text, wherever it
/// appears: URLs, `Host`, HAR `connection`, `dig -p`, curl's log); times (the values of `ms`,
/// `atMs`, the phase timings, HAR `time` and `timings`); ISO 8601 dates and curl's certificate dates;
/// the lab CA's random name; certificate SHA-256 fingerprints; attempt ids (UUIDs); curl's connection
/// numbers (`#3`, `Closing connection 3`: they count transfers in the process, which run in parallel
/// within a URL); the lab's temporary directory (the CA path in `reproduce`); calendar dates (the
/// expired certificate's end is 30 days before the lab started).
///
/// Removed: curl's "RESOLVE host:port is - old addresses discarded" log lines. A URL's attempts
/// share libcurl's DNS cache, so the attempt that pins a name second finds the first one's pin;
/// which one that is depends on the order the attempts reach the transfer loop.
///
/// - Parameter text: an output as the binary wrote it.
/// - Returns: the text with those replaced by `PORT`, `TIME`, `DATE`, `LABCA`, `SHA256`, `UUID`, `N`
///   and `LABDIR`, and those lines removed.
func maskedOutput(_ text: String) -> String {
    let portPatterns = [
        #"(?:\.lab\.test|localhost|127\.0\.0\.1|\]):([0-9]{2,5})\b"#, #"-p ([0-9]{2,5})\b"#, #"\bport ([0-9]{2,5})\b"#,
        #""(?:connection|remotePort)" ?: ?"?([0-9]{2,5})\b"#,
    ]
    var ports: Set<String> = []
    for pattern in portPatterns {
        let expression = try! NSRegularExpression(pattern: pattern)
        let whole = NSRange(text.startIndex..., in: text)
        for match in expression.matches(in: text, range: whole) {
            if let range = Range(match.range(at: 1), in: text) { ports.insert(String(text[range])) }
        }
    }
    var masked = text
    func replace(_ pattern: String, _ template: String) {
        let expression = try! NSRegularExpression(pattern: pattern)
        masked = expression.stringByReplacingMatches(
            in: masked, range: NSRange(masked.startIndex..., in: masked), withTemplate: template)
    }
    for port in ports.sorted() { replace(#"(?<![0-9.])"# + port + #"(?![0-9])"#, "PORT") }
    let timeKeys =
        "ms|atMs|nameLookup|connect|tlsDone|preTransfer|firstByte|total|time|blocked|dns|send|wait|receive|ssl"
    replace(#"("(?:"# + timeKeys + #")" ?: ?)-?[0-9][0-9.eE+-]*"#, "$1TIME")
    replace(#"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9:.]+(?:Z|[+-][0-9:]+))?"#, "DATE")
    replace(#"[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4} GMT"#, "DATE")
    replace(#"ipdirect lab CA [0-9a-f]+"#, "LABCA")
    replace(#"(?:[0-9a-fA-F]{2}:){31}[0-9a-fA-F]{2}"#, "SHA256")
    replace(#"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"#, "UUID")
    replace(#"#[0-9]+\b"#, "#N")
    replace(#"([Cc]onnection) [0-9]+\b"#, "$1 N")
    replace(#"/ipdirect-lab-[A-Za-z0-9]+"#, "/LABDIR")
    // The log entry and the comma after it (never the last entry: an "Added" line follows it), in
    // the pretty JSON with the line it starts on.
    replace(
        #"\n?[ ]*\{\s*"atMs" ?: ?TIME,\s*"kind" ?: ?"info",\s*"text" ?: ?"RESOLVE [^"\n]* is - old addresses discarded"\s*\},"#,
        "")
    return masked
}

/// A HAR with its keys in sorted order: the HAR writer's key order differs run to run (it is not
/// part of the format), so it is compared after this and `maskedOutput`.
private func sortedKeys(_ data: Data) throws -> String {
    let object = try JSONSerialization.jsonObject(with: data)
    let sorted = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
    return String(decoding: sorted, as: UTF8.self) + "\n"
}

/// Runs the binary with `arguments` in a scratch directory of its own (configuration and cache
/// empty, no proxy) and returns its standard output; files it writes stay in `scratch`.
private func runBinary(_ arguments: [String], in scratch: ScratchDirectory) async throws -> String {
    var environment = ProcessInfo.processInfo.environment.filter {
        !$0.key.hasPrefix("IPDIRECT_") && !$0.key.lowercased().hasSuffix("_proxy")
    }
    environment["XDG_CONFIG_HOME"] = scratch.path
    environment["XDG_CACHE_HOME"] = scratch.path
    environment["HOME"] = scratch.path
    let result = try await ChildProcess.run(
        ipdirectBinary!, arguments, environment: environment, directory: scratch.path, seconds: 180)
    return result.output
}

/// Compares `text` with the recorded file `name` (or records it), and says where the first
/// difference is.
private func expectRecorded(_ text: String, _ name: String) throws {
    let file = recordedOutputs.appendingPathComponent(name)
    if recording {
        try FileManager.default.createDirectory(at: recordedOutputs, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return
    }
    let recorded = try #require(
        FileManager.default.contents(atPath: file.path).map { String(decoding: $0, as: UTF8.self) },
        "no recording \(name); record with IPDIRECT_RECORD_OUTPUTS=1")
    guard recorded != text else { return }
    // Where the two first part, with a little of each around it (JSON Lines lines are long).
    let start =
        zip(recorded.utf8, text.utf8).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(recorded.utf8.count, text.utf8.count)
    let line = recorded.utf8.prefix(start).count { $0 == UInt8(ascii: "\n") } + 1
    func around(_ whole: String) -> String {
        let bytes = Array(whole.utf8)
        let from = max(0, start - 60)
        return String(decoding: bytes[min(from, bytes.count)..<min(start + 60, bytes.count)], as: UTF8.self)
    }
    Issue.record(
        """
        \(name) differs from the recording at line \(line):
          recorded: …\(around(recorded))…
          now:      …\(around(text))…
        """)
}

@Suite(
    "outputs byte for byte as recorded", .serialized,
    .enabled(if: ipdirectBinary != nil, "the ipdirect binary is not built"))
struct OutputIdentityTests {
    @Test("probe --lab: JSON, JSON Lines and HAR match the recording, times and ports masked")
    func probeOutputs() async throws {
        let scratch = try ScratchDirectory("identity")
        defer { scratch.remove() }
        let json = try await runBinary(
            [
                "probe", "--lab", "--order", "input", "--concurrency", "1", "--all-ips", "--format", "json",
                "--jsonl", "out.jsonl", "--har", "out.har",
            ] + probedURLs, in: scratch)
        try expectRecorded(maskedOutput(json), "probe.json")
        let jsonLines = try #require(FileManager.default.contents(atPath: scratch.file("out.jsonl")))
        try expectRecorded(maskedOutput(String(decoding: jsonLines, as: UTF8.self)), "probe.jsonl")
        let har = try #require(FileManager.default.contents(atPath: scratch.file("out.har")))
        try expectRecorded(maskedOutput(try sortedKeys(har)), "probe.har")
    }

    @Test("probe --lab --format jsonl on standard output matches the recorded JSON Lines file")
    func probeJSONLinesOnStandardOutput() async throws {
        let scratch = try ScratchDirectory("identity")
        defer { scratch.remove() }
        let jsonLines = try await runBinary(
            ["probe", "--lab", "--order", "input", "--concurrency", "1", "--all-ips", "--format", "jsonl"] + probedURLs,
            in: scratch)
        try expectRecorded(maskedOutput(jsonLines), "probe.jsonl")
    }

    @Test("resolve --lab --format json matches the recording, times and ports masked")
    func resolveOutput() async throws {
        let scratch = try ScratchDirectory("identity")
        defer { scratch.remove() }
        let json = try await runBinary(["resolve", "--lab", "--format", "json"] + resolvedNames, in: scratch)
        try expectRecorded(maskedOutput(json), "resolve.json")
    }
}

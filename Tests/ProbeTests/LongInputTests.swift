// Hostile `--input` lines (issue 20): a 300-character label that once corrupted libcurl's memory,
// names longer than DNS allows, a NUL byte inside a line, a URL line of megabytes echoed back.
import Foundation
import Lab
import Probe
import TestSupport
import Testing

/// The `ipdirect` binary built beside the test bundle (the ASan build's under `make asan`).
private let ipdirectBinary = BuiltBinary.ipdirect

/// A host name with one 300-character label, longer than DNS allows (63).
private let longLabelHost = String(repeating: "a", count: 300) + ".example"

/// An HTTPDNS stand-in (DoH JSON) answering 127.0.0.1 for every name, as the attacker's
/// service did: the lab's zone answers only its own names, and the crash needs the long name
/// resolved. It prints its port, then serves until killed (or for five minutes at most).
private let answerEveryName = """
    import http.server, json, os, threading, urllib.parse
    class Every(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            name = query.get("name", [""])[0] + "."
            kind = 1 if query.get("type", ["A"])[0] in ("1", "A") else 28
            answer = [{"name": name, "type": 1, "TTL": 60, "data": "127.0.0.1"}] if kind == 1 else []
            body = json.dumps({"Status": 0, "Question": [{"name": name, "type": kind}], "Answer": answer}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/dns-json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Every)
    threading.Timer(300, os._exit, [0]).start()
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """

/// `ipdirect probe --input FILE` resolving through `endpoint` (DoH JSON), in a scratch directory.
private func probeInput(_ lines: String, endpoint: String) async throws -> ChildProcess.Result {
    let scratch = try ScratchDirectory("long-input")
    defer { scratch.remove() }
    let list = scratch.file("list.txt")
    try Data(lines.utf8).write(to: URL(fileURLWithPath: list))
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IPDIRECT_") }
    environment["XDG_CONFIG_HOME"] = scratch.path
    environment["XDG_CACHE_HOME"] = scratch.path
    return try await ChildProcess.run(
        ipdirectBinary!,
        [
            "probe", "--input", list, "--provider", "doh-json", "--endpoint", endpoint, "--timeout", "2",
            "--probe-timeout", "2",
        ], environment: environment, directory: scratch.path)
}

@Suite("Long and hostile --input lines")
struct LongInputTests {
    @Test(
        "the long-name list (two lines, a 300-character label) ends with a sentence, 20 runs out of 20",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary is not built"))
    func longNameListTwentyRuns() async throws {
        let service = try ChildProcess("/usr/bin/env", ["python3", "-c", answerEveryName])
        let port = try #require(try await service.nextLine(within: 30), "the HTTPDNS stand-in did not start")
        let line = "https://\(longLabelHost)/"
        for run in 1...20 {
            let result = try await probeInput("\(line)\n\(line)\n", endpoint: "http://127.0.0.1:\(port)/resolve")
            #expect(result.status < 128, "run \(run) ended by signal \(result.status - 128): \(result.errors)")
            #expect(result.status != 0, "run \(run): the long name was probed")
            #expect(
                result.errors.contains("line 1:") && result.errors.contains("line 2:")
                    && result.errors.contains("longer than 63"), "run \(run): \(result.errors)")
            if result.status >= 128 { break }
        }
    }

    @Test("names past 253 bytes or with a label past 63 are refused with a sentence, before resolution")
    func longNamesRefused() throws {
        #expect(throws: ProbeURLError.self) { try ProbeURL.parse("https://\(longLabelHost)/") }
        do {
            _ = try ProbeURL.parse("https://\(longLabelHost)/")
        } catch {
            #expect(error.reason.contains("300 bytes") && error.reason.contains("longer than 63"), "\(error.reason)")
        }
        let label63 = String(repeating: "b", count: 63)
        #expect(try ProbeURL.parse("https://\(label63).example/").host == "\(label63).example")
        // Four labels of 63 and the dots: 255 bytes, each label allowed, the name too long.
        let long = Array(repeating: label63, count: 4).joined(separator: ".")
        do {
            _ = try ProbeURL.parse("https://\(long)/")
            Issue.record("a 255-byte name was accepted")
        } catch {
            #expect(error.reason.contains("255 bytes") && error.reason.contains("253"), "\(error.reason)")
        }
        // 253 bytes is allowed, and so is its trailing dot.
        let longest = String(long.prefix(253))
        #expect(try ProbeURL.parse("https://\(longest)./").host == longest)
    }

    @Test("a NUL byte in a URL is an error, never a probe of what comes before it")
    func nulRefused() throws {
        do {
            _ = try ProbeURL.parse("https://a.example/\u{0}https://b.example/")
            Issue.record("a URL with a NUL byte was accepted")
        } catch {
            #expect(error.reason.contains("NUL"), "\(error.reason)")
        }
    }

    @Test("a URL of a megabyte is quoted in its error cut to a few hundred bytes, with its length")
    func longInputCutInErrors() throws {
        let huge = "https://" + String(repeating: "x", count: 1_000_000) + "/"
        do {
            _ = try ProbeURL.parse(huge)
            Issue.record("a megabyte URL was accepted")
        } catch {
            #expect(error.description.utf8.count < 600, "\(error.description.utf8.count) bytes")
            #expect(error.description.contains("1000009 bytes"), "\(error.description.prefix(600))")
        }
    }

    @Test(
        "--input: a NUL line and a megabyte line are errors naming their lines, quoted short",
        .enabled(if: ipdirectBinary != nil, "the ipdirect binary is not built"))
    func inputLinesNamed() async throws {
        try await withLab { lab in
            let huge = "https://" + String(repeating: "x", count: 2_000_000) + ".example/"
            let lines = "# a comment\nhttps://a.example/\u{0}.lab.test/\n\(huge)\n"
            let result = try await probeInput(lines, endpoint: lab.endpoints.httpdns + "/resolve")
            #expect(result.status != 0 && result.status < 128, "\(result.status)")
            #expect(result.errors.contains("line 2:") && result.errors.contains("NUL"), "\(result.errors.prefix(2000))")
            #expect(result.errors.contains("line 3:"), "\(result.errors.prefix(2000))")
            #expect(result.errors.utf8.count < 2000, "\(result.errors.utf8.count) bytes on stderr")
            #expect(!result.output.contains("a.example"), "the NUL line's prefix was probed: \(result.output)")
        }
    }
}

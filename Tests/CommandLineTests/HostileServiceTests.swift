// `ipdirect resolve` against an HTTPDNS stand-in that answers every request with an error whose
// JSON `code` is made of escape sequences: nothing of it may reach the terminal as a control.
import Foundation
import TestSupport
import Testing

/// The stand-in: a Python HTTP server on loopback answering every GET and POST with HTTP 403 and
/// `{"code": PAYLOAD, "msg": PAYLOAD}`; it prints its port as a JSON line.
private let hostileServiceScript = #"""
    import http.server, json
    PAYLOAD = "\u001b]0;pwned\u0007\u001b[2J\r\nforged: line\u0085next\u2028sep\u2029para\u202egnp.exe\u2066x\u009b31m\u0000"
    BODY = json.dumps({"code": PAYLOAD, "msg": PAYLOAD}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)

        do_GET = answer
        do_POST = answer

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()
    """#

@Suite("A hostile HTTPDNS error code never reaches the terminal")
struct HostileServiceTests {
    /// Every way the bytes could act on a terminal: C0 controls but the line feeds the table
    /// writes, DEL, C1 controls (U+0080–U+009F, NEL among them), line and paragraph separators,
    /// bidi overrides and isolates.
    static func controls(in text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter { value in
            (value < 0x20 && value != 0x0A) || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
                || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
        }
    }

    @Test(
        "alicloud, alicloud-legacy, tencent, doh-json and doh: the escape payload in a 403's code is shown inert",
        arguments: [
            ["--provider", "alicloud", "--account", "100000", "--endpoint"],
            ["--provider", "alicloud-legacy", "--account", "100000", "--endpoint"],
            ["--provider", "tencent", "--endpoint"],
            ["--provider", "doh-json", "--endpoint", "/resolve"],
            ["--provider", "doh", "--endpoint", "/dns-query"],
        ])
    func errorCode(provider: [String]) async throws {
        let server = try ChildProcess(
            "/usr/bin/env", ["python3", "-u", "-c", hostileServiceScript], errors: .discarded)
        defer { server.signal(SIGKILL) }
        let first = try #require(try await server.nextLine(within: 30), "the stand-in did not start")
        let port = try #require(
            (try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])?["port"] as? Int)
        let base = "http://127.0.0.1:\(port)"
        // The endpoint is the base URL, or the base with the path the provider's URL takes.
        var arguments = provider
        if let path = arguments.last, path.hasPrefix("/") {
            arguments[arguments.count - 1] = base + path
        } else {
            arguments.append(base)
        }
        let scratch = try ScratchDirectory("hostile-service")
        defer { scratch.remove() }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = scratch.path
        environment["XDG_CONFIG_HOME"] = scratch.path
        // localhost comes from /etc/hosts: the system column sends nothing off this machine.
        for format in ["table", "json"] {
            let result = try await ChildProcess.run(
                BuiltBinary.ipdirectPath,
                ["resolve", "localhost", "--type", "v4", "--timeout", "5", "--format", format] + arguments,
                environment: environment)
            #expect(result.status != 128 + SIGKILL, "resolve did not end")
            #expect(Self.controls(in: result.output) == [], "stdout (\(format)): \(result.output.debugDescription)")
            #expect(Self.controls(in: result.errors) == [], "stderr (\(format)): \(result.errors.debugDescription)")
            // The error is still told, with the code made visible.
            #expect(result.output.contains("403"), "\(result.output)")
            #expect(!result.output.contains("\nforged: line"), "a forged line: \(result.output)")
        }
    }
}

// Traces over OTLP/HTTP protobuf, decoded by a receiver built on the official OpenTelemetry proto
// definitions (PyPI's opentelemetry-proto): spans, attributes and parent links; and a dead collector.
import Agent
import Foundation
import Lab
import NameResolution
import TestSupport
import Testing

/// Whether Python can decode OTLP with opentelemetry-proto (scripts/install-deps.sh installs it
/// before `make test`; pip is tried here only for a bare `swift test`).
let otlpProtoAvailable: Bool = {
    func check(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
    let probe = ["python3", "-c", "import opentelemetry.proto.collector.trace.v1.trace_service_pb2"]
    if check(probe) { return true }
    _ = check(["python3", "-m", "pip", "install", "--quiet", "opentelemetry-proto"])
    return check(probe)
}()

/// An OTLP/HTTP receiver in Python: decodes each ExportTraceServiceRequest with the official
/// protobuf classes and prints one JSON object per span.
private let receiverScript = #"""
    import http.server, json, sys
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    def value(v):
        kind = v.WhichOneof("value")
        return getattr(v, kind) if kind else None

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            request = trace_service_pb2.ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource_spans in request.resource_spans:
                resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        print(json.dumps({
                            "content_type": self.headers.get("Content-Type"),
                            "authorization": self.headers.get("Authorization"),
                            "trace": span.trace_id.hex(), "id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(), "name": span.name, "kind": span.kind,
                            "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                            "status": span.status.code,
                            "attributes": {a.key: value(a.value) for a in span.attributes},
                            "events": [e.name for e in span.events], "resource": resource,
                        }), flush=True)
            answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()
    """#

/// The Python receiver, running; its spans as they arrive (started with TestSupport's ChildProcess:
/// Foundation's Process.run crashed under the parallel suite).
private final class OTLPReceiver: @unchecked Sendable {
    let child: ChildProcess

    init() async throws {
        child = try ChildProcess("/usr/bin/env", ["python3", "-u", "-c", receiverScript], errors: .discarded)
        _ = await eventually(within: 30) { self.port > 0 }
    }

    /// Every complete JSON line the receiver printed so far.
    private var objects: [[String: Any]] {
        let text = child.outputText
        guard let end = text.lastIndex(of: "\n") else { return [] }
        return text[..<end].split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The port it listens on; 0 when it did not start.
    var port: Int { objects.lazy.compactMap { $0["port"] as? Int }.first ?? 0 }

    var spans: [[String: Any]] { objects.filter { $0["port"] == nil } }

    func stop() {
        // SIGKILL: a child of the test runner may start with SIGTERM ignored.
        child.signal(SIGKILL)
    }
}

@Suite("OTLP export")
struct OTLPExportTests {
    @Test(
        "a redirecting lab target arrives as one trace: probe, attempts, hops, with attributes and parents; OTEL_EXPORTER_OTLP_HEADERS are sent",
        .enabled(if: otlpProtoAvailable, "Python's opentelemetry-proto is not installed and pip could not install it"))
    func redirectTrace() async throws {
        let receiver = try await OTLPReceiver()
        defer { receiver.stop() }
        #expect(receiver.port > 0)
        let lab = try await Lab.start()
        let log = CapturedLog()
        let metrics = AgentMetrics(labels: [AgentLabel(name: "region", value: "lab-east")])
        let tracing = try AgentTracing(
            endpoint: "http://127.0.0.1:\(receiver.port)", labels: [AgentLabel(name: "region", value: "lab-east")],
            metrics: metrics, logger: log.logger,
            environment: ["OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20lab-token"])
        let target = try AgentTarget(lab.url("redirect.lab.test", "/echo?from=redirect.lab.test"))
        let agent = ProbeAgent(
            engine: lab.engine(try lab.resolverCache()), source: .fixed([target]),
            schedule: AgentSchedule(interval: 60, jitter: 0, concurrency: 1),
            sinks: AgentSinks(metrics: metrics, exporters: [tracing]), logger: log.logger)
        await withAgent(agent) {
            #expect(await eventually { agent.roundsCompleted >= 1 })
        }
        await tracing.finish(within: .seconds(10))
        #expect(await eventually(within: 30) { receiver.spans.contains { $0["name"] as? String == "ipdirect.probe" } })
        try await lab.shutdown()

        let spans = receiver.spans
        let root = try #require(spans.first { $0["name"] as? String == "ipdirect.probe" })
        #expect(root["content_type"] as? String == "application/x-protobuf")
        // OTEL_EXPORTER_OTLP_HEADERS reaches the collector, its value percent-decoded.
        #expect(root["authorization"] as? String == "Bearer lab-token")
        #expect(root["parent"] as? String == "")
        let rootAttributes = try #require(root["attributes"] as? [String: Any])
        #expect(rootAttributes["server.address"] as? String == "redirect.lab.test")
        #expect(rootAttributes["region"] as? String == "lab-east")
        let resource = try #require(root["resource"] as? [String: Any])
        #expect(resource["service.name"] as? String == "ipdirect-agent")
        #expect(resource["region"] as? String == "lab-east")
        let trace = try #require(root["trace"] as? String)
        #expect(spans.allSatisfy { $0["trace"] as? String == trace })

        // One span per attempt under the probe; the redirect's hops under each attempt.
        let attempts = spans.filter { $0["parent"] as? String == root["id"] as? String }
        let scenarios = Set(
            attempts.compactMap { ($0["attributes"] as? [String: Any])?["ipdirect.scenario"] as? String })
        #expect(scenarios.isSuperset(of: ["direct-https", "direct-sni"]))
        let sni = try #require(
            attempts.first { ($0["attributes"] as? [String: Any])?["ipdirect.scenario"] as? String == "direct-sni" })
        let sniAttributes = try #require(sni["attributes"] as? [String: Any])
        #expect(sniAttributes["ipdirect.outcome"] as? String == "ok")
        #expect(sniAttributes["ipdirect.resolver"] as? String == "httpdns")
        #expect(sniAttributes["http.request.method"] as? String == "GET")
        #expect(sniAttributes["http.response.status_code"] as? Int == 200)
        #expect(sni["kind"] as? Int == 3)  // SPAN_KIND_CLIENT
        let hops = spans.filter { $0["parent"] as? String == sni["id"] as? String }
            .sorted {
                (($0["attributes"] as? [String: Any])?["ipdirect.hop"] as? Int ?? 0)
                    < (($1["attributes"] as? [String: Any])?["ipdirect.hop"] as? Int ?? 0)
            }
        #expect(hops.count == 2)
        let first = try #require(hops.first?["attributes"] as? [String: Any])
        let second = try #require(hops.last?["attributes"] as? [String: Any])
        #expect(first["http.response.status_code"] as? Int == 302)
        #expect((first["url.full"] as? String)?.contains("redirect.lab.test") == true)
        #expect(second["server.address"] as? String == "sni-b.lab.test")
        #expect(second["network.peer.address"] as? String == "127.0.0.1")
        #expect((hops.last?["events"] as? [String])?.contains("tls") == true)
        #expect(log.lines(containing: "OTLP export").isEmpty)
    }

    @Test("a collector that is down: probing goes on, failures are counted and said")
    func collectorDown() async throws {
        let lab = try await Lab.start()
        let log = CapturedLog()
        let metrics = AgentMetrics(labels: [])
        let collector = RefusingPort()
        defer { collector.close() }
        let tracing = try AgentTracing(
            endpoint: "http://127.0.0.1:\(collector.port)", labels: [], metrics: metrics, logger: log.logger)
        let agent = ProbeAgent(
            engine: lab.engine(try lab.resolverCache()), source: .fixed([try AgentTarget(lab.url("plain.lab.test"))]),
            schedule: AgentSchedule(interval: 1, jitter: 0, concurrency: 1),
            sinks: AgentSinks(metrics: metrics, exporters: [tracing]), logger: log.logger)
        await withAgent(agent) {
            #expect(
                await eventually(within: 60) {
                    String(decoding: metrics.exposition(), as: UTF8.self).split(separator: "\n").contains {
                        $0.hasPrefix("ipdirect_export_failures_total{exporter=\"otlp\"}") && !$0.hasSuffix(" 0")
                    }
                })
            let rounds = agent.roundsCompleted
            #expect(await eventually { agent.roundsCompleted > rounds })
        }
        await tracing.finish(within: .seconds(1))
        try await lab.shutdown()
        #expect(log.lines(containing: "OTLP export to").count == 1)
    }
}

// The JSON `probe`, `resolve`, `doctor` and `audit` write, checked against the schemas users read (schema/*.json)
// with a JSON Schema validator, on real output from the lab: the schema is the contract.
import Foundation
import TestSupport
import Testing

@Suite struct JSONSchemaTests {
    /// The repository's schema folder and its checker (python3 with jsonschema, as for the HAR).
    static let schemaFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("schema")

    /// Lab names with every shape of result: hijacked DNS, SNI, plain http, a redirect, IPv6, junk
    /// from HTTPDNS, a wrong certificate, hostile text, a CNAME, a name that does not exist.
    static let names = [
        "hijacked", "sni-a", "plain", "redirect", "dual", "poisoned", "wrong-name", "hostile", "alias", "nxdomain",
    ].map { $0 + ".lab.test" }

    /// Runs `validate.py` on `file`; a missing python3 or jsonschema is a failure, never a pass.
    private func check(_ schema: String, _ file: String) async throws {
        let result = try await ChildProcess.run(
            "/usr/bin/env", ["python3", Self.schemaFolder.appendingPathComponent("validate.py").path, schema, file])
        #expect(result.status == 0, "\(schema): \(result.output)\(result.errors)")
    }

    @Test("probe --format json of lab names, ranked, passes schema/probe.schema.json")
    func probeOutput() async throws {
        let scratch = try ScratchDirectory("schema")
        defer { scratch.remove() }
        let file = scratch.file("probe.json")
        let run = try await ChildProcess.run(
            BuiltBinary.ipdirectPath,
            [
                "probe", "--lab", "--quiet", "--all-ips", "--rank", "--probe-timeout", "3", "--format", "json", "-o",
                file,
            ]
                + Self.names.map { "https://\($0)/" }, seconds: 120)
        #expect(run.status == 0 || run.status == 1, "\(run.errors)")
        let reports = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [[String: Any]])
        #expect(Set(reports.compactMap { $0["index"] as? Int }) == Set(0..<Self.names.count))
        try await check("probe", file)
    }

    @Test("resolve --format json of lab names, ranked and plain, passes schema/resolve.schema.json")
    func resolveOutput() async throws {
        let scratch = try ScratchDirectory("schema")
        defer { scratch.remove() }
        for (name, extra) in [("plain.json", [String]()), ("ranked.json", ["--rank", "443"])] {
            let run = try await ChildProcess.run(
                BuiltBinary.ipdirectPath, ["resolve", "--lab", "--format", "json"] + extra + Self.names, seconds: 120)
            #expect(run.status == 0 || run.status == 1, "\(run.errors)")
            let file = scratch.file(name)
            try Data(run.output.utf8).write(to: URL(fileURLWithPath: file))
            try await check("resolve", file)
        }
    }

    @Test("doctor --lab --format json, with a --host and a fault, passes schema/doctor.schema.json")
    func doctorOutput() async throws {
        let scratch = try ScratchDirectory("schema")
        defer { scratch.remove() }
        let run = try await ChildProcess.run(
            BuiltBinary.ipdirectPath,
            [
                "doctor", "--lab", "--fault", "nat64", "--host", "sni-a.lab.test", "--host", "nxdomain.lab.test",
                "--format", "json",
            ],
            seconds: 120)
        #expect([0, 1, 3].contains(run.status), "\(run.errors)")
        let file = scratch.file("doctor.json")
        try Data(run.output.utf8).write(to: URL(fileURLWithPath: file))
        try await check("doctor", file)
    }

    @Test(
        "audit --format json: the setup line and, after a reference client and Ctrl-C, the report line pass their schemas"
    )
    func auditOutput() async throws {
        let scratch = try ScratchDirectory("schema")
        defer { scratch.remove() }
        let audit = try ChildProcess(BuiltBinary.ipdirectPath, ["audit", "--format", "json"])
        let setup = try #require(try await audit.nextLine(within: 60), "no setup line: \(audit.errorsText)")
        let setupFile = scratch.file("audit-setup.json")
        try Data(setup.utf8).write(to: URL(fileURLWithPath: setupFile))
        let client = Self.schemaFolder.deletingLastPathComponent()
            .appendingPathComponent("Tests/AuditTests/Clients/reference_client.py").path
        let run = try await ChildProcess.run("/usr/bin/env", ["python3", client, "python-right", setupFile])
        #expect(run.status == 0, "\(run.errors)")
        audit.signal(SIGINT)
        let status = try await audit.exitStatus(within: 30)
        #expect(status == 0, "\(audit.errorsText)")
        let report = try #require(try await audit.nextLine(within: 5), "no report line: \(audit.errorsText)")
        let reportFile = scratch.file("audit.json")
        try Data(report.utf8).write(to: URL(fileURLWithPath: reportFile))
        #expect(report.contains(#""status":"pass""#) && !report.contains(#""status":"fail""#), "\(report)")
        try await check("audit-setup", setupFile)
        try await check("audit", reportFile)
    }
}

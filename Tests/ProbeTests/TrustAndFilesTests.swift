// --cacert adds to the system's CAs instead of replacing them, and what a probe writes to disk
// (JSON Lines, HAR) is the user's alone and flushed when the batch ends.
import CurlTransport
import Foundation
import Lab
import Probe
import TestSupport
import Testing

@Suite("Trust and files")
struct TrustAndFilesTests {
    @Test("an extra CA file is added to the system bundle, so public names still verify beside it")
    func extraCAAddsToSystem() async throws {
        let system = try #require(CABundle.system, "no system CA bundle on this machine")
        try await withLab { lab in
            let combined = CABundle.path(adding: lab.endpoints.ca)
            #expect(combined != lab.endpoints.ca)
            let text = try #require(FileManager.default.contents(atPath: combined))
            let systemPEM = try #require(FileManager.default.contents(atPath: system))
            let labPEM = try #require(FileManager.default.contents(atPath: lab.endpoints.ca))
            #expect(text.starts(with: systemPEM))
            #expect(text.suffix(labPEM.count) == labPEM)
            let mode = (try FileManager.default.attributesOfItem(atPath: combined))[.posixPermissions] as? Int
            #expect(mode == 0o600)
            // Built once per extra file, and the lab's names still verify through it, as --cacert sets it up.
            #expect(CABundle.path(adding: lab.endpoints.ca) == combined)
            var options = ProbeOptions(scenarios: [.directSNI])
            options.caFileAddsToSystem = true
            let reports = await lab.engine(options).probeAll([lab.url("sni-a.lab.test")])
            #expect(reports.first?.outcome(.directSNI) == .ok)
        }
    }

    @Test("JSON Lines and HAR files are written 0600, even over a file others could read")
    func exportsArePrivate() async throws {
        let scratch = try ScratchDirectory("files")
        defer { scratch.remove() }
        let directory = scratch.path
        try await withLab { lab in
            let reports = await lab.engine(ProbeOptions(scenarios: [.directSNI])).probeAll([lab.url("sni-a.lab.test")])
            for (name, format) in [("out.jsonl", ReportWriter.Format.jsonLines), ("out.har", .har)] {
                let path = directory + "/" + name
                #expect(FileManager.default.createFile(atPath: path, contents: Data("old".utf8)))
                chmod(path, 0o644)
                let writer = try ReportWriter(format, path: path)
                for report in reports { writer.record(report) }
                writer.finish()
                let mode = (try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(name)")
            }
        }
    }
}

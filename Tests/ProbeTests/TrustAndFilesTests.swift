// --cacert adds to the system's CAs instead of replacing them, and what a probe writes to disk
// (JSON Lines, HAR) is the user's alone and flushed when the batch ends.
import CoreFoundation
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

    @Test("the combined CA file is built in a fresh 0700 directory of ours, not a folder someone made first")
    func combinedBundleDirectoryIsOurs() throws {
        let scratch = try ScratchDirectory("ca-plant")
        defer { scratch.remove() }
        let system = scratch.file("system.pem")
        let extra = scratch.file("extra.pem")
        #expect(FileManager.default.createFile(atPath: system, contents: Data("SYSTEM\n".utf8)))
        #expect(FileManager.default.createFile(atPath: extra, contents: Data("EXTRA\n".utf8)))
        // What another local user could plant: the folder the old name would use, open to all,
        // holding a CA file of theirs under each name a bundle would get.
        let planted = NSTemporaryDirectory() + "ipdirect-ca-\(getpid())"
        let existed = FileManager.default.fileExists(atPath: planted)
        if !existed { #expect(mkdir(planted, 0o777) == 0) }
        defer { if !existed { try? FileManager.default.removeItem(atPath: planted) } }
        chmod(planted, 0o777)
        for index in 0..<8 {
            #expect(
                FileManager.default.createFile(atPath: planted + "/\(index).pem", contents: Data("ATTACKER\n".utf8)))
        }

        let combined = CABundle.path(adding: extra, system: system)
        #expect(combined != extra)
        let directory = (combined as NSString).deletingLastPathComponent
        #expect(directory != planted, "the bundle is not in the guessable folder")
        // Foundation's attributes (lstat underneath, a link not followed): `struct stat`'s fields
        // stopped being visible here once the Probe module imported more of FoundationGaps
        // (MemberImportVisibility placed them in CDispatch).
        let info = try FileManager.default.attributesOfItem(atPath: directory)
        #expect(info[.type] as? FileAttributeType == .typeDirectory)
        #expect((info[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect((info[.ownerAccountID] as? NSNumber)?.uint32Value == geteuid())
        #expect(FileManager.default.contents(atPath: combined) == Data("SYSTEM\n\nEXTRA\n".utf8))
        // The planted files are left as they were, and none of them is trusted.
        #expect(FileManager.default.contents(atPath: planted + "/0.pem") == Data("ATTACKER\n".utf8))
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

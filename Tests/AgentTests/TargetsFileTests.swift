// The agent's targets file: the `probe --input` format, re-read on change; a deleted, broken or
// emptied file keeps the last good list, and says so once.
import Agent
import Foundation
import Testing

@Suite("Targets file")
struct TargetsFileTests {
    @Test("the --input format: one URL a line, comments and blank lines skipped, each URL once")
    func format() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.file("targets.txt")
        try "# the fleet's list\nhttps://a.example/x\n\n  b.example:8443/health  # port kept\nhttps://a.example/x\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let file = try TargetsFile(path: path)
        #expect(file.targets.map(\.url) == ["https://a.example/x", "b.example:8443/health"])
        // The path never becomes a label: two URLs on one host share one.
        #expect(file.targets.map(\.label) == ["a.example", "b.example:8443"])
    }

    @Test("a change is loaded; a deleted, broken or empty file keeps the last good list and says why")
    func keepsLastGood() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.file("targets.txt")
        try "https://a.example/\n".write(toFile: path, atomically: true, encoding: .utf8)
        let file = try TargetsFile(path: path)
        #expect(file.check() == .unchanged)

        try "https://a.example/\nhttps://b.example/\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(file.check() == .loaded(count: 2))

        try "https://a.example/\nhttps://exa mple/\n".write(toFile: path, atomically: true, encoding: .utf8)
        guard case .keptLast(let count, let problem) = file.check() else {
            Issue.record("a broken line was accepted")
            return
        }
        #expect(count == 2)
        #expect(problem.description.contains("line 2"))
        // Said once: the same broken file is not reported every second.
        #expect(file.check() == .unchanged)
        #expect(file.targets.count == 2)

        try FileManager.default.removeItem(atPath: path)
        guard case .keptLast(_, let gone) = file.check() else {
            Issue.record("a deleted file was not noticed")
            return
        }
        #expect(gone.description.contains("does not exist"))
        #expect(file.targets.map(\.url) == ["https://a.example/", "https://b.example/"])

        try "# nothing yet\n".write(toFile: path, atomically: true, encoding: .utf8)
        guard case .keptLast(_, .empty) = file.check() else {
            Issue.record("an empty list replaced the targets")
            return
        }
        // SIGHUP re-reads even an unchanged file, and says the problem again.
        guard case .keptLast = file.check(force: true) else {
            Issue.record("a forced reload said nothing")
            return
        }

        try "https://c.example/\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(file.check() == .loaded(count: 1))
        #expect(file.targets.map(\.url) == ["https://c.example/"])
    }

    @Test("a file that is unusable at start is refused with the reason")
    func refusedAtStart() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        #expect(throws: TargetListError.self) { try TargetsFile(path: scratch.file("missing.txt")) }
    }

    @Test("labels: NAME=VALUE, names Prometheus accepts, none of ipdirect's own")
    func labels() throws {
        let label = try AgentLabel(parsing: "region=cn-hangzhou")
        #expect(label.name == "region" && label.value == "cn-hangzhou")
        #expect(try AgentLabel(parsing: "carrier=").value == "")
        for bad in ["region", "1region=x", "re-gion=x", "target=x", "__name=x", "=x"] {
            #expect(throws: AgentSettingError.self) { try AgentLabel(parsing: bad) }
        }
    }

    @Test("rotation sizes as people write them")
    func sizes() throws {
        #expect(try ByteSize.parse("100MB") == 100 * 1024 * 1024)
        #expect(try ByteSize.parse("512k") == 512 * 1024)
        #expect(try ByteSize.parse("1GiB") == 1024 * 1024 * 1024)
        #expect(try ByteSize.parse("4096") == 4096)
        for bad in ["", "MB", "10", "1TB", "-5MB"] {
            #expect(throws: AgentSettingError.self) { try ByteSize.parse(bad) }
        }
    }
}

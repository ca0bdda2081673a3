// How the doctor asks `resolvectl status` where a local stub forwards, with a script standing in
// for resolvectl: what it writes is read, its errors are not, and one that hangs is left behind.

import Foundation
import TestSupport
import Testing

@testable import Doctor

@Suite struct ResolvedUpstreamTests {
    /// A stand-in resolvectl running `body` (sh), in `scratch`.
    ///
    /// Written through a close-on-exec descriptor: Foundation's `write(toFile:atomically:)` opens
    /// its file without O_CLOEXEC, so a program another test started meanwhile could hold it open
    /// for writing, and starting this script then failed with ETXTBSY ("Text file busy"), read as
    /// no resolvectl (seen under load in CI, and about one run in ten alone).
    private func program(_ body: String, in scratch: ScratchDirectory) throws -> String {
        let path = scratch.file("resolvectl")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        try #require(descriptor >= 0, "cannot create \(path): errno \(errno)")
        defer { close(descriptor) }
        let text = Array(("#!/bin/sh\n" + body + "\n").utf8)
        try #require(text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == text.count)
        return path
    }

    @Test("the servers resolvectl status lists are read from its output; what it writes to standard error is not")
    func readsOutputNotErrors() async throws {
        let scratch = try ScratchDirectory("resolvectl")
        defer { scratch.remove() }
        let path = try program(
            """
            [ "$*" = "status --no-pager" ] || { echo "DNS Servers: 192.0.2.99"; exit 1; }
            echo "DNS Servers: 198.51.100.1" >&2
            printf 'Global\\n  Current DNS Server: 192.0.2.53\\n  DNS Servers: 192.0.2.53 2001:db8::53\\n'
            """, in: scratch)
        let servers = await ResolvedUpstream.servers(within: .seconds(10), programs: [path])
        #expect(servers == ["192.0.2.53", "2001:db8::53"])
    }

    @Test("resolvectl gets none of ipdirect's open files beyond its standard three")
    func passesNoOtherDescriptor() async throws {
        let scratch = try ScratchDirectory("resolvectl")
        defer { scratch.remove() }
        // Open without close-on-exec, as NIO's sockets are.
        let descriptor = open("/dev/null", O_RDONLY)
        try #require(descriptor > 2)
        defer { close(descriptor) }
        let path = try program(
            """
            if [ -e /proc/$$/fd/\(descriptor) ]; then echo "DNS Servers: 192.0.2.2"; else echo "DNS Servers: 192.0.2.1"; fi
            """, in: scratch)
        let servers = await ResolvedUpstream.servers(within: .seconds(10), programs: [path])
        #expect(servers == ["192.0.2.1"])
    }

    @Test("a resolvectl that does not answer within the step's time reads as none; a missing one too")
    func hangingOrMissingIsNil() async throws {
        let scratch = try ScratchDirectory("resolvectl")
        defer { scratch.remove() }
        let path = try program("sleep 3\necho 'DNS Servers: 192.0.2.53'", in: scratch)
        #expect(await ResolvedUpstream.servers(within: .milliseconds(200), programs: [path]) == nil)
        #expect(await ResolvedUpstream.servers(within: .seconds(10), programs: [scratch.file("absent")]) == nil)
    }
}

// How the doctor asks `resolvectl status` where a local stub forwards, with a script standing in
// for resolvectl: what it writes is read, its errors are not, and one that hangs is left behind.

import Foundation
import TestSupport
import Testing

@testable import Doctor

@Suite struct ResolvedUpstreamTests {
    /// A stand-in resolvectl running `body` (sh), in `scratch`.
    private func program(_ body: String, in scratch: ScratchDirectory) throws -> String {
        let path = scratch.file("resolvectl")
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
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

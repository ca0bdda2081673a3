// Which listening sockets a process holds, and whether any of them is still listening after it
// has gone: a port number cannot say, since another test may bind the same port meanwhile.
import Foundation
import NameResolution

/// Listening TCP sockets, named by their kernel inode (unique while the socket lives).
public enum ListeningSockets {
    /// The inodes of the sockets `pid` has open (Linux /proc; empty where there is none).
    public static func held(by pid: pid_t) -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var inodes: Set<String> = []
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)"),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
        }
        return inodes
    }

    /// The inodes of every TCP socket on this machine in the LISTEN state (IPv4 and IPv6).
    public static func listening() -> Set<String> {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // TextFile reads to the end: a parallel test run holds far more than the first page.
            guard let text = try? TextFile.contents(of: table) else { continue }
            // Columns: sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...; st 0A is LISTEN.
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[3] == "0A" else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }
}

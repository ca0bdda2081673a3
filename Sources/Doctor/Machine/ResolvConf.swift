// /etc/resolv.conf as the system resolver reads it (nameservers, search list, ndots), and where a
// local stub such as systemd-resolved's 127.0.0.53 forwards, as `resolvectl status` tells.

import CurlTransport
import FoundationEssentials
import FoundationGaps
import NameResolution

/// The settings of a resolv.conf that matter to a lookup.
struct ResolvConf: Sendable, Equatable {
    /// The `nameserver` addresses, in order (glibc asks at most the first three).
    var nameservers: [IPAddress]
    /// The `search` (or `domain`) list: suffixes tried for names with fewer dots than `ndots`.
    var search: [String]
    /// `options ndots:N`; 1 when not set, as in glibc.
    var ndots: Int
    /// Lines that name a nameserver that is not an address.
    var junk: [String]

    /// Reads resolv.conf's text: the last `search` or `domain` line wins, as in glibc.
    init(_ text: String) {
        nameservers = []
        search = []
        ndots = 1
        junk = []
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.split(whereSeparator: { $0 == "#" || $0 == ";" }).first.map(String.init) ?? ""
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let keyword = words.first else { continue }
            switch keyword {
            case "nameserver" where words.count >= 2:
                // A zone (`fe80::1%eth0`) is dropped: the address alone is what can be asked.
                if let address = IPAddress(String(words[1].prefix { $0 != "%" })) {
                    nameservers.append(address)
                } else {
                    junk.append(words[1])
                }
            case "search":
                search = Array(words.dropFirst())
            case "domain" where words.count >= 2:
                search = [words[1]]
            case "options":
                for option in words.dropFirst() where option.hasPrefix("ndots:") {
                    ndots = Int(option.dropFirst("ndots:".count)).map { min(max($0, 0), 15) } ?? ndots
                }
            default:
                continue
            }
        }
    }

    /// Reads the file at `path`.
    ///
    /// - Throws: `TextFileError` saying why it cannot be read.
    static func read(_ path: String) throws(TextFileError) -> ResolvConf {
        ResolvConf(try TextFile.contents(of: path, accepting: .regularFile))
    }

    /// The nameservers on this machine itself (127.0.0.0/8, ::1): a local stub that forwards.
    var localStubs: [IPAddress] {
        nameservers.filter { $0.family == .v4 ? $0.text.hasPrefix("127.") : $0.text == "::1" }
    }

    /// One line: `nameserver 10.0.0.53, search corp.example, ndots 1`.
    var summary: String {
        let servers =
            nameservers.isEmpty ? "no nameserver" : "nameserver " + nameservers.map(\.text).joined(separator: ", ")
        let suffixes = search.isEmpty ? "no search list" : "search " + search.joined(separator: " ")
        return "\(servers), \(suffixes), ndots \(ndots)"
    }
}

/// What `resolvectl status` says the local stub forwards to.
enum ResolvedUpstream {
    /// The upstream servers `resolvectl status` lists (`Current DNS Server:` and `DNS Servers:`
    /// lines, every link), in order, each once; nil when resolvectl is not installed or does not
    /// answer within `timeout`.
    ///
    /// - Parameter programs: where resolvectl may be, the first executable one is run (tests give
    ///   a script of their own).
    static func servers(
        within timeout: Duration, programs: [String] = ["/usr/bin/resolvectl", "/bin/resolvectl"]
    ) async -> [String]? {
        guard let path = programs.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return nil
        }
        // On a thread of its own: a resolvectl that hangs is left behind at the deadline.
        let output = await Deadline.first(within: timeout) { (done: @escaping @Sendable (String?) -> Void) in
            detachThread(named: "resolvectl") { done(ProgramOutput.of(path, ["status", "--no-pager"])) }
        }
        guard let output, let text = output else { return nil }
        return parse(status: text)
    }

    /// The servers of `resolvectl status`'s text.
    static func parse(status text: String) -> [String] {
        var servers: [String] = []
        // A list goes on over the lines under its label (those without a `Label: ` of their own).
        var inList = false
        for line in text.split(whereSeparator: \.isNewline) {
            var rest = line.trimmingWhitespace()
            if let label = ["Current DNS Server:", "DNS Servers:"].first(where: { rest.hasPrefix($0) }) {
                rest = String(rest.dropFirst(label.count))
                inList = true
            } else if rest.contains(": ") || rest.hasSuffix(":") || rest.isEmpty {
                inList = false
            }
            guard inList else { continue }
            // `1.1.1.1#cloudflare-dns.com` (DNS over TLS) and `fe80::1%2` name an address too.
            for word in rest.split(separator: " ").map(String.init) where !servers.contains(word) {
                let address = word.split(whereSeparator: { $0 == "#" || $0 == "%" }).first.map(String.init) ?? ""
                if IPAddress(address) != nil { servers.append(word) }
            }
        }
        return servers
    }
}

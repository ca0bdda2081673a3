// What /etc/resolv.conf tells the system resolver: its name servers, search list and ndots, read
// the way glibc reads them (first word of a line, `#` and `;` comments), for the checks that ask it.
import Foundation
import NameResolution

/// The settings of one resolv.conf file.
public struct ResolvConf: Sendable, Equatable {
    /// The `nameserver` lines that are IP addresses, in order (the resolver asks the first first).
    public var nameservers: [IPAddress] = []
    /// The `search` (or `domain`) list, the last such line winning as in glibc.
    public var search: [String] = []
    /// `options ndots:N`; 1 when not set.
    public var ndots = 1

    public init(nameservers: [IPAddress] = [], search: [String] = [], ndots: Int = 1) {
        self.nameservers = nameservers
        self.search = search
        self.ndots = ndots
    }

    /// Reads resolv.conf text; lines it does not know are left alone.
    public init(parsing text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let keyword = words.first, !keyword.hasPrefix("#"), !keyword.hasPrefix(";") else { continue }
            let values = Array(words.dropFirst())
            switch keyword {
            case "nameserver":
                // A zone (`fe80::1%eth0`) is dropped: the address alone is what can be asked.
                if let value = values.first, let address = IPAddress(String(value.prefix { $0 != "%" })) {
                    nameservers.append(address)
                }
            case "search", "domain":
                search = values
            case "options":
                for option in values where option.hasPrefix("ndots:") {
                    if let value = Int(option.dropFirst("ndots:".count)) { ndots = min(max(value, 0), 15) }
                }
            default:
                break
            }
        }
    }

    /// Reads the file at `path`.
    ///
    /// - Throws: `TextFileError` saying why it cannot be read.
    public static func read(_ path: String) throws(TextFileError) -> ResolvConf {
        ResolvConf(parsing: try TextFile.contents(of: path))
    }
}

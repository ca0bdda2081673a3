// DNS messages for RFC 8484 DoH and a chosen DNS server, built and read by c-ares: a query for
// one name and family, and a reply's addresses with their TTLs (CNAME chains followed by c-ares).
import CCAres
import Foundation
import TerminalText

/// What a DNS reply said about one name and family, before the IP-literal screen.
struct DNSReplyAddresses: Sendable, Equatable {
    /// The addresses as text (c-ares gives binary addresses; `inet_ntop` writes them).
    var raw: [String]
    /// The smallest TTL of the addresses (c-ares caps each by the CNAMEs leading to it); nil when none.
    var ttl: Int?
    /// The CNAME chain the answer followed, first alias first (empty when the name had none).
    var aliases: [String]
}

/// Why a DNS reply was not usable, named so each front end can say it in its own words.
enum DNSReplyProblem: Error, Sendable, Equatable {
    /// RCODE 3: the name does not exist.
    case nxdomain
    /// NOERROR with no record of the family asked.
    case noData
    /// RCODE 2.
    case serverFailure
    /// RCODE 5.
    case refused
    /// Another non-zero RCODE.
    case rcode(Int)
    /// The reply's id is not the query's.
    case wrongID(expected: UInt16, got: UInt16)
    /// The reply answers another question than the one asked.
    case otherName(String)
    /// Shorter than a header, not a response, or c-ares could not read it.
    case unreadable(String)

    /// The part of a sentence after "the reply ...", for error messages.
    var clause: String {
        switch self {
        case .nxdomain: return "says the name does not exist (NXDOMAIN)"
        case .noData: return "has no address of that family"
        case .serverFailure: return "is SERVFAIL (the server could not resolve the name)"
        case .refused: return "is REFUSED (the server will not answer this client)"
        case .rcode(let code): return "carries DNS error code \(code)"
        case .wrongID(let expected, let got): return "carries id \(got), not the query's \(expected)"
        case .otherName(let name): return "answers for \(TerminalText.quoted(name)), a name that was not asked"
        case .unreadable(let why): return "cannot be read (\(why))"
        }
    }
}

/// Queries and replies through c-ares.
enum DNSMessage {
    /// The DNS record type of a family.
    static func recordType(_ family: IPFamily) -> Int32 { family == .v4 ? 1 : 28 }

    /// A recursive query for `host` (class IN, type A or AAAA) with `id`.
    ///
    /// - Throws: `DNSReplyProblem.unreadable` when c-ares refuses the name (too long a label...).
    static func query(_ host: String, family: IPFamily, id: UInt16) throws(DNSReplyProblem) -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        // max_udp_size 0: no EDNS record, the plain query `dig +noedns` sends.
        let status = ares_create_query(host, 1, recordType(family), id, 1, &buffer, &length, 0)
        guard status == ARES_SUCCESS, let buffer else {
            throw .unreadable("c-ares cannot make a query for this name: \(String(cString: ares_strerror(status)))")
        }
        defer { ares_free_string(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    /// The header fields a reply is judged by before c-ares parses the rest.
    struct Header: Sendable, Equatable {
        var id: UInt16
        var rcode: Int
        var truncated: Bool
        var isResponse: Bool
    }

    /// Reads the header of `message`; nil when it is shorter than a header.
    static func header(_ message: [UInt8]) -> Header? {
        guard message.count >= Int(cares_header_size()) else { return nil }
        return message.withUnsafeBufferPointer { p in
            let h = p.baseAddress!
            return Header(
                id: cares_header_id(h), rcode: Int(cares_header_rcode(h)), truncated: cares_header_tc(h) != 0,
                isResponse: cares_header_qr(h) != 0)
        }
    }

    /// The name of the reply's first question, as c-ares expands it.
    static func questionName(_ message: [UInt8]) -> String? {
        guard message.count > Int(cares_header_size()) else { return nil }
        return message.withUnsafeBufferPointer { p -> String? in
            var name: UnsafeMutablePointer<CChar>?
            var consumed = 0
            let base = p.baseAddress!
            guard
                ares_expand_name(base + Int(cares_header_size()), base, Int32(p.count), &name, &consumed)
                    == ARES_SUCCESS, let name
            else { return nil }
            defer { ares_free_string(name) }
            return String(cString: name)
        }
    }

    /// Reads the addresses of `family` for `host` from a reply to a query with `id`.
    ///
    /// - Parameter id: the query's id; nil skips the check (c-ares has already matched it).
    /// - Throws: `DNSReplyProblem` saying what is wrong with the reply.
    static func addresses(
        in reply: [UInt8], host: String, family: IPFamily, id: UInt16?
    ) throws(DNSReplyProblem) -> DNSReplyAddresses {
        guard let header = header(reply) else {
            throw .unreadable("\(reply.count) bytes, shorter than a DNS header")
        }
        guard header.isResponse else { throw .unreadable("it is a query, not a response") }
        if let id, header.id != id { throw .wrongID(expected: id, got: header.id) }
        switch header.rcode {
        case 0: break
        case 2: throw .serverFailure
        case 3: throw .nxdomain
        case 5: throw .refused
        default: throw .rcode(header.rcode)
        }
        guard let asked = questionName(reply) else { throw .unreadable("its question section is cut short") }
        if asked.lowercased() != trimmedDot(host).lowercased() { throw .otherName(asked) }
        let capacity = 64
        return try reply.withUnsafeBufferPointer { (p) throws(DNSReplyProblem) -> DNSReplyAddresses in
            var hostent: UnsafeMutablePointer<hostent>?
            var count = Int32(capacity)
            var raw: [String] = []
            var ttls: [Int] = []
            let status: Int32
            if family == .v4 {
                var records = [ares_addrttl](repeating: ares_addrttl(), count: capacity)
                status = ares_parse_a_reply(p.baseAddress, Int32(p.count), &hostent, &records, &count)
                if status == ARES_SUCCESS {
                    for record in records.prefix(Int(count)) {
                        var address = record.ipaddr
                        raw.append(text(&address, family: AF_INET, size: MemoryLayout<in_addr>.size))
                        ttls.append(Int(record.ttl))
                    }
                }
            } else {
                var records = [ares_addr6ttl](repeating: ares_addr6ttl(), count: capacity)
                status = ares_parse_aaaa_reply(p.baseAddress, Int32(p.count), &hostent, &records, &count)
                if status == ARES_SUCCESS {
                    for record in records.prefix(Int(count)) {
                        var address = record.ip6addr
                        raw.append(text(&address, family: AF_INET6, size: 16))
                        ttls.append(Int(record.ttl))
                    }
                }
            }
            defer { if let hostent { ares_free_hostent(hostent) } }
            switch status {
            case ARES_SUCCESS: break
            case ARES_ENODATA: throw .noData
            default: throw .unreadable(String(cString: ares_strerror(status)))
            }
            var aliases: [String] = []
            if let list = hostent?.pointee.h_aliases {
                var index = 0
                while let alias = list[index] {
                    aliases.append(String(cString: alias))
                    index += 1
                }
            }
            return DNSReplyAddresses(raw: raw, ttl: ttls.min(), aliases: aliases)
        }
    }

    private static func text<T>(_ address: inout T, family: Int32, size: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let written = withUnsafePointer(to: &address) { pointer in
            ares_inet_ntop(family, pointer, &buffer, ares_socklen_t(buffer.count))
        }
        guard written != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func trimmedDot(_ name: String) -> String {
        name.hasSuffix(".") ? String(name.dropLast()) : name
    }
}

// DNS messages for RFC 8484 DoH and a chosen DNS server, built and read by c-ares: a query for
// one name and family, and a reply's addresses with their TTLs (CNAME chains followed by c-ares).
import CCAres
import FoundationEssentials
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a DNS reply said about one name and family, before the IP-literal screen.
struct DNSReplyAddresses: Sendable, Equatable {
    /// The addresses as text (c-ares gives binary addresses; `inet_ntop` writes them), at most
    /// `DNSMessage.maxAddressesPerFamily`.
    var raw: [String]
    /// The smallest TTL of the addresses (c-ares caps each by the CNAMEs leading to it); nil when none.
    var ttl: Int?
    /// The CNAME targets the answer led through, first first, ending at the name that holds the
    /// addresses (empty when the name had no CNAME), as dig's answer section reads.
    var aliases: [String]
    /// How many addresses of the family the reply held: more than `raw` only when the bound cut it.
    var sent: Int

    init(raw: [String], ttl: Int?, aliases: [String], sent: Int? = nil) {
        self.raw = raw
        self.ttl = ttl
        self.aliases = aliases
        self.sent = sent ?? raw.count
    }
}

/// A DNS response code by its name and what it means for the person asking (RFC 1035, RFC 6895).
public struct DNSRcode: Sendable, Hashable, CustomStringConvertible {
    /// The four-bit RCODE of the header.
    public var code: Int

    public init(code: Int) { self.code = code }

    public static let formatError = DNSRcode(code: 1)
    public static let serverFailure = DNSRcode(code: 2)
    public static let nameError = DNSRcode(code: 3)
    public static let notImplemented = DNSRcode(code: 4)
    public static let refused = DNSRcode(code: 5)

    /// The mnemonic dig prints: `SERVFAIL`, `NXDOMAIN`...; `RCODE 9` for the rest.
    public var description: String {
        switch code {
        case 0: return "NOERROR"
        case 1: return "FORMERR"
        case 2: return "SERVFAIL"
        case 3: return "NXDOMAIN"
        case 4: return "NOTIMP"
        case 5: return "REFUSED"
        default: return "RCODE \(code)"
        }
    }

    /// What the code means for the user, and what to do about it.
    public var meaning: String {
        switch code {
        case 1:
            return
                "the server could not read the query: it may not understand EDNS or this form of query; compare with dig +noedns"
        case 2:
            return
                "the resolver failed to get an answer upstream: its upstream servers failed, timed out or did not validate; try again later or another resolver"
        case 3: return "the name does not exist"
        case 4: return "the server does not implement this kind of query"
        case 5:
            return
                "the server answered but will not resolve this name for this client: a policy or access list; use a resolver that serves you"
        default: return "the server answered with DNS error code \(code)"
        }
    }
}

/// Why a DNS reply was not usable, named so each front end can say it in its own words.
enum DNSReplyProblem: Error, Sendable, Equatable {
    /// A non-zero RCODE: NXDOMAIN, SERVFAIL, REFUSED...
    case rcode(DNSRcode)
    /// NOERROR with no record of the family asked (NODATA): the name exists.
    case noData
    /// The reply's id is not the query's.
    case wrongID(expected: UInt16, got: UInt16)
    /// The reply answers another question than the one asked.
    case otherName(String)
    /// Shorter than a header, not a response, or c-ares could not read it.
    case unreadable(String)

    /// The part of a sentence after "the reply ...", for error messages.
    var clause: String {
        switch self {
        case .rcode(let rcode): return "is \(rcode): \(rcode.meaning)"
        case .noData: return "says the name exists but has no address of that family (NODATA)"
        case .wrongID(let expected, let got): return "carries id \(got), not the query's \(expected)"
        case .otherName(let name): return "answers for \(TerminalText.quoted(name)), a name that was not asked"
        case .unreadable(let why): return "cannot be read (\(why))"
        }
    }
}

/// Queries and replies through c-ares.
enum DNSMessage {
    /// The most addresses of one family read from one reply: as many A records as a full 64 KB
    /// message holds (16 bytes each with a compressed name), so no answer over UDP or TCP is cut.
    /// Only a DoH body larger than any DNS message can reach it; the count of what came is kept.
    static let maxAddressesPerFamily = 65535 / 16

    /// The DNS record type of a family.
    static func recordType(_ family: IPFamily) -> Int32 { family == .v4 ? 1 : 28 }

    /// The UDP payload size offered with EDNS(0): the DNS flag day 2020 figure, large enough for
    /// most answers without TCP, small enough not to fragment.
    static let ednsPayloadSize: Int32 = 1232

    /// RFC 8467's block for padded queries: every query is a multiple of this many bytes.
    static let paddingBlock = 128

    /// A recursive query for `host` (class IN, type A or AAAA) with `id`, offering EDNS(0).
    ///
    /// - Parameter padded: add an RFC 7830 padding option so the length is a multiple of
    ///   `paddingBlock` (RFC 8467), for encrypted transports (DoH); c-ares 1.18 has no padding.
    /// - Throws: `DNSReplyProblem.unreadable` when c-ares refuses the name (too long a label...).
    static func query(
        _ host: String, family: IPFamily, id: UInt16, padded: Bool = false
    ) throws(DNSReplyProblem) -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        // A non-zero max_udp_size appends the OPT record: 11 bytes, last in the message.
        let status = ares_create_query(host, 1, recordType(family), id, 1, &buffer, &length, ednsPayloadSize)
        guard status == ARES_SUCCESS, let buffer else {
            throw .unreadable("c-ares cannot make a query for this name: \(String(cString: ares_strerror(status)))")
        }
        defer { ares_free_string(buffer) }
        var message = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        guard padded, message.count >= 11 else { return message }
        // The padding option (code 12) is 4 bytes of header then zeros; it goes in the OPT's RDATA,
        // whose length is the message's last two bytes (zero as c-ares writes it).
        let padding = (paddingBlock - (message.count + 4) % paddingBlock) % paddingBlock
        let rdLength = 4 + padding
        message[message.count - 2] = UInt8(rdLength >> 8)
        message[message.count - 1] = UInt8(rdLength & 0xff)
        message += [0, 12, UInt8(padding >> 8), UInt8(padding & 0xff)] + [UInt8](repeating: 0, count: padding)
        return message
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
        return message.withUnsafeBufferPointer { p -> Header? in
            guard let h = p.baseAddress else { return nil }
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
            guard let base = p.baseAddress,
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
        if header.rcode != 0 { throw .rcode(DNSRcode(code: header.rcode)) }
        guard let asked = questionName(reply) else { throw .unreadable("its question section is cut short") }
        if asked.lowercased() != trimmedDot(host).lowercased() { throw .otherName(asked) }
        // Records for a few addresses first: arrays for every address a message could hold
        // (4,095 of them, 114 KB zeroed for A and AAAA) were made for each lookup, and `/probe`
        // looks one up per request (issue 34). A reply with more is read again with room for all.
        let first = try parse(reply, family: family, capacity: Self.usualAddresses)
        let parsed =
            first.sent > first.raw.count
            ? try parse(reply, family: family, capacity: maxAddressesPerFamily) : first
        return DNSReplyAddresses(
            raw: parsed.raw, ttl: parsed.ttls.min(), aliases: cnameChain(reply, from: host),
            sent: max(parsed.sent, parsed.raw.count))
    }

    /// How many records `addresses` makes room for at first: more than a name's usual answer.
    static let usualAddresses = 64

    /// c-ares's reading of `reply`'s addresses of `family`, at most `capacity` of them, with how
    /// many the reply held (c-ares fills the records up to `capacity` but its hostent with all).
    private static func parse(
        _ reply: [UInt8], family: IPFamily, capacity: Int
    ) throws(DNSReplyProblem) -> (raw: [String], ttls: [Int], sent: Int) {
        try reply.withUnsafeBufferPointer { (p) throws(DNSReplyProblem) -> (raw: [String], ttls: [Int], sent: Int) in
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
            var sent = raw.count
            if let list = hostent?.pointee.h_addr_list {
                sent = 0
                while list[sent] != nil { sent += 1 }
            }
            return (raw, ttls, sent)
        }
    }

    /// The CNAME targets of `message`'s answer section followed from `host`, in order. c-ares's
    /// hostent lists the owners but not the last target, so the records are walked here; names
    /// are expanded by c-ares, and the walk stops at the message's end or its answer count.
    static func cnameChain(_ message: [UInt8], from host: String) -> [String] {
        let headerSize = Int(cares_header_size())
        guard message.count > headerSize else { return [] }
        let answers = Int(message[6]) << 8 | Int(message[7])
        var targets: [String: String] = [:]
        message.withUnsafeBufferPointer { p in
            guard let base = p.baseAddress else { return }
            let length = p.count
            func name(at offset: Int) -> (String, Int)? {
                guard offset < length else { return nil }
                var expanded: UnsafeMutablePointer<CChar>?
                var consumed = 0
                guard ares_expand_name(base + offset, base, Int32(length), &expanded, &consumed) == ARES_SUCCESS,
                    let expanded
                else { return nil }
                defer { ares_free_string(expanded) }
                return (String(cString: expanded), consumed)
            }
            // Past the question: its name, type and class.
            guard let (_, questionName) = name(at: headerSize) else { return }
            var offset = headerSize + questionName + 4
            for _ in 0..<answers {
                guard let (owner, used) = name(at: offset), offset + used + 10 <= length else { return }
                let fixed = offset + used
                let type = Int(p[fixed]) << 8 | Int(p[fixed + 1])
                let rdLength = Int(p[fixed + 8]) << 8 | Int(p[fixed + 9])
                let rdata = fixed + 10
                guard rdata + rdLength <= length else { return }
                if type == 5, let (target, _) = name(at: rdata) { targets[owner.lowercased()] = target }
                offset = rdata + rdLength
            }
        }
        var chain: [String] = []
        var current = trimmedDot(host).lowercased()
        // A loop of CNAMEs ends when a name comes round again.
        while let next = targets[current], !chain.contains(next), chain.count < answers {
            chain.append(next)
            current = next.lowercased()
        }
        return chain
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

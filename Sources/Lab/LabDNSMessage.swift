// DNS messages on the lab side: a query's question read with c-ares, a reply written out (c-ares
// 1.18 builds queries, not replies). Shared by the lab's DNS server and its RFC 8484 endpoint.
import CCAres
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A question the lab was asked.
struct LabDNSQuery: Sendable, Equatable {
    var id: UInt16
    var name: String
    var type: UInt16
    /// The question section as received (name, type, class), echoed in the reply.
    var question: [UInt8]
    var recursionDesired: Bool
    /// The UDP payload size of the query's EDNS(0) OPT record (RFC 6891); nil without one.
    var udpPayloadSize: Int?
    /// The whole message's length (an RFC 8467 padded query is a multiple of 128).
    var length: Int

    /// Reads the header and first question of `message`; nil for anything that is not a query.
    init?(_ message: [UInt8]) {
        let headerSize = Int(cares_header_size())
        guard message.count > headerSize else { return nil }
        let parsed = message.withUnsafeBufferPointer { p -> (String, Int)? in
            guard let base = p.baseAddress, cares_header_qr(base) == 0, cares_header_qdcount(base) >= 1 else {
                return nil
            }
            var name: UnsafeMutablePointer<CChar>?
            var consumed = 0
            guard ares_expand_name(base + headerSize, base, Int32(p.count), &name, &consumed) == ARES_SUCCESS,
                let name
            else { return nil }
            defer { ares_free_string(name) }
            return (String(cString: name), consumed)
        }
        guard let (name, consumed) = parsed else { return nil }
        let end = headerSize + consumed + 4
        guard message.count >= end else { return nil }
        id = UInt16(message[0]) << 8 | UInt16(message[1])
        recursionDesired = message[2] & 0x01 != 0
        self.name = name
        type = UInt16(message[headerSize + consumed]) << 8 | UInt16(message[headerSize + consumed + 1])
        question = Array(message[headerSize..<end])
        length = message.count
        // An OPT record right after the question (no answer or authority records in a query):
        // the root name, type 41, the payload size in the class field.
        let additional = Int(message[10]) << 8 | Int(message[11])
        if additional >= 1, message.count >= end + 11, message[end] == 0, message[end + 1] == 0, message[end + 2] == 41
        {
            udpPayloadSize = Int(message[end + 3]) << 8 | Int(message[end + 4])
        }
    }
}

/// One answer record the lab writes.
struct LabDNSRecord: Sendable, Equatable {
    enum Data: Sendable, Equatable {
        /// Four or sixteen address bytes.
        case address([UInt8])
        case cname(String)
    }
    var owner: String
    var ttl: UInt32
    var data: Data

    /// An A or AAAA record for an IP literal; nil for text that is not one (the poisoned name's junk).
    static func address(_ owner: String, _ text: String, ttl: Int) -> LabDNSRecord? {
        LabAddress.bytes(text).map { LabDNSRecord(owner: owner, ttl: UInt32(ttl), data: .address($0)) }
    }
}

/// IP literals as the lab's wire formats and certificates hold them.
enum LabAddress {
    /// The address's 4 or 16 bytes; nil for text that is not an IP literal.
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }

    /// The address as a URL's host (`[::1]` for IPv6).
    static func authority(_ text: String) -> String {
        text.contains(":") && !text.hasPrefix("[") ? "[\(text)]" : text
    }
}

/// Writes lab replies.
enum LabDNSReply {
    /// RFC 1035 response codes the lab uses.
    static let noError = 0
    static let nxdomain = 3
    static let refused = 5

    /// A reply to `query` with `records` in the answer section.
    ///
    /// - Parameters:
    ///   - id: the id to write (a lab fault writes another than the query's).
    ///   - truncated: set the TC bit (the client should ask again over TCP).
    static func make(
        to query: LabDNSQuery, rcode: Int, records: [LabDNSRecord], id: UInt16? = nil, truncated: Bool = false
    ) -> [UInt8] {
        let replyID = id ?? query.id
        var out: [UInt8] = [UInt8(replyID >> 8), UInt8(replyID & 0xff)]
        // QR=1, opcode 0, AA=1, TC, RD echoed; RA=1, Z=0, RCODE.
        out.append(0x80 | 0x04 | (truncated ? 0x02 : 0) | (query.recursionDesired ? 0x01 : 0))
        out.append(0x80 | UInt8(rcode & 0x0f))
        // An EDNS query gets an OPT record back (RFC 6891 7), except in FORMERR, which says the
        // server does not speak EDNS: the client then asks again without it, as dig does.
        let opt = query.udpPayloadSize != nil && rcode != 1
        for count in [1, records.count, 0, opt ? 1 : 0] { out += [UInt8(count >> 8), UInt8(count & 0xff)] }
        out += query.question
        for record in records {
            out += encodedName(record.owner)
            let (type, rdata): (UInt16, [UInt8])
            switch record.data {
            case .address(let bytes): (type, rdata) = (bytes.count == 4 ? 1 : 28, bytes)
            case .cname(let target): (type, rdata) = (5, encodedName(target))
            }
            out += [UInt8(type >> 8), UInt8(type & 0xff), 0, 1]
            out += [UInt8(record.ttl >> 24), UInt8((record.ttl >> 16) & 0xff), UInt8((record.ttl >> 8) & 0xff)]
            out += [UInt8(record.ttl & 0xff), UInt8(rdata.count >> 8), UInt8(rdata.count & 0xff)]
            out += rdata
        }
        if opt {
            let size = UInt16(udpLimitWithEDNS)
            out += [0, 0, 41, UInt8(size >> 8), UInt8(size & 0xff), 0, 0, 0, 0, 0, 0]
        }
        return out
    }

    /// The most a UDP reply may carry without EDNS (RFC 1035 4.2.1); more goes with the TC bit set.
    static let udpLimit = 512
    /// What the lab takes over UDP from a client that offers more with EDNS(0): the DNS flag day
    /// size, which is what a real server's default limits it to.
    static let udpLimitWithEDNS = 1232

    /// The most `query` takes in one UDP reply.
    static func udpLimit(for query: LabDNSQuery) -> Int {
        query.udpPayloadSize.map { min(max($0, udpLimit), udpLimitWithEDNS) } ?? udpLimit
    }

    /// `reply` as UDP may carry it: whole when it fits the query's limit, else header and question with
    /// TC set and no records, as real servers send it, so the client asks again over TCP.
    static func fittingUDP(_ reply: [UInt8], to query: LabDNSQuery) -> [UInt8] {
        guard reply.count > udpLimit(for: query), reply.count >= 4 else { return reply }
        return make(to: query, rcode: Int(reply[3] & 0x0f), records: [], truncated: true)
    }

    /// A name as length-prefixed labels (no compression: lab replies are small).
    static func encodedName(_ name: String) -> [UInt8] {
        var out: [UInt8] = []
        for label in name.split(separator: ".") where !label.isEmpty {
            let bytes = Array(label.utf8.prefix(63))
            out.append(UInt8(bytes.count))
            out += bytes
        }
        return out + [0]
    }

    /// What the zone says for `query`: the CNAME chain, then the addresses of the asked type.
    static func answer(_ query: LabDNSQuery, zone: LabZone, addressesOverride: [String]? = nil) -> [UInt8] {
        guard let record = zone.record(for: query.name) else {
            return make(to: query, rcode: nxdomain, records: [])
        }
        if let rcode = record.rcode { return make(to: query, rcode: rcode.code, records: []) }
        var records: [LabDNSRecord] = []
        var owner = record.name
        for target in record.cname ?? [] {
            records.append(LabDNSRecord(owner: owner, ttl: UInt32(record.ttl), data: .cname(target)))
            owner = target
        }
        let ips: [String]
        switch query.type {
        case 1: ips = addressesOverride ?? record.ipv4
        case 28: ips = addressesOverride == nil ? record.ipv6 : []
        default: ips = []
        }
        let wanted = query.type == 1 ? 4 : 16
        for ip in ips {
            guard let address = LabDNSRecord.address(owner, ip, ttl: record.ttl(query.type == 28)),
                case .address(let bytes) = address.data, bytes.count == wanted
            else { continue }
            records.append(address)
        }
        return make(to: query, rcode: noError, records: records)
    }
}

// IP ranking with an address that never answers: its SYNs are dropped (a listener whose accept
// queue is full), so the connect runs into the timeout and the address goes last, as in the SDK.
import Foundation
import NameResolution
import Probe
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP listener on loopback that accepts nothing. With `silent`, its accept queue is filled
/// first, so Linux drops every further SYN and a client's connect gets no answer at all.
private final class Listener {
    let fd: Int32
    private var fillers: [Int32] = []

    init(ip: String, port: UInt16, silent: Bool) throws {
        #if canImport(Glibc)
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, ip, &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, silent ? 0 : 16) == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EINVAL)
        }
        guard silent else { return }
        for _ in 0..<2 {
            #if canImport(Glibc)
                let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
                let filler = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL, 0) | O_NONBLOCK)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.append(filler)
        }
        // Let the handshakes the queue takes complete before anyone else knocks.
        usleep(200_000)
    }

    /// The port the kernel chose.
    var port: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        for filler in fillers { close(filler) }
        close(fd)
    }
}

@Suite("IP ranking with an address that does not answer")
struct RankSilentAddressTests {
    @Test("an address whose connect gets no answer ranks last, with the timeout's sentence")
    func silentAddressRanksLast() async throws {
        let live = try Listener(ip: "127.0.0.1", port: 0, silent: false)
        let silent = try Listener(ip: "127.0.0.3", port: UInt16(live.port), silent: true)
        // HTTPDNS lists the silent address first; the SDK's ranking must move it behind.
        let resolution = HostResolution(
            host: "silent.lab.test", system: SystemAnswer(error: "no answer"),
            httpdns: HTTPDNSAnswer(provider: "test", ipv4: ["127.0.0.3", "127.0.0.1"], ttl: FamilyTTL(v4: 60)))
        // The test is about the timeout: half a second stands in for the SDK's two.
        let ranking = await IPRanking.rank(resolution, port: live.port, timeout: .milliseconds(500))
        #expect(ranking.ips.map(\.ip) == ["127.0.0.1", "127.0.0.3"])
        #expect(ranking.sdkOrder == ["127.0.0.1", "127.0.0.3"])
        let dead = try #require(ranking.ips.last)
        #expect(dead.connectMs == nil)
        #expect(dead.error?.sentence.contains("no answer from 127.0.0.3:\(live.port) within 0.5 s") == true, "\(dead)")
        #expect(ranking.ips.first?.connectMs != nil)
        withExtendedLifetime((live, silent)) {}
    }
}

// The lab as a stand-in for a real service: `/ss` names ports that work for the scheme it was asked
// over, the service certificate covers every service address, and the doctor's default canary resolves.
import CurlTransport
import Foundation
import Lab
import Testing

@Suite("The lab as a stand-in service")
struct LabStandInTests {
    @Test("/ss asked over TLS with a Host without a port (as on 443) names the TLS port, not 80")
    func serviceListPortFollowsTheScheme() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let tlsPort = try #require(URLComponents(string: e.httpdnsTLS)?.port)
            // A client on 443 sends `Host: ADDRESS` alone; the lab must not read 80 into it.
            let answer = try await fetch(
                HTTPRequest(
                    url: e.httpdnsTLS + "/\(e.account)/ss?region=global", headers: ["Host: 127.0.0.1"],
                    caFile: e.ca))
            #expect(answer.status == 200)
            #expect(answer.jsonObject?["service_port"] as? Int == tlsPort, "\(answer.text)")
            let plainPort = try #require(URLComponents(string: e.httpdns)?.port)
            let plain = try await fetch(
                HTTPRequest(url: e.httpdns + "/\(e.account)/ss?region=global", headers: ["Host: 127.0.0.1"]))
            #expect(plain.jsonObject?["service_port"] as? Int == plainPort, "\(plain.text)")
        }
    }

    @Test("every service address /ss names presents a certificate for itself and for the service name")
    func certificateCoversEveryServiceAddress() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let tlsPort = try #require(URLComponents(string: e.httpdnsTLS)?.port)
            let listed = try await fetch(HTTPRequest(url: e.httpdns + "/\(e.account)/ss?region=global"))
            let addresses = try #require(listed.jsonObject?["service_ip"] as? [String])
            #expect(addresses == ["127.0.0.2", "127.0.0.1"])
            for address in addresses {
                // By address, as a client that was given the IP checks it...
                let byAddress = await failure(
                    of: HTTPRequest(url: "https://\(address):\(tlsPort)/\(e.account)/ss", caFile: e.ca))
                #expect(byAddress == nil, "\(address): \(String(describing: byAddress))")
                // ...and by the service's name, as the SDKs check every service IP (service_name).
                let byName = await failure(
                    of: HTTPRequest(
                        url: "https://\(address):\(tlsPort)/\(e.account)/ss", caFile: e.ca,
                        checkCertificateName: LabEndpoints.serviceName))
                #expect(byName == nil, "\(address) as \(LabEndpoints.serviceName): \(String(describing: byName))")
            }
        }
    }

    @Test("the doctor's default canary, www.aliyun.com, is a lab name every HTTPDNS form answers")
    func defaultCanaryResolves() async throws {
        try await withLab { lab in
            let e = lab.endpoints
            let answer = try await fetch(HTTPRequest(url: e.httpdns + "/\(e.account)/d?host=www.aliyun.com"))
            #expect(answer.jsonObject?["ips"] as? [String] == ["127.0.0.1"], "\(answer.text)")
        }
    }
}

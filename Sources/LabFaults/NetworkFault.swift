// The network faults the lab can fake, one for each doctor check, combinable; set at start with
// `ipdirect lab --fault` (or `doctor --lab --fault`), beside the HTTPDNS service's own fault modes.

import FoundationGaps

/// A way the network between a client and its HTTPDNS service goes wrong.
public enum NetworkFault: String, Sendable, Codable, CaseIterable {
    /// The service's clock runs ahead, so signed requests fall outside their window.
    case clockSkew = "clock-skew"
    /// One of the service's two addresses refuses connections.
    case serviceBlocked = "service-blocked"
    /// The service's TLS is answered with a certificate that does not chain to the lab's CA.
    case tlsIntercept = "tls-intercept"
    /// The lab's DNS server answers `ipv4only.arpa` with a NAT64 prefix (DNS64).
    case nat64
    /// The service refuses unsigned requests.
    case unsignedRefused = "unsigned-refused"
    /// The lab's DNS server drops queries over UDP and answers only over TCP.
    case udp53Filtered = "udp53-filtered"
    /// A known URL answers a captive portal's page instead of its body.
    case captivePortal = "captive-portal"
}

/// What `--fault` may name: an HTTPDNS fault mode (one) and network faults (any number).
public struct LabFaultSet: Sendable, Equatable {
    public var httpdns: HTTPDNSFault
    public var network: Set<NetworkFault>

    public init(httpdns: HTTPDNSFault = .none, network: Set<NetworkFault> = []) {
        self.httpdns = httpdns
        self.network = network
    }

    /// Reads a comma-separated list such as `clock-skew,service-blocked` or `slow`.
    /// - Returns: the set, or why the list is not one (a word that is neither kind, two modes).
    public static func parse(_ text: String) -> Result<LabFaultSet, LabFaultParseError> {
        var set = LabFaultSet()
        var modes: [HTTPDNSFault] = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = word.trimmingWhitespace().lowercased()
            if let fault = NetworkFault(rawValue: name) {
                set.network.insert(fault)
            } else if let mode = HTTPDNSFault(rawValue: name) {
                modes.append(mode)
            } else {
                return .failure(.unknown(name))
            }
        }
        if modes.count > 1 { return .failure(.twoModes(modes.map(\.rawValue))) }
        set.httpdns = modes.first ?? .none
        return .success(set)
    }
}

/// Why a `--fault` list was refused, worded for the person who typed it.
public enum LabFaultParseError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknown(String)
    case twoModes([String])

    public var description: String {
        switch self {
        case .unknown(let word):
            let modes = HTTPDNSFault.allCases.map(\.rawValue).joined(separator: ", ")
            let faults = NetworkFault.allCases.map(\.rawValue).joined(separator: ", ")
            return "'\(word)' is not a lab fault: name HTTPDNS modes (\(modes)) or network faults (\(faults)), "
                + "separated by commas"
        case .twoModes(let modes):
            let named = modes.joined(separator: " and ")
            return "the HTTPDNS service has one mode at a time, and \(named) were both named: keep one"
        }
    }
}

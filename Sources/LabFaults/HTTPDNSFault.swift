// The lab's fault switch as one closed set, shared by the lab that applies it and the console
// that shows and cycles it. A module of its own so the console need not import the lab's servers.

/// How the lab's HTTPDNS service misbehaves, switchable while it runs.
public enum HTTPDNSFault: String, Sendable, Codable, CaseIterable {
    /// Answers correctly.
    case none
    /// Answers after a delay longer than a client's default timeout.
    case slow
    /// Answers HTTP 500.
    case error
    /// Answers 200 with a truncated or garbled body in every format.
    case malformed
    /// Refuses connections: the listeners stop listening until the fault is switched off, and
    /// their ports stay the lab's meanwhile.
    case down
}

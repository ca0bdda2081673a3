// The providers whose one request asks for several names (alicloud v2, Tencent): they write the
// request once, and resolving one name or a batch of them follows from it here.

/// A provider whose wire format takes several names a request: it writes `request`, and
/// `resolve` (one name) and `resolveBatch` (chunks of `batchLimit`) come from this extension.
public protocol BatchResolving: HTTPDNSProvider {
    /// At most this many names go in one request.
    static var batchLimit: Int { get }

    /// One request for up to `batchLimit` names; a failure of the whole request throws, a
    /// failure of one name is that name's result.
    func request(
        _ hosts: [String], families: Set<IPFamily>
    ) async throws(ResolutionError) -> [String: Result<ProviderAnswer, ResolutionError>]
}

extension BatchResolving {
    public func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        try single(host, from: try await request([host], families: families))
    }

    public func resolveBatch(
        _ hosts: [String], families: Set<IPFamily>
    ) async -> [String: Result<ProviderAnswer, ResolutionError>] {
        await resolveInChunks(hosts, limit: Self.batchLimit) { chunk throws(ResolutionError) in
            try await request(chunk, families: families)
        }
    }
}

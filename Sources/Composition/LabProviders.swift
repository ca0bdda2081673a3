// The lab as providers: one setting of each kind the registry's rows put in the comparison set,
// and the one seam between the registry's words for the lab's services and the lab's endpoints.
import Lab
import NameResolution

/// The lab's providers for comparing providers.
public enum LabProviders {
    /// The lab's providers, one of each kind its registry row puts in the comparison set, its
    /// secrets handed over in memory.
    public static func settings(_ e: LabEndpoints) -> [ProviderSetting] {
        ProviderRegistry.all.compactMap { entry in
            guard let route = entry.lab, let cipher = route.compared else { return nil }
            return .inMemory(
                name: "lab-\(entry.kind.rawValue)", kind: entry.kind, endpoint: e.endpoint(route),
                account: entry.settings.contains(.account) ? e.account(route) : nil, cipher: cipher,
                secret: entry.settings.contains(.secret) ? e.secret : nil, key: route.keys[cipher].map(e.key),
                caFile: e.ca)
        }
    }
}

extension LabEndpoints {
    /// Where a registry row's lab route points in this lab: the one seam between the registry's
    /// words for the lab's services and the lab's own endpoints.
    public func endpoint(_ route: LabRoute) -> String {
        (route.listener == .tls ? httpdnsTLS : httpdns) + route.path
    }

    /// The account a route takes: the lab's Alibaba account or its Tencent AUTH_ID.
    public func account(_ route: LabRoute) -> String {
        route.account == .tencent ? keys.tencentID : account
    }

    /// One of the keys the lab made.
    public func key(_ key: LabRoute.Key) -> String {
        switch key {
        case .aes: return keys.aesKey
        case .tencentDES: return keys.tencentDESKey
        case .tencentAES: return keys.tencentAESKey
        }
    }
}

// A provider named for comparison (a `[[providers]]` table, or one of the lab's): a full provider
// setting whose secrets live in environment variables it names, or in memory for the lab's.
import FoundationEssentials

/// One provider named for comparison (`[[providers]]`). Secrets are never in the file: the
/// table names the environment variables that hold them (`secret_env`, `key_env`, `token_env`).
public struct ProviderSetting: Sendable, Equatable {
    /// The label rows show; the kind when the table gives none.
    public var name: String
    public var kind: ProviderKind
    public var endpoint: String?
    public var account: String?
    public var cipher: HTTPDNSCipher?
    /// The names of the environment variables holding the signing secret, the encryption key
    /// and Tencent's token.
    public var secretVariable: String?
    public var keyVariable: String?
    public var tokenVariable: String?
    public var caFile: String?
    public var dohMethod: DoHMethod?
    /// Set only for the lab's providers, whose secrets live in memory, never in a file or the environment.
    var inMemorySecrets: (secret: String?, key: String?, token: String?)?

    public init(
        name: String? = nil, kind: ProviderKind, endpoint: String? = nil, account: String? = nil,
        cipher: HTTPDNSCipher? = nil, secretVariable: String? = nil, keyVariable: String? = nil,
        tokenVariable: String? = nil, caFile: String? = nil, dohMethod: DoHMethod? = nil
    ) {
        self.name = name ?? kind.rawValue
        self.kind = kind
        self.endpoint = endpoint
        self.account = account
        self.cipher = cipher
        self.secretVariable = secretVariable
        self.keyVariable = keyVariable
        self.tokenVariable = tokenVariable
        self.caFile = caFile
        self.dohMethod = dohMethod
    }

    public static func == (lhs: ProviderSetting, rhs: ProviderSetting) -> Bool {
        lhs.name == rhs.name && lhs.kind == rhs.kind && lhs.endpoint == rhs.endpoint && lhs.account == rhs.account
            && lhs.cipher == rhs.cipher && lhs.secretVariable == rhs.secretVariable
            && lhs.keyVariable == rhs.keyVariable && lhs.tokenVariable == rhs.tokenVariable
            && lhs.caFile == rhs.caFile && lhs.dohMethod == rhs.dohMethod
            && (lhs.inMemorySecrets == nil) == (rhs.inMemorySecrets == nil)
    }

    /// A provider whose secrets are handed over in memory (the lab's own), never read from a file.
    public static func inMemory(
        name: String, kind: ProviderKind, endpoint: String, account: String?, cipher: HTTPDNSCipher = .none,
        secret: String?, key: String?, token: String? = nil, caFile: String?
    ) -> ProviderSetting {
        var setting = ProviderSetting(
            name: name, kind: kind, endpoint: endpoint, account: account, cipher: cipher, caFile: caFile)
        setting.inMemorySecrets = (secret, key, token)
        return setting
    }

    /// The full configuration of this provider: `base` (timeouts, family, DNS server) with this
    /// table's provider settings, and its secrets read from the variables it names.
    ///
    /// - Throws: `ConfigurationError` when a named variable is not set (a sentence saying which).
    public func configuration(
        over base: ResolverConfiguration, environment: [String: String]
    ) throws(ConfigurationError) -> ResolverConfiguration {
        var configuration = base
        configuration.provider = kind
        configuration.endpoint = endpoint
        configuration.account = account
        configuration.cipher = cipher ?? .none
        configuration.caFile = caFile ?? base.caFile
        configuration.dohMethod = dohMethod ?? base.dohMethod
        configuration.startIPs = []
        if let memory = inMemorySecrets {
            (configuration.secret, configuration.key, configuration.token) = memory
            return configuration
        }
        func read(_ variable: String?, _ what: String) throws(ConfigurationError) -> String? {
            guard let variable else { return nil }
            guard let value = environment[variable], !value.isEmpty else {
                throw .io(
                    "provider '\(name)' takes its \(what) from \(variable), which is not set: export \(variable) or remove the setting"
                )
            }
            return value
        }
        configuration.secret = try read(secretVariable, "signing secret")
        configuration.key = try read(keyVariable, "encryption key")
        configuration.token = try read(tokenVariable, "token")
        return configuration
    }

    /// What `config show` prints for this provider: variable names, never their values.
    public var redactedSummary: String {
        var parts = ["\(name): \(kind.rawValue)"]
        if let endpoint { parts.append("endpoint \(endpoint)") }
        if let account { parts.append("account \(account)") }
        if let cipher { parts.append("cipher \(cipher.rawValue)") }
        if let secretVariable { parts.append("secret from $\(secretVariable)") }
        if let keyVariable { parts.append("key from $\(keyVariable)") }
        if let tokenVariable { parts.append("token from $\(tokenVariable)") }
        if let caFile { parts.append("ca_file \(caFile)") }
        return parts.joined(separator: ", ")
    }
}

extension ProviderSetting: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The summary `config show` prints: never a secret, even the lab's in-memory ones.
    public var description: String { "ProviderSetting(\(redactedSummary))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [(label: "summary", value: redactedSummary as Any)]) }
}

// The `[[providers]]` tables of the configuration file: several HTTPDNS services to compare, each
// read into a `ProviderSetting` whose secrets live in the environment variables the table names.
import NameResolution
import TOMLKit

extension ProviderSetting {
    /// Reads the `providers` array of tables.
    ///
    /// - Returns: the settings, and warnings for unknown keys.
    /// - Throws: `ConfigurationError` naming the table and key that cannot be used, and for a
    ///   secret written in the table itself.
    static func list(
        _ raw: (any TOMLValueConvertible)?, path: String
    ) throws(ConfigurationError) -> (
        [ProviderSetting]?, [String]
    ) {
        guard let raw else { return (nil, []) }
        guard let array = raw.array else {
            throw .wrongType(path, "providers", "an array of tables ([[providers]] with kind = \"...\")")
        }
        let known: Set<String> = [
            "name", "kind", "endpoint", "account", "cipher", "secret_env", "key_env", "token_env", "ca_file",
            "doh_method",
        ]
        // In the order `--provider`'s help lists them.
        let kindNames = ProviderRegistry.all.map(\.kind.rawValue)
        var settings: [ProviderSetting] = []
        var warnings: [String] = []
        for (index, item) in array.enumerated() {
            let place = "providers[\(index + 1)]"
            guard let table = item.table else { throw .wrongType(path, place, "a table ([[providers]])") }
            for secret in ["secret", "key", "token"] where table[secret] != nil {
                throw .io(
                    "\(path): \(place) holds a \(secret) itself; put it in an environment variable and name it with \(secret)_env = \"VARIABLE\""
                )
            }
            for key in table.keys where !known.contains(key) {
                warnings.append("\(path): unknown setting '\(key)' in \(place) ignored")
            }
            func string(_ key: String) throws(ConfigurationError) -> String? {
                guard let value = table[key] else { return nil }
                guard let text = value.string else { throw .wrongType(path, "\(place).\(key)", "a string") }
                return text.isEmpty ? nil : text
            }
            guard let kindName = try string("kind") else {
                throw .wrongType(
                    path, "\(place).kind", "one of \(kindNames.joined(separator: ", "))")
            }
            guard let kind = ProviderKind(rawValue: kindName) else {
                throw .invalid("\(path): \(place).kind", kindName, expected: kindNames)
            }
            var setting = ProviderSetting(
                name: try string("name"), kind: kind, endpoint: try string("endpoint"), account: try string("account"),
                secretVariable: try string("secret_env"), keyVariable: try string("key_env"),
                tokenVariable: try string("token_env"), caFile: try string("ca_file"))
            if let name = try string("cipher") {
                guard let cipher = HTTPDNSCipher(rawValue: name) else {
                    throw .invalid(
                        "\(path): \(place).cipher", name, expected: HTTPDNSCipher.allCases.map(\.rawValue))
                }
                setting.cipher = cipher
            }
            if let name = try string("doh_method") {
                guard let method = DoHMethod(rawValue: name) else {
                    throw .invalid(
                        "\(path): \(place).doh_method", name, expected: DoHMethod.allCases.map(\.rawValue))
                }
                setting.dohMethod = method
            }
            if settings.contains(where: { $0.name == setting.name }) {
                throw .io("\(path): two providers are named '\(setting.name)'; give each a different name = \"...\"")
            }
            settings.append(setting)
        }
        return (settings, warnings)
    }
}

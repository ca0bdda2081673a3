// The configuration's field list: each setting once, with its key in the file, its variable and
// its flag; reading the file, the environment, layering and `config show`'s keys follow from it.
import FoundationEssentials
import FoundationGaps
import NameResolution
import TOMLKit

/// One setting of `ResolverConfiguration`: where it lives in the resolved value, how the file
/// types it, and which variable gives it. Its key and flag are its `Setting`'s.
///
/// Holds key paths, which are immutable values the standard library does not mark Sendable.
public struct ConfigurationField: @unchecked Sendable {
    /// The setting it reads.
    public let setting: Setting
    /// Its key in the TOML file (`ca_file`), also how sentences name it.
    public var key: String { setting.rawValue }
    /// The environment variable that gives it, if any.
    public let variable: String?
    /// The command-line flag that gives it, if any (`--httpdns-ca`).
    public var flag: String? { setting.flag }
    let path: AnyKeyPath
    /// Reads the file's value; throws naming the key and what it must be.
    let read: (any TOMLValueConvertible, _ file: String) throws(ConfigurationError) -> (any Sendable)?
    /// Reads the variable's value.
    let readVariable: (String) throws(ConfigurationError) -> (any Sendable)?
    /// Writes a layer's value into a configuration.
    let write: (any Sendable, inout ResolverConfiguration) -> Void

    init<T: Sendable>(
        _ setting: Setting, _ path: WritableKeyPath<ResolverConfiguration, T>, variable: String? = nil,
        _ type: SettingType<T>
    ) {
        self.init(setting, path, variable, type) { value, configuration in configuration[keyPath: path] = value }
    }

    /// A setting that may be unset in the resolved configuration (`endpoint`, `dns_server`).
    init<T: Sendable>(
        _ setting: Setting, _ path: WritableKeyPath<ResolverConfiguration, T?>, variable: String? = nil,
        _ type: SettingType<T>
    ) {
        self.init(setting, path, variable, type) { value, configuration in configuration[keyPath: path] = value }
    }

    private init<T: Sendable>(
        _ setting: Setting, _ path: AnyKeyPath, _ variable: String?, _ type: SettingType<T>,
        assign: @escaping (T, inout ResolverConfiguration) -> Void
    ) {
        precondition(setting.key != nil, "\(setting) is not a setting of the configuration file")
        let key = setting.rawValue
        self.setting = setting
        self.variable = variable
        self.path = path
        read = { value, file throws(ConfigurationError) in try type.read(value, key, file) }
        readVariable = { text throws(ConfigurationError) in try type.readVariable(text, variable ?? key) }
        write = { value, configuration in
            if let value = value as? T { assign(value, &configuration) }
        }
    }
}

/// How a setting is typed in the file and the environment, and what a wrong value is told.
struct SettingType<T: Sendable>: Sendable {
    /// The value, or nil for a value that means "not given" (an empty string).
    let read: @Sendable (any TOMLValueConvertible, _ key: String, _ file: String) throws(ConfigurationError) -> T?
    let readVariable: @Sendable (String, _ variable: String) throws(ConfigurationError) -> T?

    init(
        read: @escaping @Sendable (any TOMLValueConvertible, String, String) throws(ConfigurationError) -> T?,
        readVariable: @escaping @Sendable (String, String) throws(ConfigurationError) -> T? = { _, _ in nil }
    ) {
        self.read = read
        self.readVariable = readVariable
    }
}

extension SettingType where T == String {
    /// A string; an empty one is "not given". From the environment, trimmed of blanks.
    static let text = SettingType(
        read: { value, key, file throws(ConfigurationError) in
            guard let text = value.string else { throw .wrongType(file, key, "a string") }
            return text.isEmpty ? nil : text
        },
        readVariable: { text, _ in
            let trimmed = text.trimmingWhitespace()
            return trimmed.isEmpty ? nil : trimmed
        })

    /// A credential: as `text`, but a variable's value is taken exactly as it is set.
    static let credential = SettingType(
        read: text.read, readVariable: { value, _ in value.isEmpty ? nil : value })
}

extension SettingType where T == String {
    /// An IPv4 or IPv6 literal (`client_ip`); anything else, a name included, is refused.
    static let ipLiteral = SettingType(read: { value, key, file throws(ConfigurationError) in
        guard let text = try SettingType<String>.text.read(value, key, file) else { return nil }
        guard IPLiteral.family(of: text) != nil else {
            throw .invalid("\(file): \(key)", text, expected: ["an IPv4 or IPv6 address"])
        }
        return text
    })
}

extension SettingType where T == String {
    /// A host name (`canary`): letters, digits, '-' and '.', written as a URL's host is.
    static let hostName = SettingType(read: { value, key, file throws(ConfigurationError) in
        guard let text = try SettingType<String>.text.read(value, key, file) else { return nil }
        let allowed = text.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-.".unicodeScalars.contains($0))
        }
        guard allowed, text.count <= 253, !text.hasPrefix("."), !text.hasPrefix("-") else {
            throw .wrongType(file, key, "a host name, such as \"www.example.com\" (no scheme, port or path)")
        }
        return text
    })
}

extension SettingType where T == [String] {
    /// Plain-HTTP URLs (`connectivity_urls`), each `http://HOST/PATH`.
    static func plainHTTPURLs(_ shape: String) -> SettingType {
        SettingType(read: { value, key, file throws(ConfigurationError) in
            guard let urls = try list(shape).read(value, key, file) else { return nil }
            for (index, url) in urls.enumerated() {
                guard let components = URLComponents(string: url), components.scheme == "http",
                    !(components.host ?? "").isEmpty
                else {
                    throw .wrongType(file, key, "\(shape); item \(index + 1) is not a plain-HTTP URL")
                }
            }
            return urls
        })
    }
}

extension SettingType where T == Bool {
    static let flag = SettingType(read: { value, key, file throws(ConfigurationError) in
        guard let flag = value.bool else { throw .wrongType(file, key, "true or false") }
        return flag
    })
}

extension SettingType where T == Double {
    /// Seconds above 0 and at most `ResolverConfiguration.maxTimeout`.
    static let seconds = SettingType(read: { value, key, file throws(ConfigurationError) in
        // inf, nan and 1e300 are TOML numbers too; converting them to milliseconds would trap.
        guard let seconds = value.double ?? value.int.map(Double.init), seconds > 0,
            seconds <= ResolverConfiguration.maxTimeout
        else {
            throw .wrongType(
                file, key,
                "a number of seconds above 0 and at most \(ResolutionError.format(ResolverConfiguration.maxTimeout))")
        }
        return seconds
    })
}

extension SettingType where T == [String] {
    /// An array of strings; `shape` says what the file must hold (`an array of names`).
    static func list(_ shape: String) -> SettingType {
        SettingType(read: { value, key, file throws(ConfigurationError) in
            guard let array = value.array else { throw .wrongType(file, key, shape) }
            var items: [String] = []
            for item in array {
                guard let text = item.string else { throw .wrongType(file, key, shape) }
                items.append(text)
            }
            return items
        })
    }
}

extension SettingType where T == [String: String] {
    /// A table of strings (`sdns = { region = "east" }`).
    static let stringTable = SettingType(read: { value, key, file throws(ConfigurationError) in
        guard let table = value.table else { throw .wrongType(file, key, "a table of strings ({ k = \"v\" })") }
        var values: [String: String] = [:]
        for (name, item) in table {
            guard let text = item.string else { throw .wrongType(file, "\(key).\(name)", "a string") }
            values[name] = text
        }
        return values
    })
}

extension SettingType where T == DNSServer {
    /// `HOST[:PORT]`, parsed as `--dns-server` is.
    static let dnsServer = SettingType(read: { value, key, file throws(ConfigurationError) in
        guard let text = try SettingType<String>.text.read(value, key, file) else { return nil }
        return try DNSServer.parse(text, setting: "\(file): \(key)")
    })
}

extension SettingType where T: RawRepresentable & CaseIterable, T.RawValue == String {
    /// One of a closed set, by name; a name outside it is told the set.
    static var choice: SettingType {
        SettingType(
            read: { value, key, file throws(ConfigurationError) in
                guard let name = try SettingType<String>.text.read(value, key, file) else { return nil }
                guard let choice = T(rawValue: name) else {
                    throw .invalid("\(file): \(key)", name, expected: T.allCases.map(\.rawValue))
                }
                return choice
            },
            readVariable: { text, variable throws(ConfigurationError) in
                guard let name = try SettingType<String>.text.readVariable(text, variable) else { return nil }
                guard let choice = T(rawValue: name) else {
                    throw .invalid(variable, name, expected: T.allCases.map(\.rawValue))
                }
                return choice
            })
    }
}

extension ConfigurationField {
    /// Every setting of the resolver, in the order the file is checked (the first wrong value
    /// is the one reported).
    public static let all: [ConfigurationField] = [
        ConfigurationField(.provider, \.provider, variable: "IPDIRECT_PROVIDER", .choice),
        ConfigurationField(.family, \.family, .choice),
        ConfigurationField(.endpoint, \.endpoint, variable: "IPDIRECT_ENDPOINT", .text),
        ConfigurationField(.account, \.account, variable: "IPDIRECT_ACCOUNT", .text),
        ConfigurationField(.secret, \.secret, variable: "IPDIRECT_HTTPDNS_SECRET", .credential),
        ConfigurationField(.caFile, \.caFile, .text),
        ConfigurationField(.cachePath, \.cachePath, .text),
        ConfigurationField(.dnsServer, \.dnsServer, .dnsServer),
        ConfigurationField(.dohMethod, \.dohMethod, .choice),
        ConfigurationField(.sdk, \.sdk, .choice),
        ConfigurationField(.clientIP, \.clientIP, .ipLiteral),
        ConfigurationField(.key, \.key, variable: "IPDIRECT_HTTPDNS_KEY", .credential),
        ConfigurationField(.token, \.token, variable: "IPDIRECT_HTTPDNS_TOKEN", .credential),
        ConfigurationField(.region, \.region, .text),
        ConfigurationField(.serviceName, \.serviceName, .text),
        ConfigurationField(.startIPs, \.startIPs, .list("an array of base URLs ([\"http://127.0.0.1:8080\"])")),
        ConfigurationField(.cipher, \.cipher, .choice),
        ConfigurationField(.sdns, \.sdns, .stringTable),
        ConfigurationField(.timeout, \.timeout, .seconds),
        ConfigurationField(.fallbackToSystem, \.fallbackToSystem, .flag),
        ConfigurationField(.reuseExpired, \.reuseExpired, .flag),
        ConfigurationField(.prefetch, \.prefetch, .list("an array of names")),
        ConfigurationField(.canary, \.canary, .hostName),
        ConfigurationField(
            .connectivityURLs, \.connectivityURLs,
            .plainHTTPURLs(
                "an array of plain-HTTP URLs that answer 204 with an empty body ([\"http://HOST/generate_204\"])")),
    ]

    /// The field of a key path, if it is one of the list's.
    static func field(_ path: AnyKeyPath) -> ConfigurationField? { all.first { $0.path == path } }
}

extension ConfigurationField {
    /// How a setting is given, as the command line tells its user: its flag, its variable and
    /// its key in the file (`--account, IPDIRECT_ACCOUNT or 'account' in the configuration file`);
    /// with a value, the flag that gives it (`--cipher des`).
    public static func waysToGive(_ setting: Setting, value: String?) -> String {
        let field = all.first { $0.setting == setting }
        if let value {
            return field?.flag.map { "\($0) \(value)" }
                ?? "\(setting.rawValue) = \"\(value)\" in the configuration file"
        }
        let file = "'\(setting.rawValue)' in the configuration file"
        let ways = [field?.flag, field?.variable].compactMap { $0 } + [file]
        return ways.count == 1 ? file : ways.dropLast().joined(separator: ", ") + " or " + file
    }

    /// A resolution failure in the command line's words: a provider that cannot be built names
    /// the flags, variables and keys that give what it lacks; any other failure reads as it is.
    public static func phrased(_ error: ResolutionError) -> String {
        guard case .setup(let problem) = error else { return error.description }
        return problem.phrased(naming: waysToGive)
    }
}

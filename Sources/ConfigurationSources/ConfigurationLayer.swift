// The settings one source gives (the bundled defaults, the file, the environment, the command
// line), layered one over another and resolved; every resolver setting follows `ConfigurationField.all`.
import BundledResources
import FoundationEssentials
import NameResolution
import TOMLKit

/// The settings one source (file, environment, command line) gives; a setting not given is nil.
///
/// Read and written as the configuration's own names (`layer.timeout = 3`), one per
/// `ConfigurationField`; the sections that are not the resolver's (`console`, `agent`,
/// `redact`) and `persist_cache` are stored beside them.
@dynamicMemberLookup
public struct ConfigurationLayer: Sendable {
    /// Key paths are immutable values the standard library does not mark Sendable.
    private struct Values: @unchecked Sendable {
        var byPath: [AnyKeyPath: any Sendable] = [:]
    }
    private var values = Values()

    /// Whether answers are kept in a file (`persist_cache`); the file is `cache_path`.
    public var persistCache: Bool?
    /// `[[providers]]`, to compare.
    public var providers: [ProviderSetting]?
    public var console = ConsoleSettings()
    public var agent: AgentFileSettings?
    public var redact: [String]?

    public init() {}

    /// A resolver setting this layer gives, nil when it gives none.
    public subscript<T: Sendable>(dynamicMember path: WritableKeyPath<ResolverConfiguration, T>) -> T? {
        get { values.byPath[path] as? T }
        set { values.byPath[path] = newValue }
    }

    /// A resolver setting that is optional in the resolved configuration: nil is "not given".
    public subscript<T: Sendable>(dynamicMember path: WritableKeyPath<ResolverConfiguration, T?>) -> T? {
        get { values.byPath[path] as? T }
        set { values.byPath[path] = newValue }
    }

    /// This layer over `base`: every setting this layer gives replaces the base's.
    public func over(_ base: ConfigurationLayer) -> ConfigurationLayer {
        var merged = self
        merged.values.byPath = base.values.byPath.merging(values.byPath) { _, mine in mine }
        merged.persistCache = persistCache ?? base.persistCache
        merged.providers = providers ?? base.providers
        merged.console = console.over(base.console)
        merged.agent = agent ?? base.agent
        merged.redact = redact ?? base.redact
        return merged
    }

    /// The finished configuration: this layer over the built-in defaults.
    ///
    /// An endpoint naming a preset also picks the preset's provider kind when no provider
    /// was given, so `--endpoint dnspod` alone means tencent.
    public func resolved(defaultCachePath: String?) -> IPDirectConfiguration {
        var layer = self
        if layer.provider == nil, let endpoint = layer.endpoint, let preset = ProviderPreset.named(endpoint) {
            layer.provider = preset.kind
        }
        return layer.over(Self.defaults).applied(to: IPDirectConfiguration.base, defaultCachePath: defaultCachePath)
    }

    /// Every setting this layer gives, written over `base`.
    private func applied(to base: IPDirectConfiguration, defaultCachePath: String?) -> IPDirectConfiguration {
        var configuration = base
        for field in ConfigurationField.all {
            if let value = values.byPath[field.path] { field.write(value, &configuration.resolver) }
        }
        let cachePath = configuration.resolver.cachePath ?? defaultCachePath
        configuration.resolver.cachePath = persistCache ?? true ? cachePath : nil
        configuration.resolver.providers = providers ?? []
        configuration.console = console
        configuration.agent = agent ?? AgentFileSettings()
        configuration.redact = redact ?? []
        return configuration
    }

    /// The layer the environment gives: every field's variable (`IPDIRECT_PROVIDER`,
    /// `IPDIRECT_ENDPOINT`, `IPDIRECT_ACCOUNT`, `IPDIRECT_HTTPDNS_SECRET`, ...).
    ///
    /// - Throws: `ConfigurationError` for a value outside its set (an unknown provider name).
    public static func environment(_ env: [String: String]) throws(ConfigurationError) -> ConfigurationLayer {
        var layer = ConfigurationLayer()
        for field in ConfigurationField.all {
            guard let variable = field.variable, let text = env[variable] else { continue }
            if let value = try field.readVariable(text) { layer.values.byPath[field.path] = value }
        }
        return layer
    }

    /// Parses the TOML configuration file's text.
    ///
    /// - Throws: `ConfigurationError` naming the line of a syntax error, or the key whose
    ///   value has the wrong type or an unknown value.
    public static func toml(
        _ text: String, path: String
    ) throws(ConfigurationError) -> (layer: ConfigurationLayer, warnings: [String]) {
        let table: TOMLTable
        // TOMLKit aborts the process on some malformed files; those are refused here first.
        if let problem = TOMLPreflight.problem(in: text) { throw .unreadable(path, problem) }
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw .unreadable(path, "\(error.description) at line \(error.source.begin.line)")
        } catch {
            throw .unreadable(path, "\(error)")
        }
        var warnings: [String] = []
        var layer = ConfigurationLayer()
        let known = Set(ConfigurationField.all.map(\.key) + sections)
        for key in table.keys where !known.contains(key) {
            warnings.append("\(path): unknown setting '\(key)' ignored")
        }
        for field in ConfigurationField.all {
            guard let raw = table[field.key] else { continue }
            if let value = try field.read(raw, path) { layer.values.byPath[field.path] = value }
        }
        if let raw = table["persist_cache"] {
            layer.persistCache = try SettingType.flag.read(raw, "persist_cache", path)
        }
        if let raw = table["redact"] {
            layer.redact = try SettingType.list("an array of names ([\"x-my-header\"])").read(raw, "redact", path)
        }
        let providers = try ProviderSetting.list(table["providers"], path: path)
        layer.providers = providers.0
        warnings += providers.1
        layer.console = try ConsoleSettings.parse(table, path: path)
        let agent = try AgentFileSettings.parse(table, path: path)
        layer.agent = agent.settings
        warnings += agent.warnings
        return (layer, warnings)
    }

    /// The file's keys that are not resolver fields: sections and settings stored beside them.
    private static let sections = [
        "persist_cache", "providers", "theme", "keys", "export_dir", "agent", "modules", "redact",
    ]

    /// The bundled Resources/default-config.toml as a layer: every setting given.
    public static let defaults: ConfigurationLayer = {
        do {
            return try toml(BundledResources.defaultConfigTOML, path: "Resources/default-config.toml").layer
        } catch {
            // The file ships inside the binary; failing to read it is a build defect, made loud.
            fatalError("Resources/default-config.toml does not parse: \(error)")
        }
    }()
}

extension ConfigurationLayer {
    /// A layer built in place: `ConfigurationLayer { $0.account = "333" }`.
    public init(_ build: (inout ConfigurationLayer) -> Void) {
        self.init()
        build(&self)
    }
}

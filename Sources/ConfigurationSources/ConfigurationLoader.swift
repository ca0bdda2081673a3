// Where the configuration comes from: the file at its XDG path, the environment and the command
// line, merged over the bundled defaults; and `config init`'s commented file.
import BundledResources
import FoundationEssentials
import FoundationGaps
import NameResolution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where ipdirect keeps its files, following the XDG base directory convention.
public enum ConfigurationPaths {
    /// `$XDG_CONFIG_HOME/ipdirect/config.toml`, or `~/.config/ipdirect/config.toml`.
    public static func configFile(environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        base("XDG_CONFIG_HOME", fallback: ".config", env) + "/ipdirect/config.toml"
    }

    /// `$XDG_CACHE_HOME/ipdirect/cache.json`, or `~/.cache/ipdirect/cache.json`.
    public static func cacheFile(environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        base("XDG_CACHE_HOME", fallback: ".cache", env) + "/ipdirect/cache.json"
    }

    private static func base(_ variable: String, fallback: String, _ env: [String: String]) -> String {
        // XDG says a relative value is invalid and must be ignored.
        if let value = env[variable], value.hasPrefix("/") { return value }
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + "/" + fallback
    }
}

/// Loads the configuration from every source.
public enum ConfigurationLoader {
    /// Merges command line over environment over file over defaults.
    ///
    /// - Parameters:
    ///   - commandLine: what the user typed (never a secret).
    ///   - environment: the process environment.
    ///   - file: the configuration file; nil means the XDG default. A missing file is fine.
    /// - Returns: the configuration and warnings to show (unknown keys, a file others can read).
    /// - Throws: `ConfigurationError` for a file that exists but cannot be used.
    public static func load(
        commandLine: ConfigurationLayer = .init(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        file: String? = nil
    ) throws(ConfigurationError) -> (configuration: IPDirectConfiguration, warnings: [String]) {
        let path = file ?? ConfigurationPaths.configFile(environment: environment)
        var warnings: [String] = []
        var fileLayer = ConfigurationLayer()
        if FileManager.default.fileExists(atPath: path) {
            let text: String
            do {
                // ipdirect's own file, read by every command: never a FIFO to block on.
                text = try TextFile.contents(of: path, accepting: .regularFile)
            } catch {
                throw .unreadable(path, error.reason)
            }
            let parsed = try ConfigurationLayer.toml(text, path: path)
            fileLayer = parsed.layer
            warnings += parsed.warnings
            if fileLayer.secret != nil || fileLayer.key != nil || fileLayer.token != nil,
                let mode = permissions(of: path), mode & 0o077 != 0
            {
                warnings.append(
                    "\(path) holds the HTTPDNS secret and others can read it (mode \(String(mode, radix: 8))): run chmod 600 \(path)"
                )
            }
        }
        let merged = commandLine.over(try ConfigurationLayer.environment(environment)).over(fileLayer)
        let configuration = merged.resolved(defaultCachePath: ConfigurationPaths.cacheFile(environment: environment))
        // Said once, here, where every command loads its configuration.
        if let warning = configuration.plainHTTPCredentialWarning { warnings.append(warning) }
        return (configuration, warnings)
    }

    /// Writes the commented default configuration to `path`.
    ///
    /// - Parameter force: overwrite an existing file.
    /// - Throws: `ConfigurationError.exists` when the file exists and `force` is off.
    /// The commented default file `config init` writes (every setting, a comment for each).
    public static var defaultFile: String { BundledResources.defaultConfigTOML }

    /// Writes `contents` (the commented default file unless given) to `path`, private from the start.
    public static func writeDefault(
        to path: String, force: Bool, contents: String = BundledResources.defaultConfigTOML
    ) throws(ConfigurationError) {
        let manager = FileManager.default
        if manager.fileExists(atPath: path), !force { throw .exists(path) }
        // A bare name (`--config bare.toml`) is in the working directory: there is no folder
        // to make, and asking Foundation to make "" fails with "the file doesn't exist".
        let directory = path.deletingLastPathComponent
        do {
            if !directory.isEmpty { try manager.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        } catch {
            throw .io("cannot write \(path): \(SystemReason.words(for: error))")
        }
        // Created private from the start (no moment at 0644): the file is where the signing secret goes.
        try PrivateFile.write(Data(contents.utf8), to: path)
    }

    static func permissions(of path: String) -> Int? {
        // lstat, as FileManager's attributesOfItem: a symlink's own mode, not its file's.
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Int(info.st_mode & ~S_IFMT)
    }
}

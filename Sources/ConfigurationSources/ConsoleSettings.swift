// The console's settings in the configuration file (`theme`, `[keys]`, `export_dir`): read here with the rest of
// the file, judged by the Console module, which knows its actions and keys.
import FoundationEssentials
import NameResolution
import TOMLKit

/// The colours the console draws with (`theme`).
public enum ThemeChoice: String, Sendable, Codable, CaseIterable {
    /// Light or dark from `COLORFGBG` when the terminal sets it; dark otherwise.
    case auto
    case light
    case dark
}

/// What the file says about the console.
public struct ConsoleSettings: Sendable, Equatable {
    public var theme: ThemeChoice?
    /// `[keys]`: action name to the keys that trigger it, in the file's order (`quit = ["x", "Ctrl-Q"]`).
    public var keys: [KeyRemap]
    /// `export_dir`: where the console's `e` writes its files; nil for the working directory.
    public var exportDirectory: String?

    public init(theme: ThemeChoice? = nil, keys: [KeyRemap] = [], exportDirectory: String? = nil) {
        self.theme = theme
        self.keys = keys
        self.exportDirectory = exportDirectory
    }

    /// These settings over `base`: a theme given replaces the base's; remaps of the same action replace.
    public func over(_ base: ConsoleSettings) -> ConsoleSettings {
        var keys = base.keys.filter { remap in !self.keys.contains { $0.action == remap.action } }
        keys += self.keys
        return ConsoleSettings(
            theme: theme ?? base.theme, keys: keys, exportDirectory: exportDirectory ?? base.exportDirectory)
    }

    /// Reads `theme`, `[keys]` and `export_dir` from the file's top table.
    ///
    /// - Throws: `ConfigurationError` for a theme not in the set, or keys not given as strings.
    static func parse(_ table: TOMLTable, path: String) throws(ConfigurationError) -> ConsoleSettings {
        var settings = ConsoleSettings()
        if let raw = table["theme"] {
            guard let name = raw.string else { throw .wrongType(path, "theme", "a string") }
            guard let theme = ThemeChoice(rawValue: name) else {
                throw .invalid("\(path): theme", name, expected: ThemeChoice.allCases.map(\.rawValue))
            }
            settings.theme = theme
        }
        if let raw = table["export_dir"] {
            guard let directory = raw.string else { throw .wrongType(path, "export_dir", "a string (a directory)") }
            // An empty string means "not set", as everywhere in the file.
            settings.exportDirectory = directory.isEmpty ? nil : directory
        }
        if let raw = table["keys"] {
            guard let keys = raw.table else {
                throw .wrongType(path, "keys", "a table of action = \"key\" ([keys] then quit = \"x\")")
            }
            for (action, value) in keys {
                let expected = "a key or an array of keys (\"x\", \"Ctrl-Q\", [\"Up\", \"k\"])"
                if let single = value.string {
                    settings.keys.append(KeyRemap(action: action, keys: [single]))
                } else if let array = value.array {
                    var names: [String] = []
                    for item in array {
                        guard let name = item.string else { throw .wrongType(path, "keys.\(action)", expected) }
                        names.append(name)
                    }
                    settings.keys.append(KeyRemap(action: action, keys: names))
                } else {
                    throw .wrongType(path, "keys.\(action)", expected)
                }
            }
        }
        return settings
    }
}

/// One line of `[keys]`: an action and the keys the user wants for it, as written.
public struct KeyRemap: Sendable, Equatable {
    public var action: String
    public var keys: [String]

    public init(action: String, keys: [String]) {
        self.action = action
        self.keys = keys
    }
}

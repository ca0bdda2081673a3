// The agent's settings in the configuration file (`[[agent.targets]]`): read here with the rest of
// the file as written, judged by the agent, which knows scenarios, methods and headers.
import FoundationEssentials
import NameResolution
import TOMLKit

/// One `[[agent.targets]]` table, as written.
public struct AgentFileTarget: Sendable, Equatable {
    /// Its place among the file's targets, from 1, for sentences about it.
    public var number: Int
    public var url: String
    /// Scenario names (`scenarios = ["direct-sni", "direct-https"]`); empty keeps the command line's.
    public var scenarios: [String]
    /// The method (`method = "HEAD"`); nil keeps the command line's.
    public var method: String?
    /// `Name: value` lines (`headers = ["X-A: b"]`).
    public var headers: [String]

    public init(number: Int, url: String, scenarios: [String] = [], method: String? = nil, headers: [String] = []) {
        self.number = number
        self.url = url
        self.scenarios = scenarios
        self.method = method
        self.headers = headers
    }
}

/// What the file says about the agent.
public struct AgentFileSettings: Sendable, Equatable {
    /// `[[agent.targets]]`, in the file's order.
    public var targets: [AgentFileTarget]
    /// `[modules.NAME]`, the `/probe` endpoint's named settings, by name.
    public var modules: [ProbeModuleFileSettings]

    public init(targets: [AgentFileTarget] = [], modules: [ProbeModuleFileSettings] = []) {
        self.targets = targets
        self.modules = modules
    }

    /// Reads `[agent]` and `[modules.NAME]` from the file's top table.
    ///
    /// - Returns: the settings (nil when the file has neither) and warnings for unknown keys.
    /// - Throws: `ConfigurationError` for a value of the wrong type or a target without a url.
    static func parse(
        _ table: TOMLTable, path: String
    ) throws(ConfigurationError) -> (settings: AgentFileSettings?, warnings: [String]) {
        let modules = try ProbeModuleFileSettings.parse(table, path: path)
        guard let raw = table["agent"] else {
            return (modules.modules.isEmpty ? nil : AgentFileSettings(modules: modules.modules), modules.warnings)
        }
        guard let agent = raw.table else {
            throw .wrongType(path, "agent", "a table ([[agent.targets]] then url = \"https://...\")")
        }
        var warnings = modules.warnings
        for key in agent.keys where key != "targets" {
            warnings.append("\(path): unknown setting 'agent.\(key)' ignored")
        }
        var settings = AgentFileSettings(modules: modules.modules)
        guard let list = agent["targets"] else { return (settings, warnings) }
        let shape = "an array of tables ([[agent.targets]] then url = \"https://...\")"
        guard let array = list.array else { throw .wrongType(path, "agent.targets", shape) }
        let known: Set<String> = ["url", "scenarios", "method", "headers"]
        for (index, item) in array.enumerated() {
            let number = index + 1
            let name = "agent.targets #\(number)"
            guard let entry = item.table else { throw .wrongType(path, "agent.targets", shape) }
            for key in entry.keys where !known.contains(key) {
                warnings.append(
                    "\(path): unknown setting '\(key)' in \(name) ignored (known: url, scenarios, method, headers)")
            }
            guard let url = entry["url"]?.string, !url.isEmpty else {
                throw .wrongType(path, "\(name): url", "a URL string (url = \"https://example.com/health\")")
            }
            func strings(_ key: String, _ example: String) throws(ConfigurationError) -> [String] {
                guard let raw = entry[key] else { return [] }
                if let single = raw.string { return [single] }
                let values = raw.array?.compactMap(\.string) ?? []
                guard let array = raw.array, values.count == array.count else {
                    throw .wrongType(path, "\(name): \(key)", "an array of strings (\(key) = \(example))")
                }
                return values
            }
            var target = AgentFileTarget(number: number, url: url)
            target.scenarios = try strings("scenarios", "[\"direct-sni\", \"direct-https\"]")
            target.headers = try strings("headers", "[\"X-Probe: agent\"]")
            if let method = entry["method"] {
                guard let text = method.string else {
                    throw .wrongType(path, "\(name): method", "a string (method = \"HEAD\")")
                }
                target.method = text
            }
            settings.targets.append(target)
        }
        return (settings, warnings)
    }
}

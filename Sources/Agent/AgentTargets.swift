// The agent's target list: the `probe --input` format (a URL a line with its own settings, '#'
// comments), re-read when it changes or on SIGHUP; a gone or unusable file keeps the last good list.
import ConfigurationSources
import CoreFoundation
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One URL the agent probes, with the label that names it in metrics and spans.
public struct AgentTarget: Sendable, Hashable {
    /// The URL as written in the list (or as the lab rewrote it).
    public var url: String
    /// `host` or `host:port`: the `target` label. The path never becomes a label, so a list's
    /// metric series stay bounded by its hosts, not by its URLs.
    public var label: String
    /// Its own scenarios, method and headers over the command line's.
    public var settings: TargetSettings

    /// - Parameters:
    ///   - url: the URL; it must parse as a probe URL.
    ///   - settings: what it sets for itself.
    /// - Throws: `ProbeURLError` when it does not.
    public init(_ url: String, settings: TargetSettings = TargetSettings()) throws(ProbeURLError) {
        let parsed = try ProbeURL.parse(url)
        self.url = url
        self.settings = settings
        label = parsed.hasExplicitPort ? "\(parsed.host):\(parsed.port)" : parsed.host
    }

    /// Refuses what the agent does not send: POST would repeat a change every round.
    ///
    /// - Throws: `TargetSettingError` for method POST.
    public static func check(_ settings: TargetSettings) throws(TargetSettingError) {
        if settings.method == .post {
            throw TargetSettingError("the agent sends GET or HEAD; POST would repeat a change every round")
        }
    }

    /// The configuration file's `[[agent.targets]]` as targets, each checked.
    ///
    /// - Parameters:
    ///   - file: the tables as written.
    ///   - rewrite: applied to each URL (the lab's port for a lab name).
    /// - Throws: `TargetSettingError` naming the entry and what is wrong with it.
    public static func configured(
        _ file: AgentFileSettings, rewrite: (String) -> String = { $0 }
    ) throws(TargetSettingError) -> [AgentTarget] {
        var targets: [AgentTarget] = []
        for entry in file.targets {
            let name = "the configuration's agent.targets #\(entry.number) (\(entry.url))"
            do {
                var settings = TargetSettings()
                if !entry.scenarios.isEmpty {
                    settings.scenarios = try TargetSettings.scenario(entry.scenarios.joined(separator: ","))
                }
                if let method = entry.method { settings.method = try TargetSettings.method(method) }
                for line in entry.headers { settings.headers.append(try HeaderField(parsing: line)) }
                try check(settings)
                targets.append(try AgentTarget(rewrite(entry.url), settings: settings))
            } catch let error as TargetSettingError {
                throw TargetSettingError("\(name): \(error.reason)")
            } catch let error as ProbeURLError {
                throw TargetSettingError("\(name): \(error.reason)")
            } catch {
                throw TargetSettingError("\(name): \(error)")
            }
        }
        return merged(targets, [])
    }

    /// `first`, then the targets of `then` whose URL `first` does not have: a URL in both keeps
    /// the settings `first` gives it.
    public static func merged(_ first: [AgentTarget], _ then: [AgentTarget]) -> [AgentTarget] {
        var seen = Set(first.map(\.url))
        return first + then.filter { seen.insert($0.url).inserted }
    }
}

/// What reading a target list found.
public enum TargetListError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file cannot be read (deleted, unreadable).
    case unreadable(path: String, reason: String)
    /// Lines that are not targets (a bad URL or setting); `line` counts from 1.
    case badLines(path: String, lines: [(line: Int, reason: String)])
    /// The file holds no URL at all (often a file caught half-written).
    case empty(path: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read the targets file \(path): \(reason)"
        case .badLines(let path, let lines):
            let shown = lines.prefix(3).map { "line \($0.line): \($0.reason)" }.joined(separator: "; ")
            let more = lines.count > 3 ? " (and \(lines.count - 3) more)" : ""
            return "the targets file \(path) has lines that are not targets: \(shown)\(more); fix them and save again"
        case .empty(let path):
            return "the targets file \(path) has no URL in it"
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.description == rhs.description }
}

/// Parses the `--input` format: one URL a line, optionally followed by its own settings
/// (`TargetLine`); `#` outside quotes starts a comment; blank lines are skipped.
public enum TargetList {
    /// Reads and checks a whole list: every line must be a URL with usable settings, and there must be one.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - rewrite: applied to each URL before it is checked (the lab's port for a lab name).
    /// - Returns: the targets, in file order, each URL once.
    /// - Throws: `TargetListError`.
    public static func read(
        _ path: String, rewrite: (String) -> String = { $0 }
    ) throws(TargetListError)
        -> [AgentTarget]
    {
        let text: String
        do {
            // Re-read on every change: a FIFO would block the agent, a device would never end.
            text = try TextFile.contents(of: path, accepting: .regularFile)
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        var targets: [AgentTarget] = []
        var seen = Set<String>()
        var bad: [(line: Int, reason: String)] = []
        for (line, entry) in TargetLine.entries(text) {
            do {
                let parsed = try TargetLine.parse(entry)
                try AgentTarget.check(parsed.settings)
                let target = try AgentTarget(rewrite(parsed.url), settings: parsed.settings)
                if seen.insert(target.url).inserted { targets.append(target) }
            } catch let error as TargetSettingError {
                bad.append((line, error.reason))
            } catch let error as ProbeURLError {
                bad.append((line, error.reason))
            } catch {
                bad.append((line, "\(error)"))
            }
        }
        guard bad.isEmpty else { throw .badLines(path: path, lines: bad) }
        guard !targets.isEmpty else { throw .empty(path: path) }
        return targets
    }
}

/// A targets file watched for change: its identity (device, inode, size, modification time)
/// is compared on each `check()`, and SIGHUP forces a reload.
public final class TargetsFile: Sendable {
    /// What a reload did, for the log.
    public enum Reload: Sendable, Equatable {
        /// The file has not changed since the last look.
        case unchanged
        /// A new list is in force.
        case loaded(count: Int)
        /// The file is unusable; the last good list (of `count` targets) stays in force.
        case keptLast(count: Int, because: TargetListError)
    }

    private struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
    }

    private struct State {
        var identity: Identity?
        var targets: [AgentTarget] = []
        /// The last complaint, so a file that stays broken is not reported every second.
        var lastProblem: TargetListError?
    }

    public let path: String
    /// Targets from elsewhere (the configuration file), probed too; a URL the file also has
    /// takes the file's settings.
    public let configured: [AgentTarget]
    private let rewrite: @Sendable (String) -> String
    private let state = Locked(State())

    /// Reads the file once; it must be usable at start.
    ///
    /// - Parameters:
    ///   - path: the list.
    ///   - rewrite: applied to each URL (the lab's port for a lab name).
    ///   - configured: targets from the configuration file, merged after the file's.
    /// - Throws: `TargetListError` when the first read fails.
    public init(
        path: String, rewrite: @escaping @Sendable (String) -> String = { $0 }, configured: [AgentTarget] = []
    ) throws(TargetListError) {
        self.path = path
        self.configured = configured
        self.rewrite = rewrite
        let identity = Self.identity(of: path)
        let targets = try TargetList.read(path, rewrite: rewrite)
        state.withLock {
            $0.identity = identity
            $0.targets = targets
        }
    }

    /// The list in force: the file's, then the configured ones it does not have.
    public var targets: [AgentTarget] { AgentTarget.merged(state.withLock { $0.targets }, configured) }

    /// Re-reads the file when it changed (or always, with `force`).
    ///
    /// - Parameter force: read even when the file looks the same (SIGHUP).
    /// - Returns: what happened; a problem already reported and not changed since is `.unchanged`.
    public func check(force: Bool = false) -> Reload {
        let identity = Self.identity(of: path)
        let changed = state.withLock { $0.identity != identity }
        guard force || changed else { return .unchanged }
        do {
            let targets = try TargetList.read(path, rewrite: rewrite)
            state.withLock {
                $0.identity = identity
                $0.targets = targets
                $0.lastProblem = nil
            }
            return .loaded(count: AgentTarget.merged(targets, configured).count)
        } catch {
            return state.withLock { state -> Reload in
                state.identity = identity
                let repeated = state.lastProblem == error && !force
                state.lastProblem = error
                let count = AgentTarget.merged(state.targets, configured).count
                return repeated ? .unchanged : .keptLast(count: count, because: error)
            }
        }
    }

    private static func identity(of path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let modified = info.st_mtimespec
        #else
            let modified = info.st_mtim
        #endif
        return Identity(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec))
    }
}

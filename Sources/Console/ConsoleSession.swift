// Runs the console: one thread owns ncurses and the state; engine work runs in tasks whose
// results come back as actions through a queue that wakes the loop (a self-pipe).
import CNcurses
import FoundationEssentials
import FoundationGaps
import NameResolution
import Probe
import Signals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How the console was started.
public struct ConsoleOptions: Sendable {
    /// False with `--no-color` or when `NO_COLOR` is set.
    public var useColor: Bool
    /// How many traces are kept; older ones are dropped (`--max-traces`).
    public var maxTraces: Int
    /// How many of the newest traces keep headers, certificates and logs (`--max-trace-details`).
    public var maxTraceDetails: Int
    /// A host to probe as soon as the console is up.
    public var initialTarget: String?
    /// The keys in force (`[keys]` applied) and the colours (`theme`).
    public var keyMap = KeyMap.standard
    public var theme = ConsoleTheme.dark
    /// Where `e` writes (`export_dir`); nil for the working directory. Made absolute at start,
    /// so what the console says it wrote can be found from any shell.
    public var exportDirectory: String?

    /// How many traces are kept unless told otherwise (`--max-traces`): the one default.
    public static let defaultMaxTraces = 10_000
    /// How many of the newest traces keep their details unless told otherwise (`--max-trace-details`).
    public static let defaultMaxTraceDetails = 2_000

    public init(
        useColor: Bool = true, maxTraces: Int = defaultMaxTraces, maxTraceDetails: Int = defaultMaxTraceDetails,
        initialTarget: String? = nil, keyMap: KeyMap = .standard, theme: ConsoleTheme = .dark,
        exportDirectory: String? = nil
    ) {
        self.exportDirectory = exportDirectory
        self.keyMap = keyMap
        self.theme = theme
        self.useColor = useColor
        self.maxTraces = maxTraces
        self.maxTraceDetails = maxTraceDetails
        self.initialTarget = initialTarget
    }

    /// `directory` as an absolute path without `~`, `.`, `..`, empty components or a trailing
    /// `/`: relative to the working directory, which it is when nil. `~` and `~/...` are the
    /// home directory (`HOME`), `~name/...` that user's; symbolic links are kept as written.
    public static func absoluteDirectory(_ directory: String?) -> String {
        let working = FileManager.default.currentDirectoryPath
        guard let directory, !directory.isEmpty else { return working }
        var path = directory
        if path.hasPrefix("~") {
            let user = path.dropFirst().prefix { $0 != "/" }
            let home =
                user.isEmpty
                ? FileManager.default.homeDirectoryForCurrentUser.path
                : FileManager.default.homeDirectory(forUser: String(user))?.path
            if let home { path = home + path.dropFirst(1 + user.count) }
        }
        if !path.hasPrefix("/") { path = working + "/" + path }
        var components: [Substring] = []
        for component in path.split(separator: "/") {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    /// Whether the environment asks for no color (https://no-color.org: set and not empty).
    public static var environmentForbidsColor: Bool {
        if let value = ProcessInfo.processInfo.environment["NO_COLOR"], !value.isEmpty { return true }
        return false
    }
}

/// Why the console cannot start.
public enum ConsoleStartError: Error, CustomStringConvertible {
    case notATerminal
    /// The pipe that wakes the console for results could not be made (`errno`).
    case noWakePipe(errno: Int32)

    public var description: String {
        switch self {
        case .notATerminal:
            "the console needs a terminal (stdin and stdout are not one); for scripts use 'ipdirect probe URL...' or 'ipdirect resolve HOST...'"
        case .noWakePipe(let code):
            "cannot start the console: no pipe for its results (\(String(cString: strerror(code)))); close some files and try again"
        }
    }
}

/// Actions from other threads, handed to the console loop; posting wakes it at once.
final class ActionQueue: Sendable {
    private let pending = Locked<[ConsoleAction]>([])
    let readDescriptor: Int32
    let writeDescriptor: Int32

    /// - Throws: `ConsoleStartError.noWakePipe` when no pipe can be made (descriptors ran out);
    ///   without it the console would never see a probe's results.
    init() throws(ConsoleStartError) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { throw .noWakePipe(errno: errno) }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    func post(_ action: ConsoleAction) {
        let wasEmpty = pending.withLock { pending in
            defer { pending.append(action) }
            return pending.isEmpty
        }
        if wasEmpty {
            var byte: UInt8 = 1
            _ = write(writeDescriptor, &byte, 1)
        }
    }

    func drain() -> [ConsoleAction] {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(readDescriptor, &bytes, bytes.count) > 0 {}
        return pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }
}

/// The interactive console.
public enum ConsoleSession {
    /// Whether stdin and stdout are a terminal, as the console needs.
    public static var hasTerminal: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Runs the console until the user quits or a signal asks it to stop.
    ///
    /// - Returns: the signal that stopped it (the terminal is restored by then), so the caller
    ///   exits with 128 plus its number as a shell expects; nil when the user quit.
    /// - Throws: `ConsoleStartError.notATerminal` without a terminal.
    @discardableResult
    public static func run(engine: any ConsoleEngine, options: ConsoleOptions) async throws -> Int32? {
        guard hasTerminal else { throw ConsoleStartError.notATerminal }
        _ = cnc_setlocale_all_from_env()
        let codeset = cnc_codeset().map { String(cString: $0) } ?? ""
        let glyphs = Glyphs.forCodeset(codeset)
        let queue = try ActionQueue()
        let events = Task {
            for await event in engine.resolverEvents() { queue.post(.resolverEvent(event)) }
        }
        // The console's own thread for its whole life (it blocks in ncurses' input), handing its
        // end back through FoundationGaps' one hand-off.
        let ended = await HandOff().value { (delivery: HandOff.Delivery<Result<Int32?, any Error>>) in
            detachThread(named: "ipdirect console") {
                do {
                    let loop = try ConsoleLoop(engine: engine, options: options, glyphs: glyphs, queue: queue)
                    delivery.deliver(.success(loop.run()))
                } catch {
                    delivery.deliver(.failure(error))
                }
            }
        }
        events.cancel()
        return try ended.get()
    }
}

/// The loop of the console thread: wait for a key, an engine event or the next second;
/// reduce; draw what changed.
final class ConsoleLoop {
    private let engine: any ConsoleEngine
    private let queue: ActionQueue
    private let options: ConsoleOptions
    private let screen: Screen
    /// SIGINT, SIGTERM and SIGHUP ask the loop to quit; SIGWINCH (after ncurses's own handler
    /// has noted the size) wakes it, since the signal may land on another thread than this one.
    private let signals: SignalPipe
    private var state: ConsoleState
    private var dirty = true
    private var probes: [Int: Task<Void, Never>] = [:]
    /// The last lab-fault change asked for: each waits for the one before, so two quick presses
    /// reach the lab, and come back, in the order they were made.
    private var labFaultChange: Task<Void, Never>?
    /// The doctor's run under way, cancelled when another starts or the console quits.
    private var doctorRun: Task<Void, Never>?
    private let cacheLoading = CacheLoadFlag()

    init(engine: any ConsoleEngine, options: ConsoleOptions, glyphs: Glyphs, queue: ActionQueue) throws {
        self.engine = engine
        self.queue = queue
        self.options = options
        screen = Screen(useColor: options.useColor)
        do {
            // After initscr, so SIGWINCH chains to the handler ncurses installed.
            signals = try SignalPipe(watching: [SIGINT, SIGTERM, SIGHUP, SIGWINCH], chaining: [SIGWINCH])
        } catch {
            screen.end()
            throw error
        }
        state = ConsoleState(
            size: screen.size, now: Date(), engine: engine.description, glyphs: glyphs, maxTraces: options.maxTraces,
            maxTraceDetails: options.maxTraceDetails)
        state.keyMap = options.keyMap
        state.theme = options.theme
        state.exportDirectory = ConsoleOptions.absoluteDirectory(options.exportDirectory)
    }

    /// Runs until quit; returns the signal that asked it to stop, if one did.
    func run() -> Int32? {
        var stoppedBy: Int32?
        dispatch(.message(state.message))
        perform(.loadCache)
        if let target = options.initialTarget {
            state.input = target
            state.mode = .probeInput
            dispatch(.key(.enter))
        }
        var nextTick = Date().timeIntervalSince1970.rounded(.down) + 1
        while !state.quitting {
            if dirty {
                screen.draw(render(state, size: state.size))
                dirty = false
            }
            let wait = max(0, nextTick - Date().timeIntervalSince1970)
            var descriptors = [
                pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                pollfd(fd: queue.readDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.readDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            // After SIGWINCH, ncurses reports KEY_RESIZE through getch.
            _ = poll(&descriptors, 3, Int32((wait * 1000).rounded(.up)))
            if let stop = signals.drain().first(where: { $0 != SIGWINCH }) {
                stoppedBy = stoppedBy ?? stop
                dispatch(.terminate)
            }
            while let input = screen.read() {
                switch input {
                case .key(let key): dispatch(.key(key))
                case .resize(let size): dispatch(.resize(size))
                }
            }
            for action in queue.drain() { dispatch(action) }
            let now = Date().timeIntervalSince1970
            if now >= nextTick {
                dispatch(.tick(Date()))
                nextTick = now.rounded(.down) + 1
            }
        }
        for task in probes.values { task.cancel() }
        doctorRun?.cancel()
        signals.stop()
        screen.end()
        return stoppedBy
    }

    private func dispatch(_ action: ConsoleAction) {
        if case .cacheEntries = action { cacheLoading.clear() }
        for effect in reduce(into: &state, action: action) { perform(effect) }
        dirty = true
    }

    private func perform(_ effect: ConsoleEffect) {
        let engine = engine
        let queue = queue
        switch effect {
        case .probe(let runID, let target):
            probes[runID] = Task {
                for await event in engine.probe(target) { queue.post(.probeEvent(runID: runID, event)) }
                queue.post(.probeEnded(runID: runID))
            }
        case .loadCache:
            // One load at a time: a burst of resolver events asks for one snapshot, not many.
            guard cacheLoading.begin() else { return }
            Task { queue.post(.cacheEntries(await engine.cacheEntries())) }
        case .flush(let host):
            Task {
                await engine.flush(host)
                queue.post(.cacheEntries(await engine.cacheEntries()))
            }
        case .refresh(let host):
            Task {
                await engine.refresh(host)
                queue.post(.cacheEntries(await engine.cacheEntries()))
            }
        case .setFamily(let family):
            Task { await engine.setFamily(family) }
        case .setReuseExpired(let enabled):
            Task { await engine.setReuseExpired(enabled) }
        case .setLabFault(let fault):
            let previous = labFaultChange
            labFaultChange = Task {
                await previous?.value
                queue.post(.labFaultChanged(await engine.setLabFault(fault)))
            }
        case .export(let attempts, let basePath):
            Task {
                do {
                    queue.post(.exported(try await engine.export(attempts, basePath: basePath)))
                } catch {
                    queue.post(.exportFailed("\(error)"))
                }
            }
        case .compareProviders(let host):
            Task { queue.post(.providersCompared(await engine.compareProviders(host))) }
        case .rankIPs(let request, let resolution, let port, let attempts):
            Task {
                queue.post(
                    .ipsRanked(request: request, await engine.rankIPs(resolution, port: port, attempts: attempts)))
            }
        case .probeIP(let runID, let target, let scenario, let ip):
            probes[runID] = Task {
                for await event in engine.probe(target, scenario: scenario, ip: ip) {
                    queue.post(.probeEvent(runID: runID, event))
                }
                queue.post(.probeEnded(runID: runID))
            }
        case .exportWatch(let rounds, let path):
            Task {
                do {
                    queue.post(.watchExported(try await engine.exportWatch(rounds, path: path)))
                } catch {
                    queue.post(.exportFailed("\(error)"))
                }
            }
        case .runDoctor(let run):
            // One run at a time: `r` abandons the run under way (its late findings are dropped).
            doctorRun?.cancel()
            doctorRun = Task {
                let report = await engine.doctor { finding in queue.post(.doctorFinding(run: run, finding)) }
                queue.post(.doctorFinished(run: run, report))
            }
        case .exportDoctor(let report, let path):
            Task {
                do {
                    queue.post(.doctorExported(try await engine.exportDoctor(report, path: path)))
                } catch {
                    queue.post(.exportFailed("\(error)"))
                }
            }
        case .startAudit:
            Task {
                do {
                    queue.post(.auditStarted(try await engine.startAudit()))
                } catch {
                    queue.post(.auditFailed("\(error)"))
                }
            }
        case .loadAuditReport:
            Task { if let report = await engine.auditReport() { queue.post(.auditReport(report)) } }
        case .copyToClipboard(let text):
            // On this thread: the screen belongs to it, and the sequence must follow a frame.
            screen.draw(render(state, size: state.size))
            dispatch(.clipboardCopied(screen.copyToClipboard(text)))
        case .quit:
            break
        }
    }
}

/// Whether a cache snapshot is being loaded.
final class CacheLoadFlag: Sendable {
    private let loading = Locked(false)

    /// Marks a load as started; false when one is already under way.
    func begin() -> Bool {
        loading.withLock { loading in
            if loading { return false }
            loading = true
            return true
        }
    }

    func clear() {
        loading.withLock { $0 = false }
    }
}

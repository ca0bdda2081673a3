// The console's one state value: everything the views draw, changed only by the reducer.
// Engine data arrives as copies (cache snapshots, attempts, events), never references.
import FoundationEssentials
import LabFaults
import NameResolution
import Probe

/// A view of the console: a tab, or a view a letter key opens. Each is declared in its folder
/// under `Views/` (`ConsoleView.probe`), beside the feature that draws it.
public struct ConsoleView: Hashable, Sendable {
    /// The name on its tab.
    public let title: String

    init(_ title: String) { self.title = title }

    /// The views the tab bar lists and Tab cycles through, in the order of their number keys.
    public static var tabs: [ConsoleView] { ConsoleFeatures.tabs }
}

/// What the keyboard is doing besides commands.
public enum InputMode: Sendable, Equatable {
    case command
    /// Typing a host or URL on the probe view's input line.
    case probeInput
    /// Typing the filter of the current list.
    case filter
    /// Waiting for y/n before flushing the whole cache.
    case confirmFlushAll
}

/// One probe of a host or URL as it unfolds.
public struct ProbeRun: Sendable, Equatable {
    public var id: Int
    public var target: String
    public var startedAt: Date
    public var resolution: HostResolution?
    public var attempts: [Attempt] = []
    /// Attempts started and not finished yet, for the matrix's "running" cells.
    public var running: [RunningAttempt] = []
    public var report: URLReport?
    public var failure: String?
    public var finished = false

    public init(id: Int, target: String, startedAt: Date) {
        self.id = id
        self.target = target
        self.startedAt = startedAt
    }
}

/// An attempt under way: which cell of the matrix it fills.
public struct RunningAttempt: Sendable, Equatable {
    public var scenario: Scenario
    public var ip: IPAddress?
    public var ipSource: IPSource?

    public init(scenario: Scenario, ip: IPAddress?, ipSource: IPSource?) {
        self.scenario = scenario
        self.ip = ip
        self.ipSource = ipSource
    }
}

/// One request in the traces list.
public struct TraceRecord: Sendable, Equatable {
    /// Increases by one per trace ever recorded; survives the ring dropping old ones.
    public var sequence: Int
    /// The probe run it belongs to (its resolution and verdict are in `runContexts`).
    public var runID: Int
    public var attempt: Attempt
    /// When the attempt started (its first hop), or when it arrived.
    public var time: Date

    /// The text `/` matches against, lowercased once when recorded so filtering stays fast.
    var searchKey: String
    /// False once headers, certificate chain and curl's log were dropped to bound memory.
    public var detailed = true

    init(sequence: Int, runID: Int, attempt: Attempt, time: Date) {
        self.sequence = sequence
        self.runID = runID
        self.attempt = attempt
        self.time = time
        searchKey = [
            attempt.scenario.rawValue, attempt.url, attempt.ip?.text ?? "", attempt.sni ?? "", attempt.outcome.rawValue,
        ]
        .joined(separator: " ").lowercased()
    }

    /// Whether the lowercased `needle` occurs in the search key.
    func matches(_ needle: String) -> Bool {
        if needle.isEmpty { return true }
        var key = searchKey
        var pattern = needle
        return key.withUTF8 { haystack in
            pattern.withUTF8 { wanted in
                containsBytes(haystack, wanted)
            }
        }
    }

    /// Drops the heavy parts (headers, certificate chain, curl's log, body preview), keeping
    /// what the list, the waterfall and an export's timings need.
    mutating func dropDetail() {
        guard detailed else { return }
        detailed = false
        attempt.certificate?.chain = []
        for index in attempt.hops.indices {
            attempt.hops[index].requestHeaders = []
            attempt.hops[index].responseHeaders = []
            attempt.hops[index].log = []
            attempt.hops[index].bodyPreview = ""
            attempt.hops[index].certificate?.chain = []
        }
    }
}

/// What a probe run found besides its attempts, kept as long as its traces for exports.
public struct RunContext: Sendable, Equatable {
    public var url: String?
    public var host: String?
    public var resolution: HostResolution?
    public var verdict: Verdict?
}

/// Whether `needle` occurs in `haystack`, byte for byte (both already lowercased).
func containsBytes(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
    let n = needle.count
    guard n > 0 else { return true }
    guard haystack.count >= n else { return false }
    let first = needle[0]
    var index = 0
    let last = haystack.count - n
    while index <= last {
        if haystack[index] == first {
            var offset = 1
            while offset < n && haystack[index + offset] == needle[offset] { offset += 1 }
            if offset == n { return true }
        }
        index += 1
    }
    return false
}

/// A row of the events view: what the resolver did, or what the console wrote (an export),
/// so a file written an hour ago can still be found.
public struct ConsoleEvent: Sendable, Equatable {
    /// What happened: the resolver's kinds, and the console's own.
    public enum Kind: Sendable, Equatable {
        /// A lookup, refresh, expiry, fallback, error or flush of the resolver cache.
        case resolver(ResolverEvent.Kind)
        /// `e` wrote the traces (or the watch's rounds) to files.
        case export

        /// The word the EVENT column shows.
        public var name: String {
            switch self {
            case .resolver(let kind): kind.rawValue
            case .export: "export"
            }
        }
    }

    /// When it happened.
    public var time: Date
    public var kind: Kind
    /// The name it concerns; empty for an export of several.
    public var host: String
    /// The address family, when the event is about one.
    public var family: IPFamily?
    /// The whole line; the view wraps it rather than cutting it.
    public var detail: String

    /// An event the console records itself (an export).
    public init(time: Date, kind: Kind, host: String = "", family: IPFamily? = nil, detail: String) {
        self.time = time
        self.kind = kind
        self.host = host
        self.family = family
        self.detail = detail
    }

    /// The resolver's event as a row of the view.
    public init(_ event: ResolverEvent) {
        self.init(
            time: event.time, kind: .resolver(event.kind), host: event.host, family: event.family, detail: event.detail)
    }
}

/// A list's selected row and first visible row.
public struct ListCursor: Sendable, Equatable {
    public var selected = 0
    public var offset = 0
}

/// A bounded first-in-first-out store: appending past the capacity drops the oldest.
public struct RingBuffer<Element: Sendable>: Sendable {
    private var storage: [Element] = []
    private var head = 0
    public private(set) var capacity: Int

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        storage.reserveCapacity(min(self.capacity, 4096))
    }

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }

    /// The element `index` places from the oldest kept.
    public subscript(index: Int) -> Element {
        get { storage[(head + index) % storage.count] }
        set { storage[(head + index) % storage.count] = newValue }
    }

    /// Appends, dropping the oldest when full; returns the dropped element.
    @discardableResult
    public mutating func append(_ element: Element) -> Element? {
        if storage.count < capacity {
            storage.append(element)
            return nil
        }
        let dropped = storage[head]
        storage[head] = element
        head = (head + 1) % capacity
        return dropped
    }

    public mutating func removeAll() {
        storage.removeAll()
        head = 0
    }

    /// The elements, oldest first.
    public var elements: [Element] { (0..<count).map { self[$0] } }
}

/// Everything the console shows and remembers.
public struct ConsoleState: Sendable {
    public var view: ConsoleView = .probe
    public var size: TerminalSize
    public var now: Date
    /// Times are shown in this zone (tests fix it).
    public var timeZone: TimeZone
    public var glyphs: Glyphs
    /// The keys in force: the standard ones with the configuration's `[keys]` applied.
    public var keyMap = KeyMap.standard
    /// The colours the frame is drawn in (`theme`).
    public var theme = ConsoleTheme.dark
    public var engine: EngineDescription
    /// The service address that gave the latest HTTPDNS answer (an alicloud service IP under
    /// discovery), for the status bar.
    public var answeredBy: String?
    public var family: AddressFamily = .auto
    public var reuseExpired = false
    /// The lab's fault switch; nil without a lab.
    public var labFault: LabFault?
    /// The console starts with the keys obeyed, as k9s and lazygit do: `p` or `:` opens the host
    /// line, so `q`, `?` and every other key mean the same on the first screen as later.
    public var mode: InputMode = .command
    /// The mode to return to when a filter or confirmation ends.
    var modeBeforePrompt: InputMode = .command

    /// Each feature's own state (a list's cursor, the compare view's answers, the watch), under
    /// its feature's type: `features[CacheFeature.self]`, or the name its folder gives it.
    var features = FeatureStates()

    // The probes, which every view may start (`p`) and several show.
    /// The host line, kept when Esc leaves it (a second Esc clears it).
    public var inputLine = EditedLine()
    /// The text of the host line.
    public var input: String {
        get { inputLine.text }
        set { inputLine = EditedLine(newValue) }
    }
    /// The filter being typed (`/`); its text is the current view's entry in `filters`.
    public var filterLine = EditedLine()
    public var history: [String] = []
    var historyIndex: Int?
    public var runs: [ProbeRun] = []
    var nextRunID = 1
    public var maxRuns = 50

    /// The resolver cache as last loaded (the cache view lists it, the status bar counts it).
    public var cache: [CacheEntrySnapshot] = []

    // The traces every probe leaves, which `e` exports from any view.
    public var traces: RingBuffer<TraceRecord>
    /// How many of the newest traces keep headers, certificates and logs (`--max-trace-details`).
    public var maxTraceDetails: Int
    var nextTraceSequence = 0
    /// Resolution and verdict of each run that still has traces kept.
    public var runContexts: [Int: RunContext] = [:]

    /// What the resolver did and what the console wrote, newest last.
    public var events: RingBuffer<ConsoleEvent>

    /// The reproduce panel, over the current view while open (`c`).
    public var reproducePanel: ReproducePanel?
    /// Filters by view (`/`).
    public var filters: [ConsoleView: String] = [:]
    public var message = ""
    public var quitting = false
    /// Where `e` writes its files: `export_dir` from the configuration, or the working
    /// directory, as an absolute path so the status line and the events view can name it whole.
    public var exportDirectory = "."

    public init(
        size: TerminalSize, now: Date, engine: EngineDescription, glyphs: Glyphs = .unicode,
        timeZone: TimeZone = .current, maxTraces: Int = ConsoleOptions.defaultMaxTraces,
        maxTraceDetails: Int = ConsoleOptions.defaultMaxTraceDetails,
        maxEvents: Int = 5_000
    ) {
        self.size = size
        self.now = now
        self.engine = engine
        self.glyphs = glyphs
        self.timeZone = timeZone
        traces = RingBuffer(capacity: maxTraces)
        self.maxTraceDetails = max(1, maxTraceDetails)
        events = RingBuffer(capacity: maxEvents)
        labFault = engine.lab ? LabFault.none : nil
        family = engine.family
        reuseExpired = engine.reuseExpired
        message =
            engine.lab
            ? "Lab running. Press p, type a lab name\(engine.labExamples.first.map { " (\($0.typed))" } ?? ""), then Enter."
            : "Press p, type a host or URL, then Enter."
    }

    /// The probes not finished yet.
    public var inFlight: Int { runs.filter { !$0.finished }.count }

    /// The filter of the current view, empty when none.
    public var currentFilter: String { filters[view] ?? "" }
}

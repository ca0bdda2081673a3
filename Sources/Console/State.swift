// The console's one state value: everything the views draw, changed only by the reducer.
// Engine data arrives as copies (cache snapshots, attempts, events), never references.
import Foundation
import NameResolution
import Probe

/// The views, in the order of their number keys; those after `help` open on the selected
/// host by a letter key and are not tabs.
public enum ConsoleView: Int, Sendable, CaseIterable {
    case probe = 1, cache, traces, events, help
    case compare, doctor

    /// The views the tab bar lists and Tab cycles through, each with its number key.
    public static let tabs: [ConsoleView] = allCases.filter { $0.rawValue <= ConsoleView.help.rawValue }

    public var title: String {
        switch self {
        case .probe: "Probe"
        case .cache: "Cache"
        case .traces: "Traces"
        case .events: "Events"
        case .help: "Help"
        case .compare: "Compare"
        case .doctor: "Doctor"
        }
    }
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

/// The columns the cache view sorts by, in the order `s` cycles them.
public enum CacheSortColumn: String, Sendable, CaseIterable {
    case name, family, ips, ttl, source, state, hits, age
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

    // Probe view.
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
    public var probeCursor = ListCursor()
    var nextRunID = 1
    public var maxRuns = 50

    // Cache view.
    public var cache: [CacheEntrySnapshot] = []
    /// Indices into `cache` in display order (sorted, filtered).
    public var cacheOrder: [Int] = []
    public var cacheSort: CacheSortColumn = .name
    public var cacheSortDescending = false
    public var cacheCursor = ListCursor()

    // Traces view.
    public var traces: RingBuffer<TraceRecord>
    /// How many of the newest traces keep headers, certificates and logs (`--max-trace-details`).
    public var maxTraceDetails: Int
    var nextTraceSequence = 0
    /// Resolution and verdict of each run that still has traces kept.
    public var runContexts: [Int: RunContext] = [:]
    /// Sequences of the traces matching the filter, oldest first; nil when there is no filter.
    public var traceMatches: [Int]?
    /// The filter `traceMatches` was computed for.
    var traceFilterMatched = ""
    public var traceCursor = ListCursor()
    /// The sequence of the trace whose detail is open.
    public var detailSequence: Int?
    public var detailScroll = 0

    // Events view.
    public var events: RingBuffer<ConsoleEvent>
    public var eventCursor = ListCursor()

    public var helpScroll = 0
    /// The compare view (`v`): every provider's answer for one host.
    public var compare = CompareState()
    /// The doctor view (`D`): every check of the network, filled in as they finish.
    public var doctor = DoctorViewState()
    /// The reproduce panel, over the current view while open (`c`).
    public var reproducePanel: ReproducePanel?
    /// The IP view (`i`), over the probe view while open.
    public var ipView: IPViewState?
    /// The watch (`w`): rounds go on while it exists; its view is over the probe view when shown.
    public var watch: WatchState?
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

    /// The number of traces the traces view lists (after the filter).
    public var traceListCount: Int { traceMatches?.count ?? traces.count }

    /// The trace at `row` of the traces list (row 0 is the newest).
    public func traceAt(row: Int) -> TraceRecord? {
        let count = traceListCount
        guard row >= 0, row < count else { return nil }
        if let matches = traceMatches {
            return trace(sequence: matches[count - 1 - row])
        }
        return traces[traces.count - 1 - row]
    }

    /// The trace with a given sequence number, if still kept.
    public func trace(sequence: Int) -> TraceRecord? {
        guard !traces.isEmpty else { return nil }
        let oldest = traces[0].sequence
        let index = sequence - oldest
        guard index >= 0, index < traces.count else { return nil }
        return traces[index]
    }

    /// The traces the traces view lists, oldest first (what `e` exports).
    public var listedTraces: [TraceRecord] {
        if let matches = traceMatches { return matches.compactMap { trace(sequence: $0) } }
        return traces.elements
    }

    /// The filter of the current view, empty when none.
    public var currentFilter: String { filters[view] ?? "" }

    /// The cache entry selected in the cache view.
    public var selectedCacheEntry: CacheEntrySnapshot? {
        let row = cacheCursor.selected
        guard row >= 0, row < cacheOrder.count else { return nil }
        return cache[cacheOrder[row]]
    }

    /// The events listed (after the filter), newest first.
    public var listedEvents: [ConsoleEvent] {
        let filter = (filters[.events] ?? "").lowercased()
        var result: [ConsoleEvent] = []
        result.reserveCapacity(events.count)
        for index in stride(from: events.count - 1, through: 0, by: -1) {
            let event = events[index]
            if filter.isEmpty || "\(event.kind.name) \(event.host) \(event.detail)".lowercased().contains(filter) {
                result.append(event)
            }
        }
        return result
    }

    /// The probe runs listed (after the filter), newest first.
    public var listedRuns: [ProbeRun] {
        let filter = (filters[.probe] ?? "").lowercased()
        let newestFirst = runs.reversed()
        guard !filter.isEmpty else { return Array(newestFirst) }
        return newestFirst.filter { $0.target.lowercased().contains(filter) }
    }
}

// Batches of URLs at any size: a bounded number in flight, each report handed on as soon as
// all its attempts finish and then forgotten; names resolved once per batch (bounded memo).
import FoundationEssentials
import FoundationGaps
import NameResolution

/// The order a batch hands its reports on in.
public enum BatchOrder: Sendable, Equatable {
    /// As each URL finishes: the first results come first.
    case completion
    /// The order of the input. A finished URL waits for the ones before it, but never more
    /// than `window` URLs are started ahead of the oldest unfinished one.
    case input(window: Int)
}

/// One finished URL of a batch.
public struct BatchItem: Sendable {
    /// Its position in the input (from 0).
    public var index: Int
    /// The URL as given.
    public var url: String
    /// The report; nil when the URL could not be probed (it does not parse).
    public var report: URLReport?
}

/// A batch's stop switch: once pulled, no more URLs start; those in flight finish (each is
/// bounded by the request timeout) and are still handed on.
public final class BatchStop: Sendable {
    private let pulled = Locked(false)

    public init() {}

    /// Starts no more URLs.
    public func pull() { pulled.withLock { $0 = true } }

    /// Whether `pull()` was called.
    public var isPulled: Bool { pulled.withLock { $0 } }
}

extension ProbeEngine {
    /// Probes many URLs, handing each report on as soon as all its attempts finish.
    ///
    /// At most `inFlight` URLs are under way at once (their requests share the concurrency
    /// limit), so a batch of any size holds only those in memory: the sequence is read as
    /// URLs start, and a report is dropped once `onReport` returns.
    ///
    /// - Parameters:
    ///   - urls: the URLs, read lazily.
    ///   - order: completion order (default) or input order with a bounded reorder window.
    ///   - inFlight: URLs under way at once; default three times the request concurrency.
    ///   - stop: when pulled, no more URLs start.
    ///   - onWait: called in input order when starting the next URL must wait for a slow one
    ///     (the item not yet finished), once per such URL.
    ///   - onReport: receives every finished URL, one at a time.
    public func probeAll<URLs: Sequence<String>>(
        _ urls: URLs, order: BatchOrder = .completion, inFlight: Int? = nil, stop: BatchStop? = nil,
        onWait: (_ index: Int, _ url: String) async -> Void = { _, _ in },
        onReport: (BatchItem) async -> Void
    ) async {
        let memo = ResolutionMemo()
        let limit = max(1, inFlight ?? options.concurrency * 3)
        await withTaskGroup(of: BatchItem.self) { group in
            var source = urls.makeIterator()
            var started = 0
            var running = 0
            // Input order: finished items waiting for an earlier one, and what is under way.
            var held: [Int: BatchItem] = [:]
            var nextOut = 0
            var underWay: [Int: String] = [:]
            var waitedOn = -1

            func mayStart() -> Bool {
                guard running < limit, !(stop?.isPulled ?? false) else { return false }
                if case .input(let window) = order, started >= nextOut + max(1, window) { return false }
                return true
            }
            func startMore() {
                while mayStart(), let url = source.next() {
                    let index = started
                    started += 1
                    running += 1
                    if case .input = order { underWay[index] = url }
                    group.addTask {
                        BatchItem(index: index, url: url, report: await self.report(url, memo: memo, emit: { _ in }))
                    }
                }
            }

            startMore()
            while let item = await group.next() {
                running -= 1
                switch order {
                case .completion:
                    await onReport(item)
                case .input:
                    underWay[item.index] = nil
                    held[item.index] = item
                    while let ready = held.removeValue(forKey: nextOut) {
                        nextOut += 1
                        await onReport(ready)
                    }
                    // The window is full and its oldest URL is still under way: say so once.
                    if running < limit, !(stop?.isPulled ?? false), !mayStart(), nextOut != waitedOn,
                        let slow = underWay[nextOut]
                    {
                        waitedOn = nextOut
                        await onWait(nextOut, slow)
                    }
                }
                startMore()
            }
        }
    }

    /// Probes many URLs at once (requests share the concurrency limit).
    ///
    /// - Parameter urls: the URLs; unusable ones are left out of the result.
    /// - Returns: one report per usable URL, in the order given.
    public func probeAll(_ urls: [String]) async -> [URLReport] {
        var reports: [URLReport] = []
        await probeAll(urls, order: .input(window: max(1, urls.count)), inFlight: max(1, urls.count)) { item in
            if let report = item.report { reports.append(report) }
        }
        return reports
    }
}

/// The resolutions of one batch: each name is resolved once and concurrent askers share the
/// answer, so a batch of 600 URLs on five hosts does not ask DNS 600 times. At most
/// `capacity` names are kept; the least recently used goes first.
actor ResolutionMemo {
    private struct Entry {
        var answer: Task<HostResolution, Never>
        var newer: String?
        var older: String?
    }

    private let capacity: Int
    private var entries: [String: Entry] = [:]
    /// Most and least recently used names: the two ends of a list threaded through `entries`.
    private var newest: String?
    private var oldest: String?

    init(capacity: Int = 4096) { self.capacity = max(1, capacity) }

    /// How many names are kept.
    var count: Int { entries.count }

    func resolution(
        of host: String, using resolve: @escaping @Sendable (String) async -> HostResolution
    ) async
        -> HostResolution
    {
        if let known = entries[host] {
            unlink(host)
            link(host, known.answer)
            return await known.answer.value
        }
        let task = Task { await resolve(host) }
        link(host, task)
        if entries.count > capacity, let last = oldest { unlink(last) }
        return await task.value
    }

    /// Puts a name at the newest end.
    private func link(_ host: String, _ answer: Task<HostResolution, Never>) {
        entries[host] = Entry(answer: answer, newer: nil, older: newest)
        if let newest { entries[newest]?.newer = host }
        newest = host
        if oldest == nil { oldest = host }
    }

    /// Takes a name out.
    private func unlink(_ host: String) {
        guard let entry = entries.removeValue(forKey: host) else { return }
        if let newer = entry.newer { entries[newer]?.older = entry.older } else { newest = entry.older }
        if let older = entry.older { entries[older]?.newer = entry.newer } else { oldest = entry.newer }
    }
}

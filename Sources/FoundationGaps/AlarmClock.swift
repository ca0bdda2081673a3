// One thread that rings the deadlines `Deadline.first` sets, and forgets the ones cancelled: a
// dispatch timer per deadline woke libdispatch's manager thread for each `/probe` (issue 34).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Calls a closure when its time comes, unless cancelled first; all on one thread, started at
/// the first alarm set. Setting an alarm that is not the earliest, and cancelling one, wake
/// nothing: a cancelled alarm is dropped when the thread next looks at the earliest.
public final class AlarmClock: @unchecked Sendable {
    /// The clock `Deadline.first` sets its deadlines on.
    public static let shared = AlarmClock(named: "ipdirect.alarms")

    /// An alarm set, to cancel it by.
    public struct Alarm: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        var due: UInt64
        var id: UInt64
        func isBefore(_ other: Entry) -> Bool { (due, id) < (other.due, other.id) }
    }

    private let name: String
    private let condition = Condition()
    // Guarded by the condition's lock:
    /// Every alarm not yet rung, cancelled ones included until they reach the top (a binary heap).
    private var heap: [Entry] = []
    /// The alarms still to ring, by id.
    private var pending: [UInt64: @Sendable () -> Void] = [:]
    private var lastID: UInt64 = 0
    private var started = false

    /// - Parameter name: the thread's name (`top -H` shows the first 15 bytes).
    public init(named name: String) { self.name = name }

    /// Calls `ring` on the clock's thread once `delay` has passed, unless `cancel` comes first.
    /// `ring` should be quick: later alarms wait for it.
    public func set(after delay: Duration, _ ring: @escaping @Sendable () -> Void) -> Alarm {
        let due = Condition.now + Condition.nanoseconds(delay)
        condition.lock()
        defer { condition.unlock() }
        lastID += 1
        let entry = Entry(due: due, id: lastID)
        pending[entry.id] = ring
        push(entry)
        if !started {
            started = true
            detachThread(named: name) { self.serve() }
        } else if heap[0].id == entry.id {
            // Sooner than the thread's wait: wake it to wait for this one.
            condition.signal()
        }
        return Alarm(id: entry.id)
    }

    /// Forgets `alarm`; its closure is released now and not called. Nothing when it has rung.
    public func cancel(_ alarm: Alarm) {
        condition.lock()
        let ring = pending.removeValue(forKey: alarm.id)
        condition.unlock()
        // Released outside the lock: the closure may hold what ends with it.
        _ = ring
    }

    /// The thread: rings each alarm at its time, waits for the earliest still pending.
    private func serve() {
        condition.lock()
        while true {
            while let top = heap.first, pending[top.id] == nil { pop() }
            guard let top = heap.first else {
                condition.wait(until: nil)
                continue
            }
            if top.due > Condition.now {
                condition.wait(until: top.due)
                continue
            }
            pop()
            guard let ring = pending.removeValue(forKey: top.id) else { continue }
            condition.unlock()
            ring()
            condition.lock()
        }
    }

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].isBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < heap.count, heap[left].isBefore(heap[first]) { first = left }
            if right < heap.count, heap[right].isBefore(heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}

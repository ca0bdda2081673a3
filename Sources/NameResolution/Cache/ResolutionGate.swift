// At most so many lookups at once, the rest waiting their turn in order: bounds resolution in a
// batch (a thread per system lookup, a request per HTTPDNS query) so names cannot exhaust descriptors.
import FoundationEssentials
import FoundationGaps

/// A counting gate: `enter` waits (without blocking a thread) while `limit` holders are inside.
///
/// A resolver cache holds one per kind of work (what a batch or the console resolves through),
/// so two caches, as in tests side by side, do not wait on each other.
final class ResolutionGate: Sendable {
    /// System lookups at once (getaddrinfo or c-ares), each a thread and a socket or two.
    static let systemLookupLimit = 16
    /// HTTPDNS queries in flight at once, each a connection.
    static let httpdnsQueryLimit = 32

    private struct State {
        var inside = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
        var nextWaiter = 0
    }

    let limit: Int
    private let state = Locked(State())

    init(limit: Int) { self.limit = max(1, limit) }

    /// Waits for a place, then holds it until `leave`.
    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { s -> Bool in
                guard s.inside < limit else {
                    s.waiting.append(continuation)
                    return false
                }
                s.inside += 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// Gives the place up: to the longest waiter, when there is one.
    func leave() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard s.nextWaiter < s.waiting.count else {
                s.inside -= 1
                return nil
            }
            let waiter = s.waiting[s.nextWaiter]
            s.nextWaiter += 1
            // Drop the handed-out front now and then, so the list does not grow for ever.
            if s.nextWaiter >= 64 && s.nextWaiter * 2 >= s.waiting.count {
                s.waiting.removeFirst(s.nextWaiter)
                s.nextWaiter = 0
            }
            return waiter
        }
        next?.resume()
    }

    /// How many hold a place now (for tests and the bench).
    var occupied: Int { state.withLock { $0.inside } }
}

// Test doubles at the resolver's seams: a clock moved by hand, so TTL expiry is tested
// without sleeping, and a provider that answers from a script.
import FoundationEssentials
import FoundationGaps
import NameResolution

/// A clock that stands still until `advance` moves it.
public final class ManualClock: ResolverClock, @unchecked Sendable {
    private let current: Locked<Date>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Locked(start) }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(_ seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// A provider answering from a table, counting the requests it received.
public final class ScriptedProvider: HTTPDNSProvider, @unchecked Sendable {
    /// The answers by name, and the names asked for in order.
    private let state: Locked<(script: [String: Result<ProviderAnswer, ResolutionError>], asked: [String])>
    /// Seconds each answer takes, to show coalescing.
    public let delay: Double

    public var name: String { "scripted" }

    public init(_ script: [String: Result<ProviderAnswer, ResolutionError>] = [:], delay: Double = 0) {
        state = Locked((script, []))
        self.delay = delay
    }

    /// Replaces the answer for a name.
    public func set(_ host: String, _ result: Result<ProviderAnswer, ResolutionError>) {
        state.withLock { $0.script[host] = result }
    }

    /// The names asked for so far, in order.
    public var requests: [String] {
        state.withLock { $0.asked }
    }

    public func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        let result = state.withLock { state in
            state.asked.append(host)
            return state.script[host]
        }
        if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
        switch result {
        case .success(let answer)?:
            var filtered = answer
            filtered.answered = answer.answered.intersection(families)
            return filtered
        case .failure(let error)?: throw error
        case nil: throw .noSuchName(host: host, families: families)
        }
    }
}

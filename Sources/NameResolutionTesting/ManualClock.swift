// Test doubles at the resolver's seams: a clock moved by hand, so TTL expiry is tested
// without sleeping, and a provider that answers from a script.
import Foundation
import NameResolution

/// A clock that stands still until `advance` moves it.
public final class ManualClock: ResolverClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    public func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Moves the clock forward by `seconds`.
    public func advance(_ seconds: TimeInterval) {
        lock.lock()
        current = current.addingTimeInterval(seconds)
        lock.unlock()
    }
}

/// A provider answering from a table, counting the requests it received.
public final class ScriptedProvider: HTTPDNSProvider, @unchecked Sendable {
    private let lock = NSLock()
    private var script: [String: Result<ProviderAnswer, ResolutionError>]
    private var asked: [String] = []
    /// Seconds each answer takes, to show coalescing.
    public let delay: Double

    public var name: String { "scripted" }

    public init(_ script: [String: Result<ProviderAnswer, ResolutionError>] = [:], delay: Double = 0) {
        self.script = script
        self.delay = delay
    }

    /// Replaces the answer for a name.
    public func set(_ host: String, _ result: Result<ProviderAnswer, ResolutionError>) {
        lock.lock()
        script[host] = result
        lock.unlock()
    }

    /// The names asked for so far, in order.
    public var requests: [String] {
        lock.lock()
        defer { lock.unlock() }
        return asked
    }

    public func resolve(_ host: String, families: Set<IPFamily>) async throws(ResolutionError) -> ProviderAnswer {
        let result: Result<ProviderAnswer, ResolutionError>? = {
            lock.lock()
            defer { lock.unlock() }
            asked.append(host)
            return script[host]
        }()
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

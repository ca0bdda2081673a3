// What each running check is waiting for (the system resolver, a service address, the provider),
// so a check still running at the run's bound is reported with the prerequisite it waited on.

import FoundationEssentials
import FoundationGaps
import NameResolution

/// The waits one check has open, recorded as it starts and ends them; the runner gives each check
/// its own, through a task-local value its child tasks inherit.
public final class DoctorWaits: Sendable {
    /// One open wait: what for, since when, and the check whose finding says why it can hang.
    public struct Wait: Sendable {
        var what: String
        var owner: DoctorCheckID
        var since: ContinuousClock.Instant
    }

    /// The running check's waits; nil outside a run (a check called on its own records nothing).
    @TaskLocal static var current: DoctorWaits?

    private let open = Locked<[UUID: Wait]>([:])

    public init() {}

    /// Runs `body`, recorded as waiting for `what` (owned by `owner`'s finding) until it returns.
    public static func on<T: Sendable>(
        _ what: String, owner: DoctorCheckID, _ body: () async -> T
    ) async -> T {
        guard let waits = current else { return await body() }
        let token = UUID()
        waits.open.withLock { $0[token] = Wait(what: what, owner: owner, since: .now) }
        defer { _ = waits.open.withLock { $0.removeValue(forKey: token) } }
        return await body()
    }

    /// The longest of the waits still open, if any.
    var oldest: Wait? { open.withLock { $0.values.min { $0.since < $1.since } } }
}

extension DoctorContext {
    /// The system resolver (the lab's DNS server with the lab) asked for `host` within one
    /// step's wait, recorded as the wait the DNS paths check answers for.
    func systemResolve(_ host: String, families: Set<IPFamily>) async -> SystemAnswer {
        await DoctorWaits.on("the system resolver (asked for \(host))", owner: .dnsPaths) {
            await SystemResolver(dnsServer: labResolver).resolve(host, families: families, timeout: stepTimeout)
        }
    }
}

extension DoctorCheckID {
    /// The title inside a sentence: "DNS paths", "service reachability".
    var inSentence: String {
        let first = title.prefix { $0 != " " }
        return first.allSatisfy(\.isUppercase) ? title : title.prefix(1).lowercased() + title.dropFirst()
    }
}

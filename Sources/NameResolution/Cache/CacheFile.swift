// The persistent resolver cache: one JSON file in the XDG cache folder, answers filed under the
// provider that gave them, written atomically. What cannot be read is kept, never thrown away.
import FoundationEssentials
import FoundationGaps

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading and writing `cache.json`.
///
/// Version 2 files each provider's answers under its identity
/// (`ResolverConfiguration.cacheIdentity`): a cache reads only its own provider's, and
/// writes its own back beside the others', which it copies as they were. Version 1 files named
/// no provider: their answers belong to nobody and are ignored (not an error).
///
/// Nothing the file holds is lost for being unreadable. An answer that does not parse is skipped
/// and written back as it was, because it may be another ipdirect's (a newer one's) or a hand
/// edit the user wants back; a `.bad` copy beside the file would take it from where that reader
/// looks, and would have to be merged back by hand. A file from a newer ipdirect is left alone.
/// Only a file that is not a cache file at all (not JSON, no version) is set aside as
/// `cache.json.bad` when the cache is next saved, since nothing in it can be kept in place.
enum CacheFile {
    static let version = 2

    /// One stored answer: its JSON, written back as it was, and the answer when it reads as one.
    struct Stored {
        var json: JSONValue
        var answer: Result<CacheEntrySnapshot, Unreadable>
    }

    /// Why a stored answer is skipped: a reason in our own words (field names are ours).
    struct Unreadable: Error, Equatable {
        var reason: String
    }

    /// One provider's part of the file: its JSON as it was, and the answers read from it.
    struct Filed {
        var json: JSONValue
        var answers: [Stored]
    }

    /// A version-2 file as read.
    struct Contents {
        /// Top-level fields other than `version`, `savedAt` and `providers`, kept as they were.
        var otherFields: [String: JSONValue] = [:]
        /// Identity → that provider's part.
        var providers: [String: Filed] = [:]
    }

    /// What is at the cache's path.
    enum Reading {
        case absent
        /// Version 1: answers that belong to nobody.
        case belongsToNobody
        case current(Contents)
        /// Written by a newer ipdirect: neither used nor written.
        case newer(version: Int)
        /// Cannot be read (not a regular file, permissions, too large): left alone, not written.
        case unusable(reason: String)
        /// Read, but not a cache file: set aside as `.bad` on the next save.
        case corrupt(reason: String)
    }

    /// Reads what is at `path`, refusing anything but a regular file before a byte is read.
    static func read(_ path: String) -> Reading {
        guard FileManager.default.fileExists(atPath: path) else { return .absent }
        let bytes: [UInt8]
        do {
            bytes = try TextFile.bytes(of: path, accepting: .regularFile)
        } catch {
            return .unusable(reason: error.reason)
        }
        guard let top = JSONValue(parsing: bytes)?.object else {
            return .corrupt(reason: "it is not a JSON object")
        }
        guard case .number(let number)? = top["version"], let version = number.int64 else {
            return .corrupt(reason: "it has no version number")
        }
        if version == 1 { return .belongsToNobody }
        if version > Self.version { return .newer(version: Int(clamping: version)) }
        guard version == Self.version else { return .corrupt(reason: "version \(version) is not one ipdirect writes") }
        guard case .object(let providers)? = top["providers"] else {
            return .corrupt(reason: "it has no providers object")
        }
        var contents = Contents()
        contents.otherFields = top.filter { !["version", "savedAt", "providers"].contains($0.key) }
        for (identity, json) in providers {
            let answers: [Stored]
            if case .array(let items) = json {
                answers = items.map { Stored(json: $0, answer: answer(from: $0)) }
            } else {
                answers = [Stored(json: json, answer: .failure(Unreadable(reason: "it is not a list of answers")))]
            }
            contents.providers[identity] = Filed(json: json, answers: answers)
        }
        return .current(contents)
    }

    /// One stored answer, read and screened: every address must be an IP literal of its family,
    /// and every number in range (`outOfRange`), so no time computed from it can trap.
    static func answer(from json: JSONValue) -> Result<CacheEntrySnapshot, Unreadable> {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let entry: CacheEntrySnapshot
        do {
            let bytes = try JSONEncoder().encode(json)
            // The addresses are screened as text first, so a junk one is named as such rather
            // than as the decoding failure `IPAddress` would throw.
            let addresses = try decoder.decode(StoredAddresses.self, from: bytes)
            guard IPLiteral.screen(addresses.ips, family: addresses.family).rejected.isEmpty else {
                return .failure(
                    Unreadable(reason: "ips holds something that is not an \(addresses.family.rawValue) address"))
            }
            entry = try decoder.decode(CacheEntrySnapshot.self, from: bytes)
        } catch {
            return .failure(Unreadable(reason: describe(error)))
        }
        guard !entry.host.isEmpty else { return .failure(Unreadable(reason: "host is empty")) }
        if let outOfRange = outOfRange(entry) { return .failure(Unreadable(reason: outOfRange)) }
        return .success(entry)
    }

    /// The widest TTL a stored answer may hold: DNS's own (RFC 2181, 2^31 - 1 seconds). Loading
    /// clamps it to `ResolverConfiguration.ttlBounds`; past this it is not a TTL at all.
    static let storedTTLs: ClosedRange<Int> = 0...2_147_483_647

    /// When a stored answer may have been obtained: 1970-01-01 to 9999-12-31 (what `cache list`
    /// can print). A number past that is not a time; adding a TTL to it, or counting the seconds
    /// left, would be arithmetic on nonsense that traps when it overflows.
    static let storedTimes: ClosedRange<TimeInterval> = 0...253_402_300_799

    /// Why a decoded answer's numbers cannot be used, in our words; nil when every one is in range.
    static func outOfRange(_ entry: CacheEntrySnapshot) -> String? {
        let ttlRange = "between \(storedTTLs.lowerBound) and \(storedTTLs.upperBound) seconds"
        if !storedTTLs.contains(entry.ttl) { return "ttl is not \(ttlRange)" }
        if let origin = entry.originTTL, !storedTTLs.contains(origin) { return "originTTL is not \(ttlRange)" }
        if !storedTimes.contains(entry.resolvedAt.timeIntervalSince1970) {
            return "resolvedAt is not a time between the years 1970 and 9999"
        }
        if entry.hits < 0 { return "hits is below 0" }
        return nil
    }

    /// The family and the addresses of a stored answer, as the file has them.
    private struct StoredAddresses: Decodable {
        var family: IPFamily
        var ips: [String]
    }

    /// A decoding failure in our words; only our own field names appear, never the file's text.
    static func describe(_ error: any Error) -> String {
        func field(_ context: DecodingError.Context) -> String {
            let names = context.codingPath.filter { $0.intValue == nil }.map(\.stringValue)
            return names.isEmpty ? "the entry" : names.joined(separator: ".")
        }
        func kind(_ type: Any.Type) -> String {
            if type == String.self { return "text" }
            if type == Bool.self { return "true or false" }
            if type == Int.self || type == Double.self || type == Date.self { return "a number" }
            if type is [Any].Type { return "a list" }
            return "an object"
        }
        switch error as? DecodingError {
        case .typeMismatch(let type, let context)?: return "\(field(context)) is not \(kind(type))"
        case .valueNotFound(_, let context)?: return "\(field(context)) is null"
        case .keyNotFound(let key, _)?: return "\(key.stringValue) is missing"
        case .dataCorrupted(let context)?: return "\(field(context)) holds a value ipdirect does not know"
        default: return "it cannot be read"
        }
    }

    /// Loads the entries `identity` gave, re-screening every address (the file is outside our control).
    ///
    /// - Parameters:
    ///   - identity: the provider asking (`ResolverConfiguration.cacheIdentity`); other providers'
    ///     answers are never returned.
    ///   - keepExpired: keep entries past their TTL (expired-IP reuse is on).
    /// - Returns: the usable entries, marked `.persisted`, and a sentence when the file, or some of
    ///   this provider's answers in it, could not be used. A missing or version-1 file is an empty
    ///   cache without a warning.
    static func load(
        _ path: String, identity: String, now: Date, keepExpired: Bool
    ) -> (entries: [CacheEntrySnapshot], warning: String?) {
        let contents: Contents
        switch read(path) {
        case .absent, .belongsToNobody: return ([], nil)
        case .current(let read): contents = read
        case .newer(let version): return ([], newerSentence(path, version: version))
        case .unusable(let reason):
            return ([], "cannot read the cache file \(path): \(reason); the cache starts empty and is not saved")
        case .corrupt(let reason):
            return (
                [],
                "the cache file \(path) is corrupt (\(reason)); the cache starts empty, and the file "
                    + "is set aside as \(path).bad when the cache is saved"
            )
        }
        var entries: [CacheEntrySnapshot] = []
        var skipped: [Unreadable] = []
        for stored in contents.providers[identity]?.answers ?? [] {
            guard case .success(var entry) = stored.answer else {
                if case .failure(let unreadable) = stored.answer { skipped.append(unreadable) }
                continue
            }
            guard keepExpired || entry.expiresAt > now else { continue }
            entry.ttl = ProviderAnswer.clampTTL(entry.ttl)
            entry.source = .persisted
            entry.hits = 0
            entry.refreshing = false
            entries.append(entry)
        }
        let warning = skipped.first.map { first in
            "skipped \(skipped.count) of this provider's answers in the cache file \(path) that cannot be read "
                + "(\(first.reason)); they stay in the file as they were"
        }
        return (entries, warning)
    }

    /// Writes `identity`'s entries, keeping the other providers' parts, and this provider's
    /// unreadable answers, as the file has them, through `PrivateFile` (mode 0600, fsynced,
    /// renamed over `path`), so a reader never sees half a file. A file from a newer ipdirect, or
    /// one that cannot be read, is not written (the load said so); one that is not a cache file is
    /// first renamed to `path.bad`.
    static func save(
        _ entries: [CacheEntrySnapshot], identity: String, to path: String, now: Date
    ) throws(ConfigurationError) {
        var contents = Contents()
        switch read(path) {
        case .absent, .belongsToNobody: break
        case .current(let read): contents = read
        case .newer, .unusable: return
        case .corrupt: try setAside(path)
        }
        let sorted = entries.sorted { ($0.host, $0.family.rawValue) < ($1.host, $1.family.rawValue) }
        let kept = (contents.providers[identity]?.answers ?? []).filter { (try? $0.answer.get()) == nil }.map(\.json)
        let answers = sorted.compactMap(json(encoding:)) + kept
        contents.providers[identity] = answers.isEmpty ? nil : Filed(json: .array(answers), answers: [])
        try write(contents, to: path, now: now)
    }

    /// The JSON `entry` encodes to (how a fresh answer joins kept ones); nil if it cannot be encoded.
    static func json(encoding entry: CacheEntrySnapshot) -> JSONValue? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        guard let data = try? encoder.encode(entry) else { return nil }
        return JSONValue(parsing: data)
    }

    /// Renames a file that is not a cache file to `path.bad` (replacing an older one).
    static func setAside(_ path: String) throws(ConfigurationError) {
        guard rename(path, path + ".bad") == 0 else {
            let reason = SystemReason.words(errno)
            throw .io("cannot set the unreadable cache file \(path) aside as \(path).bad: \(reason)")
        }
    }

    /// Writes `contents` whole, sorted and indented, as version 2.
    static func write(_ contents: Contents, to path: String, now: Date) throws(ConfigurationError) {
        var top = contents.otherFields
        top["version"] = .number(JSONNumber(version))
        top["savedAt"] = .number(JSONNumber(now.timeIntervalSince1970))
        top["providers"] = .object(contents.providers.mapValues(\.json))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data: Data
        do {
            data = try encoder.encode(top)
            // A bare name (`cache_path = "cache.json"`) is in the working directory: no folder to make.
            let directory = path.deletingLastPathComponent
            if !directory.isEmpty {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
        } catch {
            throw .io("cannot write the cache file \(path): \(SystemReason.words(for: error))")
        }
        // 0600, fsynced, renamed into place: the file says which services this user asked about.
        try PrivateFile.write(data, to: path)
    }

    static func newerSentence(_ path: String, version: Int) -> String {
        "the cache file \(path) was written by a newer ipdirect (version \(version); this one reads version "
            + "\(Self.version)): its answers are not used, and it is left as it is, not written"
    }
}

/// The persistent cache file as `ipdirect cache` sees it: every provider's answers, each
/// with the identity of the provider that gave it.
public enum PersistentCache {
    /// One stored answer and the provider it belongs to.
    public struct Entry: Sendable, Codable, Equatable {
        /// `ResolverConfiguration.cacheIdentity` of the provider that gave the answer.
        public var provider: String
        public var entry: CacheEntrySnapshot
    }

    /// A stored answer that cannot be read: skipped, and kept in the file as it was.
    public struct Skipped: Sendable, Equatable {
        /// The identity it is filed under, as the file spells it (outside text: escape it to show it).
        public var provider: String
        /// Its place among that provider's answers, from 1.
        public var position: Int
        /// Why, in our words: "ttl is not a number".
        public var reason: String

        public init(provider: String, position: Int, reason: String) {
            self.provider = provider
            self.position = position
            self.reason = reason
        }
    }

    /// What the file holds, as `cache list` shows it.
    public struct Listing: Sendable {
        /// The answers that read, expired ones included: by provider, then in file order (ipdirect
        /// writes each provider's sorted by name and family).
        public var entries: [Entry] = []
        /// The answers that did not, in file order per provider.
        public var skipped: [Skipped] = []
        /// A sentence when the file as a whole cannot be used.
        public var warning: String?
    }

    /// Every stored answer, expired ones included, and those that cannot be read.
    public static func entries(at path: String) -> Listing {
        var listing = Listing()
        switch CacheFile.read(path) {
        case .absent, .belongsToNobody: break
        case .newer(let version): listing.warning = CacheFile.newerSentence(path, version: version)
        case .unusable(let reason): listing.warning = "cannot read the cache file \(path): \(reason)"
        case .corrupt(let reason):
            listing.warning =
                "the cache file \(path) is corrupt (\(reason)); it is set aside as \(path).bad "
                + "when the cache is next saved"
        case .current(let contents):
            for identity in contents.providers.keys.sorted() {
                for (index, stored) in (contents.providers[identity]?.answers ?? []).enumerated() {
                    switch stored.answer {
                    case .success(let entry): listing.entries.append(Entry(provider: identity, entry: entry))
                    case .failure(let unreadable):
                        listing.skipped.append(
                            Skipped(provider: identity, position: index + 1, reason: unreadable.reason))
                    }
                }
            }
        }
        return listing
    }

    /// Removes one name (both families) or everything, from every provider's answers, in one
    /// write. Emptying everything takes the unreadable answers too; one name leaves them.
    ///
    /// - Returns: how many entries went.
    /// - Throws: `ConfigurationError.io` when the file cannot be written, or is one this
    ///   ipdirect leaves alone (a newer version's, one it cannot read).
    @discardableResult
    public static func remove(host: String?, at path: String, now: Date = Date()) throws(ConfigurationError) -> Int {
        var contents: CacheFile.Contents
        switch CacheFile.read(path) {
        case .absent, .belongsToNobody: return 0
        case .current(let read): contents = read
        case .newer(let version):
            throw .io(
                "the cache file \(path) was written by a newer ipdirect (version \(version)); it is left as it is: "
                    + "clear it with that version, or delete it")
        case .unusable(let reason): throw .io("cannot read the cache file \(path): \(reason)")
        case .corrupt(let reason):
            throw .io(
                "the cache file \(path) is corrupt (\(reason)); nothing was removed: delete it to "
                    + "start afresh")
        }
        var removed = 0
        let name = host.map(ResolverCache.normalized)
        for (identity, filed) in contents.providers {
            let kept = filed.answers.filter { stored in
                guard let name else { return false }
                return (try? stored.answer.get())?.host != name
            }
            guard kept.count != filed.answers.count else { continue }
            removed += filed.answers.count - kept.count
            contents.providers[identity] =
                kept.isEmpty ? nil : CacheFile.Filed(json: .array(kept.map(\.json)), answers: kept)
        }
        if removed > 0 { try CacheFile.write(contents, to: path, now: now) }
        return removed
    }
}

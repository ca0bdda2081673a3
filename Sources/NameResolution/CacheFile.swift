// The persistent resolver cache: one JSON file in the XDG cache folder, answers filed under
// the provider that gave them, written atomically, read at start. A damaged file costs the cache.
import Foundation

/// Reading and writing `cache.json`.
///
/// Version 2 files each provider's answers under its identity
/// (`ResolverConfiguration.cacheIdentity`): a cache reads only its own provider's, and
/// writes its own back beside the others'. Version 1 files named no provider: their
/// answers belong to nobody and are ignored (not an error).
enum CacheFile {
    struct Contents: Codable {
        var version: Int
        var savedAt: Date
        /// Identity → that provider's answers.
        var providers: [String: [CacheEntrySnapshot]]
    }

    /// Just the version, read first so an old file is told apart from a corrupt one.
    struct Header: Codable {
        var version: Int
    }

    static let version = 2

    /// Why the file could not be used; the cache starts empty.
    struct Warning: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the whole file: nil contents for a missing file or one from before identities.
    static func read(_ path: String) -> Result<Contents?, Warning> {
        guard FileManager.default.fileExists(atPath: path) else { return .success(nil) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let data: Data
        let header: Header
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
            header = try decoder.decode(Header.self, from: data)
        } catch {
            return .failure(
                Warning(description: "the cache file \(path) is unreadable or corrupt; starting with an empty cache"))
        }
        // Version 1 named no provider: its answers belong to nobody.
        if header.version == 1 { return .success(nil) }
        guard header.version == version else {
            return .failure(
                Warning(
                    description:
                        "the cache file \(path) has version \(header.version), not \(version); starting with an empty cache"
                ))
        }
        do {
            return .success(try decoder.decode(Contents.self, from: data))
        } catch {
            return .failure(
                Warning(description: "the cache file \(path) is unreadable or corrupt; starting with an empty cache"))
        }
    }

    /// Loads the entries `identity` gave, re-screening every address (the file is outside our control).
    ///
    /// - Parameters:
    ///   - identity: the provider asking (`ResolverConfiguration.cacheIdentity`); other providers'
    ///     answers are never returned.
    ///   - keepExpired: keep entries past their TTL (expired-IP reuse is on).
    /// - Returns: the usable entries, marked `.persisted`; a missing or version-1 file is an empty cache.
    static func load(
        _ path: String, identity: String, now: Date, keepExpired: Bool
    ) -> Result<[CacheEntrySnapshot], Warning> {
        let contents: Contents?
        switch read(path) {
        case .success(let read): contents = read
        case .failure(let warning): return .failure(warning)
        }
        var entries: [CacheEntrySnapshot] = []
        for var entry in contents?.providers[identity] ?? [] {
            let screened = IPLiteral.screen(entry.ips, family: entry.family)
            guard screened.rejected.isEmpty, !entry.host.isEmpty else { continue }
            guard keepExpired || entry.expiresAt > now else { continue }
            entry.ttl = ProviderAnswer.clampTTL(entry.ttl)
            entry.source = .persisted
            entry.hits = 0
            entry.refreshing = false
            entries.append(entry)
        }
        return .success(entries)
    }

    /// Writes `identity`'s entries, keeping the other providers' as the file has them, through
    /// `PrivateFile` (mode 0600, fsynced, renamed over `path`), so a reader never sees half a file.
    static func save(
        _ entries: [CacheEntrySnapshot], identity: String, to path: String, now: Date
    ) throws(ConfigurationError) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let sorted = entries.sorted { ($0.host, $0.family.rawValue) < ($1.host, $1.family.rawValue) }
        var providers = ((try? read(path).get()) ?? nil)?.providers ?? [:]
        providers[identity] = sorted.isEmpty ? nil : sorted
        let directory = (path as NSString).deletingLastPathComponent
        let data: Data
        do {
            data = try encoder.encode(Contents(version: version, savedAt: now, providers: providers))
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .io("cannot write the cache file \(path): \(error.localizedDescription)")
        }
        // 0600, fsynced, renamed into place: the file says which services this user asked about.
        try PrivateFile.write(data, to: path)
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

    /// Every stored answer, expired ones included, sorted by provider, name and family.
    ///
    /// - Returns: the entries, and a warning sentence when the file could not be used.
    public static func entries(at path: String) -> (entries: [Entry], warning: String?) {
        switch CacheFile.read(path) {
        case .failure(let warning):
            return ([], warning.description)
        case .success(let contents):
            var all: [Entry] = []
            let providers = contents?.providers ?? [:]
            for identity in providers.keys.sorted() {
                for entry in providers[identity] ?? [] {
                    guard IPLiteral.screen(entry.ips, family: entry.family).rejected.isEmpty else { continue }
                    all.append(Entry(provider: identity, entry: entry))
                }
            }
            return (all, nil)
        }
    }

    /// Removes one name (both families) or everything, from every provider's answers.
    ///
    /// - Returns: how many entries went.
    /// - Throws: `ConfigurationError.io` when the file cannot be written.
    @discardableResult
    public static func remove(host: String?, at path: String, now: Date = Date()) throws(ConfigurationError) -> Int {
        guard case .success(let contents?) = CacheFile.read(path) else { return 0 }
        var removed = 0
        let name = host.map(ResolverCache.normalized)
        for (identity, entries) in contents.providers {
            let kept = entries.filter { entry in name.map { entry.host != $0 } ?? false }
            removed += entries.count - kept.count
            try CacheFile.save(kept, identity: identity, to: path, now: now)
        }
        return removed
    }
}

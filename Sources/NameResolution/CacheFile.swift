// The persistent resolver cache: one JSON file in the XDG cache folder, written atomically,
// read at start. A damaged file costs the cache, never the program.
import Foundation

/// Reading and writing `cache.json`.
enum CacheFile {
    struct Contents: Codable {
        var version: Int
        var savedAt: Date
        var entries: [CacheEntrySnapshot]
    }

    static let version = 1

    /// Why the file could not be used; the cache starts empty.
    struct Warning: Error, CustomStringConvertible {
        var description: String
    }

    /// Loads entries, re-screening every address (the file is outside our control).
    ///
    /// - Parameters:
    ///   - keepExpired: keep entries past their TTL (expired-IP reuse is on).
    /// - Returns: the usable entries, marked `.persisted`; a missing file is an empty cache.
    static func load(_ path: String, now: Date, keepExpired: Bool) -> Result<[CacheEntrySnapshot], Warning> {
        guard FileManager.default.fileExists(atPath: path) else { return .success([]) }
        let contents: Contents
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            contents = try decoder.decode(Contents.self, from: data)
        } catch {
            return .failure(
                Warning(description: "the cache file \(path) is unreadable or corrupt; starting with an empty cache"))
        }
        guard contents.version == version else {
            return .failure(
                Warning(
                    description:
                        "the cache file \(path) has version \(contents.version), not \(version); starting with an empty cache"
                ))
        }
        var entries: [CacheEntrySnapshot] = []
        for var entry in contents.entries {
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

    /// Writes entries to a temporary file beside `path`, then renames it over `path`, so a
    /// reader never sees half a file.
    static func save(_ entries: [CacheEntrySnapshot], to path: String, now: Date) throws(ConfigurationError) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let sorted = entries.sorted { ($0.host, $0.family.rawValue) < ($1.host, $1.family.rawValue) }
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = directory + "/.cache.json.\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        do {
            let data = try encoder.encode(Contents(version: version, savedAt: now, entries: sorted))
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: temporary, contents: data) else {
                throw CocoaError(.fileWriteUnknown)
            }
            guard rename(temporary, path) == 0 else {
                let reason = strerror(errno).flatMap { String(validatingCString: $0) } ?? "errno \(errno)"
                unlink(temporary)
                throw ConfigurationError.io("cannot replace \(path): \(reason)")
            }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            unlink(temporary)
            throw .io("cannot write the cache file \(path): \(error.localizedDescription)")
        }
    }
}

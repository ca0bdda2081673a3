// The lab's zone, read from Resources/lab-zone.json embedded in the binary.
// The HTTPDNS service answers from it; the origins are named by its `origin` fields.
import BundledResources
import Foundation

/// The names the lab's HTTPDNS service knows.
struct LabZone: Sendable {
    var records: [LabZoneRecord]

    private struct File: Decodable {
        var names: [LabZoneRecord]
    }

    /// The zone shipped with ipdirect.
    static func bundled() throws -> LabZone {
        do {
            let file = try JSONDecoder().decode(File.self, from: Data(BundledResources.labZoneJSON.utf8))
            return LabZone(records: file.names)
        } catch {
            throw LabError("the bundled lab zone (lab-zone.json) is not valid: \(error)")
        }
    }

    /// The record for a name, matched case-insensitively and without a trailing dot.
    func record(for name: String) -> LabZoneRecord? {
        var key = name.lowercased()
        if key.hasSuffix(".") { key.removeLast() }
        return records.first { $0.name == key }
    }
}

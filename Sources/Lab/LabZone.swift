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
    ///
    /// - Throws: `LabError` when the file does not decode or a name's origin is no lab server.
    static func bundled() throws -> LabZone {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(BundledResources.labZoneJSON.utf8))
        } catch {
            throw LabError("the bundled lab zone (lab-zone.json) is not valid: \(error)")
        }
        for record in file.names {
            if let origin = record.origin, LabRole(rawValue: origin) == nil {
                let roles = LabRole.allCases.map(\.rawValue).joined(separator: ", ")
                throw LabError(
                    "the bundled lab zone (lab-zone.json) sends \(record.name) to an origin the lab does not have: \(origin) (it has \(roles))"
                )
            }
        }
        return LabZone(records: file.names)
    }

    /// The record for a name, matched case-insensitively and without a trailing dot.
    func record(for name: String) -> LabZoneRecord? {
        var key = name.lowercased()
        if key.hasSuffix(".") { key.removeLast() }
        return records.first { $0.name == key }
    }
}

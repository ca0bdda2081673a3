// The lab's zone, read from Resources/lab-zone.json embedded in the binary.
// The HTTPDNS service answers from it; the origins are named by its `origin` fields.
import BundledResources
import FoundationEssentials
import LabFaults

/// The names the lab's HTTPDNS service knows.
struct LabZone: Sendable {
    var records: [LabZoneRecord]
    /// The names worth trying first, in the order they are suggested.
    var examples: [LabNameExample]

    private struct File: Decodable {
        var examples: [LabNameExample]
        var names: [LabZoneRecord]
    }

    /// The zone shipped with ipdirect.
    ///
    /// - Throws: `LabError` when the file does not decode, a name's origin is no lab server or an
    ///   example is not one of its names.
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
        for example in file.examples {
            // A name, or a URL of one: scheme, port and path aside, the host must be the zone's.
            let afterScheme = example.typed.split(separator: "://", maxSplits: 1).last ?? ""
            let host = afterScheme.prefix { $0 != "/" && $0 != ":" }
            guard file.names.contains(where: { $0.name == host }) else {
                throw LabError(
                    "the bundled lab zone (lab-zone.json) suggests \(example.typed), a name it does not have")
            }
        }
        return LabZone(records: file.names, examples: file.examples)
    }

    /// The record for a name, matched case-insensitively and without a trailing dot.
    func record(for name: String) -> LabZoneRecord? {
        var key = name.lowercased()
        if key.hasSuffix(".") { key.removeLast() }
        return records.first { $0.name == key }
    }
}

extension Lab {
    /// The names the lab suggests trying first, from its bundled zone, in its order: the one
    /// place they come from (the console's first screen shows them as they are).
    ///
    /// - Throws: `LabError` when the bundled zone does not decode.
    public static func examples() throws -> [LabNameExample] { try LabZone.bundled().examples }
}

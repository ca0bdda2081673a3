// A lab name worth trying first, as one type: the lab reads them from its zone (lab-zone.json),
// the console shows them before the first probe; here so neither converts the other's copy.

/// A lab name to try, as a person types it, and what probing it shows.
public struct LabNameExample: Sendable, Equatable, Decodable {
    /// The name, or a URL where the scheme matters (`http://plain.lab.test/`).
    public var typed: String
    /// What probing it shows, in a few words.
    public var shows: String

    public init(typed: String, shows: String) {
        self.typed = typed
        self.shows = shows
    }
}

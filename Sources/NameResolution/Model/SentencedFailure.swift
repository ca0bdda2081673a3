// What a failure kept as a value shares with every other: it is written, compared and read back
// as its one sentence, so a typed failure and the text a document held are the same failure.

/// A failure kept as a value (`ResolutionFailure`, Probe's `AttemptFailure`) whose sentence is its
/// written form: equal when the sentences are, `Codable` as the sentence (read back as
/// `reported`), and given in the source as a string literal (a front end's placeholder, a test's).
public protocol SentencedFailure: Error, Sendable, Hashable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The one sentence a person reads for this failure.
    var sentence: String { get }

    /// A failure known only by its sentence (read back from a document, or given as text).
    static func reported(_ sentence: String) -> Self
}

extension SentencedFailure {
    public var description: String { sentence }

    /// Two failures are the same when they say the same: a failure read back from JSON
    /// (`reported`) equals the one that was written.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.sentence == rhs.sentence }

    public func hash(into hasher: inout Hasher) { hasher.combine(sentence) }

    public init(stringLiteral sentence: String) { self = .reported(sentence) }

    /// Reads the sentence a document holds under `error`.
    public init(from decoder: any Decoder) throws {
        self = .reported(try decoder.singleValueContainer().decode(String.self))
    }

    /// Writes the sentence, as `error` has always held it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(sentence)
    }
}

// The line being typed (a host, a filter) and the readline keys fingers already know for it:
// Left/Right, Ctrl-A/E, Ctrl-U, Ctrl-W, Backspace and Del, all acting at the cursor.

/// Text being typed with a cursor, edited the way readline edits a shell's line.
public struct EditedLine: Sendable, Equatable {
    /// The line, one character per grapheme (what Left and Right step over).
    public private(set) var characters: [Character] = []
    /// How many characters are before the cursor (0 is the start of the line).
    public private(set) var cursor = 0

    /// A line holding `text`, the cursor at its end.
    public init(_ text: String = "") {
        characters = Array(text)
        cursor = characters.count
    }

    /// The whole line.
    public var text: String { String(characters) }
    /// Whether nothing is typed.
    public var isEmpty: Bool { characters.isEmpty }

    /// The text before the cursor.
    public var beforeCursor: String { String(characters[..<cursor]) }

    /// Replaces the whole line (a history entry), the cursor at its end.
    public mutating func replace(with text: String) { self = EditedLine(text) }

    /// Types `character` at the cursor, which moves past it.
    public mutating func insert(_ character: Character) {
        characters.insert(character, at: cursor)
        cursor += 1
    }

    /// Left: one character back.
    public mutating func moveLeft() { cursor = max(0, cursor - 1) }
    /// Right: one character on.
    public mutating func moveRight() { cursor = min(characters.count, cursor + 1) }
    /// Ctrl-A, Home.
    public mutating func moveToStart() { cursor = 0 }
    /// Ctrl-E, End.
    public mutating func moveToEnd() { cursor = characters.count }

    /// Backspace: the character before the cursor.
    public mutating func deleteBackward() {
        guard cursor > 0 else { return }
        characters.remove(at: cursor - 1)
        cursor -= 1
    }

    /// Del: the character under the cursor.
    public mutating func deleteForward() {
        guard cursor < characters.count else { return }
        characters.remove(at: cursor)
    }

    /// Ctrl-U: everything before the cursor (readline's unix-line-discard).
    public mutating func deleteToStart() {
        characters.removeFirst(cursor)
        cursor = 0
    }

    /// Ctrl-W: the word before the cursor and the spaces after it, as in bash's Ctrl-W
    /// (readline's unix-word-rubout: words end at spaces only).
    public mutating func deleteWordBackward() {
        var start = cursor
        while start > 0 && characters[start - 1] == " " { start -= 1 }
        while start > 0 && characters[start - 1] != " " { start -= 1 }
        characters.removeSubrange(start..<cursor)
        cursor = start
    }
}

// Trimming as Foundation's `trimmingCharacters(in:)` does with its whitespace sets, on the
// standard library's Unicode properties: CharacterSet lives in the full Foundation (ICU).

extension Unicode.Scalar {
    /// Foundation's `CharacterSet.whitespaces`: tab, the space separators (Unicode's Zs) and, as
    /// CoreFoundation's set has it, the zero-width space U+200B.
    @inlinable
    public var isBlank: Bool {
        value == 0x09 || value == 0x20
            || (value >= 0x80 && (value == 0x200B || properties.generalCategory == .spaceSeparator))
    }

    /// Foundation's `CharacterSet.whitespacesAndNewlines`: blanks, LF, VT, FF, CR, NEL, LS and PS.
    @inlinable
    public var isBlankOrNewline: Bool {
        switch value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: isBlank
        }
    }
}

extension StringProtocol {
    /// The text without tabs and spaces (any Unicode space separator) at either end.
    @inlinable
    public func trimmingWhitespace() -> String { trimmingScalars(where: \.isBlank) }

    /// The text without whitespace or line breaks at either end.
    @inlinable
    public func trimmingWhitespaceAndNewlines() -> String { trimmingScalars(where: \.isBlankOrNewline) }

    /// The text without any of `characters`' scalars at either end (`"[::1]"` trimmed of `"[]"`).
    public func trimming(charactersIn characters: String) -> String {
        let set = Set(characters.unicodeScalars)
        return trimmingScalars { set.contains($0) }
    }

    /// The text without the scalars `predicate` accepts at either end.
    @inlinable
    public func trimmingScalars(where predicate: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !predicate($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !predicate($0) })!
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[first...last])
        return String(kept)
    }
}

// Unicode canonical composition (NFC) from the standard library's own normalization tables, for
// host names and screen cells: the full Foundation's precomposedStringWithCanonicalMapping needs ICU.

extension StringProtocol {
    /// The text in Unicode normalization form C (`e` + U+0301 → `é`), as Foundation's
    /// `precomposedStringWithCanonicalMapping`.
    public var canonicallyComposed: String {
        // The standard library compares strings by their NFC form and exposes those bytes.
        String(decoding: String(self)._nfcCodeUnits, as: UTF8.self)
    }
}

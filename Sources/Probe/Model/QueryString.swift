// Query strings from outside (a URL typed, a server's Location) split into pairs the one way
// every caller uses: a pair may lack a name (`?=`), a value or both, and none of that traps.

/// Splits the query part of a URL into name/value pairs, as written (not decoded).
enum QueryString {
    /// The pairs of `query` (without the `?`), empty pairs (`a&&b`) included as empty names.
    ///
    /// - Returns: each pair's name, and its value when it has an `=` (`?=` is an empty name
    ///   with an empty value; `?a` is the name `a` with no value).
    static func pairs(_ query: Substring) -> [(name: Substring, value: Substring?)] {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return (pair, nil) }
            return (pair[..<equals], pair[pair.index(after: equals)...])
        }
    }
}

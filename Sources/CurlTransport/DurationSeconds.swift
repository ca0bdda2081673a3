// Times travel as `Duration` through the API; libcurl, c-ares, poll and the sentences people
// read count in seconds or milliseconds, converted here at those edges.

extension Duration {
    /// The duration in seconds, fractions kept (`.milliseconds(1500)` is 1.5).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

extension Int {
    /// Whole seconds of `seconds`, rounded by `rule` and held to `Int`'s range (NaN is 0).
    ///
    /// `Int(_:)` traps beyond that range, and a time computed from outside numbers (a cache
    /// file's date, a server's header) can land there; a count of seconds shown to a person
    /// reads the same saturated.
    public init(seconds: Double, rounded rule: FloatingPointRoundingRule) {
        let whole = seconds.rounded(rule)
        if whole.isNaN {
            self = 0
        } else if whole >= 9_223_372_036_854_775_807.0 {
            self = .max
        } else if whole <= -9_223_372_036_854_775_808.0 {
            self = .min
        } else {
            self = Int(whole)
        }
    }
}

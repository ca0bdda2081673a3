// Times travel as `Duration` through the API; libcurl, c-ares, poll and the sentences people
// read count in seconds or milliseconds, converted here at those edges.

extension Duration {
    /// The duration in seconds, fractions kept (`.milliseconds(1500)` is 1.5).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

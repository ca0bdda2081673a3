// The seam every doctor check plugs into, and the list of checks a run makes. Adding a check is
// one file under Checks/ and one line in `DoctorChecks.all`.

/// One check of `ipdirect doctor`: looks at one thing and answers one finding, never throws
/// (a check that cannot look says `skipped` and why).
public protocol DoctorCheck: Sendable {
    var id: DoctorCheckID { get }
    /// Runs the check. It should end well within `context.budget`; the runner stops waiting then.
    func run(_ context: DoctorContext) async -> DoctorFinding
}

/// The checks a run makes, in report order.
public enum DoctorChecks {
    public static let all: [any DoctorCheck] = [
        IPStackCheck(),
        ProxiesAndResolversCheck(),
        ServiceReachabilityCheck(),
        ClockCheck(),
        AccountCheck(),
        DNSPathsCheck(),
        ClientAddressCheck(),
        InterceptionCheck(),
    ]
}

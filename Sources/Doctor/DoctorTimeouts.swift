// How long one step of a check (a query, a request) may wait: a share of the run's bound, so a
// check of a few steps ends within it even when an address never answers.

import CurlTransport
import NameResolution

extension DoctorContext {
    /// One step's wait: a fifth of the run's bound, never longer than the provider's own timeout.
    /// A check with more steps in a row than four runs them at once instead.
    public var stepTimeout: Duration {
        min(budget / 5, .milliseconds(Int64(resolver.timeout * 1000)))
    }

    /// The provider's settings with its timeout cut to `stepTimeout`, for a check that asks it.
    public var boundedResolver: ResolverConfiguration {
        var bounded = resolver
        bounded.timeout = stepTimeout.inSeconds
        return bounded
    }
}

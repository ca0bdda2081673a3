// Where a probe made on others' word may go: the engine asks it about each redirect's new host
// and every address that hop would connect to, so a server cannot steer the prober elsewhere.
import NameResolution

/// What a prober may reach beyond the target it was given (the agent's `--probe-allow`). The
/// engine asks it at each redirect to a new host: the name first, then the addresses the hop
/// would connect to, whether `Location` named them or DNS or HTTPDNS answered them.
public protocol DestinationPolicy: Sendable {
    /// Why a request may not go to `host`, a name or an address literal; nil when it may.
    func refusal(host: String) -> String?
    /// Why a request may not connect to `address`; nil when it may.
    func refusal(address: IPAddress) -> String?
}

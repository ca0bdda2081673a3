// The closed sets the command line takes (output formats, families, scenarios, methods) as
// enums ArgumentParser checks, and the options more than one command shares.
import ArgumentParser
import Foundation
import NameResolution
import Probe

extension AddressFamily: ExpressibleByArgument {}
extension SDKProfile: ExpressibleByArgument {}
extension Scenario: ExpressibleByArgument {}

/// `--format` of `resolve` and `cache list`.
enum TableOrJSON: String, ExpressibleByArgument, CaseIterable {
    case table, json
}

/// `--format` of `probe`.
enum ProbeFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, jsonl
}

/// `probe --order`: results as each URL finishes, or in the input's order.
enum ProbeOrder: String, ExpressibleByArgument, CaseIterable {
    case completion, input
}

/// `probe --method`; accepted in any case (`head` is HEAD).
extension RequestMethod: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(anyCase: argument)
    }
}

/// The help of the arguments and options `probe` and `agent` both take, written once.
enum RequestOptionHelp {
    static let urls: ArgumentHelp =
        "URLs to probe; without a scheme, https is meant. With --lab and none given: every lab name."
    static let scenario = ArgumentHelp(
        "Only this scenario (repeatable): \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")).")
    static let header: ArgumentHelp = "Extra request header 'Name: value' (repeatable)."
    static let cacert: ArgumentHelp = "Trust the CAs in this PEM file too, for every request."
}

/// `--probe-timeout`, shared by `probe`, `agent` and the console: how long one request may take.
struct ProbeTimeoutOption: ParsableArguments {
    /// The default, from the probe engine's own options.
    static let defaultSeconds = ProbeOptions.defaultTimeout.inSeconds

    @Option(
        help: ArgumentHelp(
            "Seconds one probe request may take (default \(ResolutionError.format(defaultSeconds))).",
            valueName: "SECONDS"))
    var probeTimeout: Double?

    /// The bound for each request in `probe` and `agent`: `--probe-timeout`, else a `--timeout`
    /// given on the command line (it then bounds requests too), else the default. The console
    /// keeps `--timeout` for name resolution alone.
    ///
    /// - Parameter timeout: the command line's `--timeout`, nil when not given.
    func timeout(orResolutionTimeout timeout: Double?) -> Duration {
        .seconds(probeTimeout ?? timeout ?? Self.defaultSeconds)
    }

    func validate() throws {
        if let probeTimeout, !(probeTimeout > 0 && probeTimeout <= 3600) {
            throw ValidationError("--probe-timeout must be a number of seconds between 0 and 3600")
        }
    }
}

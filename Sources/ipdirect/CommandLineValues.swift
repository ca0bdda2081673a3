// The closed sets the command line takes (output formats, families, scenarios, methods) as
// enums ArgumentParser checks, and the options more than one command shares.
import ArgumentParser
import ConfigurationSources
import CurlTransport
import FoundationEssentials
import NameResolution
import Probe

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--type`: the four families, and dig's record types (`A` is v4, `AAAA` is v6) in any case.
extension AddressFamily: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.uppercased() {
        case "A": self = .v4
        case "AAAA": self = .v6
        default: self.init(rawValue: argument)
        }
    }
}
extension SDKProfile: ExpressibleByArgument {}
extension Scenario: ExpressibleByArgument {}

/// `--format` of `resolve` and `cache list`.
enum TableOrJSON: String, ExpressibleByArgument, CaseIterable {
    case table, json
}

/// `--format` of `probe`.
/// `lab --format`: a summary for a person, or the one JSON line a program reads.
enum TextOrJSON: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

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
    static let urls = ArgumentHelp(
        "URLs to probe; without a scheme, https is meant. With --lab and none given: every lab name.",
        valueName: "URL")
    static let scenario = ArgumentHelp(
        "Only this scenario (repeatable): \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")).",
        valueName: "SCENARIO")
    static let header = ArgumentHelp("Extra request header 'Name: value' (repeatable).", valueName: "HEADER")
    static let cacert = ArgumentHelp(
        "Trust the CAs in this PEM file too, for every request to the origin (default: $CURL_CA_BUNDLE or "
            + "$SSL_CERT_FILE, as curl; those replace the system's CAs). The HTTPDNS service's: --httpdns-ca.",
        valueName: "FILE")
}

/// `--type`, `-4` and `-6`, shared by `resolve` and `probe`: which address families to ask for.
struct FamilyOption: ParsableArguments {
    @Option(
        name: .customLong("type"),
        help: ArgumentHelp(
            "Address families: auto, v4, v6 or both; A and AAAA as dig (default "
                + "\(ResolverConfiguration.defaults.family.rawValue), the configuration's family).",
            valueName: "FAMILY"))
    var family: AddressFamily?

    @Flag(name: .customShort("4"), help: "IPv4 only, as curl -4 and dig -4 (--type v4).")
    var ipv4Only = false

    @Flag(name: .customShort("6"), help: "IPv6 only, as curl -6 and dig -6 (--type v6).")
    var ipv6Only = false

    /// The family asked for; nil to keep the configuration's.
    var chosen: AddressFamily? {
        if ipv4Only { return .v4 }
        if ipv6Only { return .v6 }
        return family
    }

    func validate() throws {
        if ipv4Only && ipv6Only { throw ValidationError("give -4 or -6, not both (--type both asks for both)") }
        if (ipv4Only || ipv6Only) && family != nil { throw ValidationError("give -4, -6 or --type, one of them") }
    }
}

/// `probe --resolve HOST:PORT:ADDR[,ADDR]`: curl's way of probing through a given address; the
/// host answers with these addresses, from both system DNS and HTTPDNS, and is never looked up.
struct PinnedAddress: Equatable {
    var host: String
    /// The port it applies to; nil for `*` (every port).
    var port: Int?
    var addresses: [IPAddress]

    /// Parses curl's `HOST:PORT:ADDR[,ADDR]...`; an IPv6 address may be bracketed.
    ///
    /// - Throws: `UsageError` naming what is wrong.
    init(parsing text: String) throws {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, !parts[0].isEmpty else {
            throw UsageError("--resolve takes HOST:PORT:ADDRESS as curl does (a.example:443:192.0.2.1), not '\(text)'")
        }
        host = parts[0].lowercased()
        if parts[1] == "*" {
            port = nil
        } else if let port = Int(parts[1]), (1...65_535).contains(port) {
            self.port = port
        } else {
            throw UsageError("--resolve \(text): '\(parts[1])' is not a port (1 to 65535, or *)")
        }
        addresses = try parts[2].split(separator: ",").map { item in
            var literal = String(item)
            if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
            guard let address = IPAddress(literal) else {
                throw UsageError("--resolve \(text): '\(item)' is not an IP address")
            }
            return address
        }
        guard !addresses.isEmpty else { throw UsageError("--resolve \(text): no address after the port") }
    }
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

/// How the commands write `--format json`: compact (one document a line, for scripts) unless
/// asked with `--pretty`, or printed to a terminal, as jq does. What it encodes goes through
/// `ProbeJSON.escapingSeparators`, as every export does, so no line separator is left raw.
enum JSONOutput {
    /// An encoder with sorted keys and plain slashes, indented when `pretty` says so.
    ///
    /// - Parameter pretty: `--pretty` or `--no-pretty`; nil: indented when standard output is a terminal.
    static func encoder(pretty: Bool?) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if pretty ?? (isatty(STDOUT_FILENO) == 1) { encoder.outputFormatting.insert(.prettyPrinted) }
        return encoder
    }

    /// `--pretty` and `--no-pretty`'s help.
    static let help: ArgumentHelp =
        "Indent --format json for reading (default: on a terminal; else compact, one document a line)."
}

/// `--format` and `--pretty`, as every command that writes a report takes them; `Format` is its
/// set of formats (`table`, `json`, and probe's `jsonl`), the first the default.
struct OutputOptions<Format: ExpressibleByArgument & CaseIterable & RawRepresentable & Sendable>: ParsableArguments
where Format.RawValue == String {
    @Option(
        name: .customLong("format"),
        help: ArgumentHelp(
            "Output: \(OutputOptions.formatNames) (default \(OutputOptions.formatDefault.rawValue)).",
            valueName: "FORMAT"))
    /// `--format` as given; nil when it was not.
    var given: Format?

    @Flag(inversion: .prefixedNo, help: JSONOutput.help)
    var pretty: Bool?

    /// The format asked for, or the default.
    var format: Format { given ?? Self.formatDefault }

    private static var formatDefault: Format { Format.allCases.first! }

    /// `table, json or jsonl`.
    private static var formatNames: String {
        let names = Format.allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + (names.last ?? "")
    }
}

/// `--color`, for the commands whose table or progress is coloured.
struct ColorOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Colour the output: never, auto (on a terminal, unless NO_COLOR is set) or always.", valueName: "WHEN"))
    var color: ColorChoice = .auto
}

// `--cacert`: the CA file for origins' TLS named on the command line, else the bundle the
// environment names as curl reads it; both checked before libcurl reads them.
import Composition
import FoundationEssentials

/// The origins' CA file the command line and the environment name.
enum CAFileOption {
    /// The CA file for origins' TLS and whether it adds to the system's CAs (`--cacert`) or
    /// replaces them (the environment's, as curl uses them); nil when none is named.
    ///
    /// - Throws: `UsageError` when the file named cannot be a CA file.
    static func origin(
        cacert: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> OriginCA? {
        if let cacert {
            if let problem = CAFileCheck.problem(cacert, named: "--cacert") { throw UsageError(problem) }
            return (cacert, true)
        }
        do {
            return try CAFileCheck.environmentBundle(environment).map { ($0, false) }
        } catch {
            throw UsageError(error.description)
        }
    }
}

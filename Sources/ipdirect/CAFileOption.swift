// CA files the user names (--cacert, --httpdns-ca, ca_file, curl's CURL_CA_BUNDLE and SSL_CERT_FILE):
// checked where they are named, before libcurl reads them (it would block on a FIFO, never end on a device).
import Foundation
import NameResolution

/// The check every CA file option shares.
enum CAFileOption {
    /// Why `path` cannot be a CA file, as a sentence naming the option; nil when it can.
    ///
    /// - Parameter option: how the user named it: `--cacert`, `ca_file (--httpdns-ca)`.
    static func problem(_ path: String, named option: String) -> String? {
        do {
            try TextFile.requireRegularFile(path)
            return nil
        } catch {
            return "\(option) \(path): \(error.reason)"
        }
    }
}

extension CAFileOption {
    /// The CA file for origins' TLS and whether it adds to the system's CAs (`--cacert`) or
    /// replaces them (the environment's, as curl uses them); nil when none is named.
    ///
    /// - Throws: `UsageError` when the file named cannot be a CA file.
    static func origin(
        cacert: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> (path: String, addsToSystem: Bool)? {
        if let cacert {
            if let problem = problem(cacert, named: "--cacert") { throw UsageError(problem) }
            return (cacert, true)
        }
        return try environmentBundle(environment).map { ($0, false) }
    }

    /// curl's `CURL_CA_BUNDLE`, else `SSL_CERT_FILE`: the CA bundle to use instead of the system's.
    ///
    /// - Throws: `UsageError` when the file named cannot be a CA file.
    static func environmentBundle(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String? {
        for variable in ["CURL_CA_BUNDLE", "SSL_CERT_FILE"] {
            guard let path = environment[variable], !path.isEmpty else { continue }
            if let problem = problem(path, named: variable) { throw UsageError(problem) }
            return path
        }
        return nil
    }
}

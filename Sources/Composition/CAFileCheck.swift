// CA files the user names (--cacert, --httpdns-ca, ca_file, curl's CURL_CA_BUNDLE and SSL_CERT_FILE):
// checked where they are named, before libcurl reads them (it would block on a FIFO, never end on a device).
import FoundationEssentials
import NameResolution

/// The check every CA file setting shares.
public enum CAFileCheck {
    /// Why `path` cannot be a CA file, as a sentence naming the setting; nil when it can.
    ///
    /// - Parameter setting: how the user named it: `--cacert`, `ca_file (--httpdns-ca)`.
    public static func problem(_ path: String, named setting: String) -> String? {
        reason(path).map { "\(setting) \(path): \($0)" }
    }

    /// Why `path` cannot be a CA file (`it is a directory`); nil when it can.
    public static func reason(_ path: String) -> String? {
        do {
            try TextFile.requireRegularFile(path)
            return nil
        } catch {
            return error.reason
        }
    }

    /// curl's `CURL_CA_BUNDLE`, else `SSL_CERT_FILE`: the CA bundle to use instead of the system's.
    ///
    /// - Throws: `SessionError.environmentCABundle` when the file named cannot be a CA file.
    public static func environmentBundle(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SessionError) -> String? {
        for variable in ["CURL_CA_BUNDLE", "SSL_CERT_FILE"] {
            guard let path = environment[variable], !path.isEmpty else { continue }
            if let problem = problem(path, named: variable) { throw .environmentCABundle(problem) }
            return path
        }
        return nil
    }
}

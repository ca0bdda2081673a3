// CA files the user names (--cacert, --httpdns-ca, ca_file): checked where they are named, before
// libcurl or the combined bundle reads them, which would block on a FIFO and never end on a device.
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

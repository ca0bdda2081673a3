// What ipdirect itself can run out of (descriptors, memory), told apart from a target's failure:
// an attempt that could not open a socket says nothing about the server it was meant for.
import FoundationEssentials
import NameResolution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A resource of this process that ran out; the raw value is the `resource` metric label.
public enum ResourceShortage: String, Sendable, Codable, Hashable, CaseIterable {
    /// No free file descriptor (EMFILE for the process, ENFILE for the system).
    case descriptors
    /// No memory for a socket or its buffers (ENOMEM, ENOBUFS).
    case memory

    /// The shortage an errno means; nil for any other error.
    public init?(errno code: Int32) {
        switch code {
        case EMFILE, ENFILE: self = .descriptors
        case ENOMEM, ENOBUFS: self = .memory
        default: return nil
        }
    }

    /// Whether this process can open a socket right now; the shortage when it cannot.
    ///
    /// libcurl 7.88 reports a `socket()` that failed as a connection that failed (CURLE_COULDNT_CONNECT)
    /// without the errno, so a connect failure with no errno is checked against the process's
    /// state at once: a transient shortage that has passed by then reads as the connect failure.
    public static func now() -> ResourceShortage? {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if probe >= 0 {
            close(probe)
            return nil
        }
        return ResourceShortage(errno: errno)
    }

    /// What ran out, for a sentence ("ipdirect has no free file descriptor"), in the command
    /// line's words (`AttemptFailure.sentence`'s, which the exports write).
    public var sentence: String { sentence(.commandLine) }

    /// What ran out, with the setting that eases it named in `voice`.
    public func sentence(_ voice: SettingVoice) -> String {
        switch self {
        case .descriptors:
            "ipdirect has no free file descriptor (EMFILE: raise ulimit -n or lower \(Setting.concurrency.named(voice)))"
        case .memory: "ipdirect has no memory for a socket (ENOMEM)"
        }
    }
}

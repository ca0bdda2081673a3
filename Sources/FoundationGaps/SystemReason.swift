// An errno said in words with what to do about it, for every message that reports a failure of
// the system (a file, a disk, a port) rather than strerror's terse text.
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The words for an errno: what happened, and where there is one, what to do.
public enum SystemReason {
    /// `code` in words: "the disk is full: free some space or write elsewhere"; strerror's text
    /// for the codes without words of their own.
    public static func words(_ code: Int32) -> String {
        switch code {
        case ENOENT: "it does not exist"
        case EACCES, EPERM: "permission denied"
        case EISDIR: "it is a directory"
        case ENOTDIR: "a part of the path is not a directory"
        case ENOSPC: "the disk is full (No space left on device): free some space or write elsewhere"
        case EDQUOT: "the disk quota is used up: free some space or write elsewhere"
        case EROFS: "the file system is read-only: write elsewhere"
        case EFBIG: "the file is larger than the system allows: write a smaller one or elsewhere"
        case EADDRINUSE: "the port is already in use by another program: stop that program, or choose another port"
        case EADDRNOTAVAIL:
            "no network interface of this machine has that address: give one of its own, or 0.0.0.0 for all"
        case EMFILE, ENFILE: "too many open files: raise the limit (ulimit -n), or do less at once"
        default: String(cString: strerror(code))
        }
    }

    /// An error from a file operation (FoundationEssentials' `CocoaError`, a `POSIXError`) in
    /// `words(_:)`'s terms; an error of ipdirect's own by its description. This is what
    /// `localizedDescription` gave, which FoundationEssentials does not have.
    public static func words(for error: any Error) -> String {
        if let posix = error as? POSIXError { return words(posix.code.rawValue) }
        if let cocoa = error as? CocoaError, let posix = cocoa.underlying as? POSIXError {
            return words(posix.code.rawValue)
        }
        if let described = (error as? any LocalizedError)?.errorDescription { return described }
        return String(describing: error)
    }
}

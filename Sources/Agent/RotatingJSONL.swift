// `agent --jsonl FILE --rotate SIZE`: the records `probe --format jsonl` writes, one per probed
// URL, into FILE; past SIZE it becomes FILE.1 (FILE.1 becomes FILE.2 ...), the oldest dropped.
import CoreFoundation
import FoundationEssentials
import FoundationGaps
import Logging
import NameResolution
import Probe

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A size in bytes as people write it: `100MB`, `512k`, `1GiB`, `4096`.
public enum ByteSize {
    /// Parses a size; units k/m/g (with or without B, i) are powers of 1024.
    ///
    /// - Throws: `AgentSettingError` when `text` is not a size.
    public static func parse(_ text: String) throws(AgentSettingError) -> Int64 {
        let lowered = text.trimmingWhitespace().lowercased()
        let digits = lowered.prefix { $0.isNumber || $0 == "." }
        var unit = String(lowered.dropFirst(digits.count))
        for suffix in ["ib", "b"] where unit.hasSuffix(suffix) {
            unit.removeLast(suffix.count)
            break
        }
        let factor: Double? =
            switch unit {
            case "": 1
            case "k": 1024
            case "m": 1024 * 1024
            case "g": 1024 * 1024 * 1024
            default: nil
            }
        guard let number = Double(digits), let factor, number * factor >= 1024 else {
            throw AgentSettingError(
                .rotate, value: text, " is not a size of at least 1KB; write it like 100MB, 512KB or 1GB")
        }
        // Past 2^63 bytes the size cannot be counted (converting it would trap): no disk holds it.
        guard number * factor < 0x1p63 else {
            throw AgentSettingError(
                .rotate, value: text, " is larger than any file can grow; write it like 100MB, 512KB or 1GB")
        }
        return Int64(number * factor)
    }
}

/// Appends reports to a JSON Lines file, rotating it by size; every file it creates is 0600
/// (`PrivateFile`), as probe's exports are: the records say what was probed. A line a hard stop
/// cut off is dropped when the file is opened, as `probe --jsonl --resume` drops it, so the next
/// record starts a line of its own. A write that fails (disk full, file system gone) is counted
/// and said at most once a minute; probing goes on, and the next report is tried again.
public final class RotatingJSONL: ReportExporter {
    private struct State {
        var descriptor: Int32
        var size: Int64
    }

    public let path: String
    /// The size past which the file is rotated; nil never rotates.
    public let limit: Int64?
    /// Rotated files kept (FILE.1 ... FILE.keep).
    public let keep: Int
    private let redact: Bool
    private let metrics: AgentMetrics?
    private let logger: Logger
    private let throttle = ReportThrottle(every: 60)
    private let state: Locked<State>

    /// Opens (or creates) the file for appending.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - limit: rotate past this many bytes; nil for never.
    ///   - keep: rotated files kept.
    ///   - redact: hide secrets, as `probe` does unless `--no-redact`.
    ///   - metrics: where failed writes are counted.
    ///   - logger: where they are said.
    /// - Throws: `AgentSettingError` when the file cannot be opened.
    public init(
        path: String, limit: Int64?, keep: Int = 5, redact: Bool = true, metrics: AgentMetrics?, logger: Logger
    ) throws(AgentSettingError) {
        self.path = path
        self.limit = limit
        self.keep = max(1, keep)
        self.redact = redact
        self.metrics = metrics
        self.logger = logger
        let descriptor: Int32
        do {
            descriptor = try PrivateFile.open(path, flags: O_RDWR | O_APPEND)
        } catch {
            throw AgentSettingError(
                "cannot open ", .jsonl, value: path,
                ": \(error.reason); give it a regular file in a directory that exists and is writable")
        }
        ReportWriter.dropCutOffLine(descriptor)
        state = Locked(State(descriptor: descriptor, size: Self.size(of: descriptor)))
    }

    deinit { _ = state.withLock { close($0.descriptor) } }

    /// Appends one report as one line; the context plays no part in the file.
    public func record(_ report: URLReport, context: ReportContext) {
        let line = ReportWriter.jsonLine(redact ? Redaction.report(report) : report)
        let failure = state.withLock { state -> String? in
            if let limit, state.size > 0, state.size + Int64(line.count) > limit {
                rotate(&state)
            }
            let written = line.withUnsafeBytes { buffer -> Int32? in
                guard let base = buffer.baseAddress else { return nil }  // empty: nothing to write
                var offset = 0
                while offset < buffer.count {
                    let count = Glibc.write(state.descriptor, base + offset, buffer.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    offset += count
                }
                return nil
            }
            if let written { return SystemReason.words(written) }
            state.size += Int64(line.count)
            return nil
        }
        if let failure {
            metrics?.exportFailed(.jsonl)
            throttle.report { suppressed in
                let more = suppressed > 0 ? " (\(suppressed) more records lost since the last report)" : ""
                logger.error(
                    "cannot write to \(named): \(failure); this record is lost, probing goes on\(more). Free space or fix the file.",
                    metadata: ["event": "jsonl-write-failed"])
            }
        }
    }

    /// Nothing to do: every record was written whole when it was recorded.
    public func finish(within budget: Duration) async {}

    /// FILE → FILE.1 → FILE.2 ...; a fresh FILE.
    private func rotate(_ state: inout State) {
        let manager = FileManager.default
        try? manager.removeItem(atPath: "\(path).\(keep)")
        if keep > 1 {
            for index in stride(from: keep - 1, through: 1, by: -1) {
                _ = rename("\(path).\(index)", "\(path).\(index + 1)")
            }
        }
        guard rename(path, "\(path).1") == 0 else {
            logger.error(
                "cannot rotate \(named): \(String(cString: strerror(errno))); it keeps growing",
                metadata: ["event": "jsonl-rotate-failed"])
            state.size = 0
            return
        }
        guard let fresh = try? PrivateFile.open(path, flags: O_WRONLY | O_APPEND) else {
            // The old descriptor still writes into FILE.1: records are kept, under the wrong name.
            state.size = 0
            return
        }
        close(state.descriptor)
        state.descriptor = fresh
        state.size = 0
        logger.info("rotated \(named) to \(path).1", metadata: ["event": "jsonl-rotated"])
    }

    /// The file as the agent's log names it (`--jsonl PATH`: a setting only a flag gives).
    private var named: String { Setting.jsonl.named(.configuration, value: path) }

    private static func size(of descriptor: Int32) -> Int64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : 0
    }
}

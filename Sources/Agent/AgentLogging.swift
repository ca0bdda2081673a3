// The agent's log through swift-log: one line per event on standard error, as text for people
// or as JSON (`--log-format json`) for a log shipper.
import FoundationEssentials
import FoundationGaps
import Logging
import Probe
import TerminalText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How log lines are written.
public enum AgentLogFormat: String, Sendable, CaseIterable {
    /// `2026-01-01T00:00:00Z warning message key=value`.
    case text
    /// One JSON object per line: `time`, `level`, `message`, then the metadata.
    case json
}

/// A swift-log handler writing one line per event to a file descriptor (standard error).
public struct AgentLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let format: AgentLogFormat
    private let sink: LineSink

    /// - Parameters:
    ///   - format: text or JSON.
    ///   - descriptor: where lines go.
    public init(format: AgentLogFormat, descriptor: Int32 = STDERR_FILENO) {
        self.format = format
        sink = LineSink(descriptor: descriptor)
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let time = Date().formatted(.iso8601)
        switch format {
        case .text:
            var line = "\(time) \(event.level) \(TerminalText.escaped(event.message.description))"
            for (key, value) in all.sorted(by: { $0.key < $1.key }) {
                line += " \(key)=\(TerminalText.escaped("\(value)"))"
            }
            sink.write(line + "\n")
        case .json:
            var object: [String: String] = [:]
            for (key, value) in all { object[key] = "\(value)" }
            object["time"] = time
            object["level"] = event.level.rawValue
            object["message"] = event.message.description
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // A server's text in a message (a reason, a provider's extra) stays on its one line.
            guard let data = (try? encoder.encode(object)).map(ProbeJSON.escapingSeparators) else { return }
            sink.write(String(decoding: data, as: UTF8.self) + "\n")
        }
    }
}

/// Whole lines to a descriptor, one writer at a time.
private final class LineSink: Sendable {
    /// The descriptor, behind a lock so lines from different threads never interleave.
    private let descriptor: Locked<Int32>

    init(descriptor: Int32) { self.descriptor = Locked(descriptor) }

    func write(_ line: String) {
        let bytes = Array(line.utf8)
        descriptor.withLock { descriptor in
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes { buffer in
                    buffer.baseAddress.map { Glibc.write(descriptor, $0, buffer.count) } ?? 0
                }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                offset += count
            }
        }
    }
}

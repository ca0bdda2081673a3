// Exports written as reports arrive: a table block, a JSON Lines line, a JSON array element or
// HAR entries per URL, each written whole, so output and files are usable while a batch runs.
import FoundationEssentials
import FoundationGaps
import NameResolution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes reports to one file descriptor in one format, as they arrive: the `ReportExporter`
/// of `probe`'s output and files and of the console's export.
///
/// Every report recorded goes out at once (no buffering), whole: JSON Lines are complete lines; a HAR
/// file is a valid document after every report (its closing `]}}` is rewritten after each
/// entry); a JSON array is closed by `finish()`, which a second Ctrl-C calls too before it exits.
/// Safe to call from any thread: writes are serialized.
public final class ReportWriter: ReportExporter {
    /// What the writer writes.
    public enum Format: Sendable {
        /// The human table, one block per URL.
        case table
        /// One JSON array of reports: pretty-printed, or compact with one report a line (`pretty`).
        case jsonArray
        /// One JSON object per line.
        case jsonLines
        /// A HAR 1.2 log (needs a file it can seek in).
        case har
    }

    private struct State {
        var written = 0
        var finished = false
        /// HAR: where the closing tail starts (the next entry goes there).
        var bodyEnd: off_t = 0
        var failure: String?
    }

    public let format: Format
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let redact: Bool
    /// A JSON array is indented (as jq prints on a terminal) rather than one report a line.
    private let pretty: Bool
    /// The table's width and colour.
    private let tableStyle: TableStyle
    private let state = Locked(State())
    /// JSON Lines: one buffer for every record, used under `state`'s lock.
    private let lines = CompactJSONEncoder.LineWriter()

    private static let harHead = Data(
        """
        {
          "log" : {
            "version" : "1.2",
            "creator" : {
              "name" : "ipdirect",
              "version" : "\(IPDirectVersion.string)"
            },
            "entries" : [
        """.utf8)
    private static let harTail = Data("\n    ]\n  }\n}\n".utf8)

    /// Writes to an open descriptor (standard output, for instance); it is not closed.
    ///
    /// - Parameters:
    ///   - format: what to write.
    ///   - descriptor: where.
    ///   - redact: hide `Authorization`, `Cookie`, `Set-Cookie` and other secrets.
    ///   - pretty: indent a JSON array (for a person); otherwise one compact report a line.
    ///   - tableStyle: the table's width and colour (a terminal's).
    public init(
        _ format: Format, descriptor: Int32, redact: Bool = true, pretty: Bool = true,
        tableStyle: TableStyle = .plain
    ) {
        self.format = format
        self.descriptor = descriptor
        ownsDescriptor = false
        self.redact = redact
        self.pretty = pretty
        self.tableStyle = tableStyle
        begin()
    }

    /// Creates (or empties) a file and writes to it; with `appending`, JSON Lines are added
    /// after the complete lines already there (a cut-off last line is dropped).
    ///
    /// - Throws: `ReportWriterError` when the file cannot be opened.
    public init(
        _ format: Format, path: String, redact: Bool = true, appending: Bool = false, pretty: Bool = true
    ) throws(ReportWriterError) {
        let appendLines = appending && format == .jsonLines
        // 0600: an export holds what servers answered and, with redaction off, credentials. Only
        // a regular file gets here (PrivateFile refuses the rest), so only a regular file is made so.
        let descriptor: Int32
        do {
            descriptor = try PrivateFile.open(path, flags: O_RDWR | (appendLines ? 0 : O_TRUNC))
        } catch {
            throw ReportWriterError(path: path, reason: error.reason)
        }
        fchmod(descriptor, PrivateFile.mode)
        self.format = format
        self.descriptor = descriptor
        ownsDescriptor = true
        self.redact = redact
        self.pretty = pretty
        tableStyle = .plain
        if appendLines { Self.dropCutOffLine(descriptor) }
        begin()
    }

    deinit {
        finish()
        if ownsDescriptor { close(descriptor) }
    }

    /// How many reports were written.
    public var count: Int { state.withLock { $0.written } }

    /// The first write error, as a sentence; nil when all went well.
    public var failure: String? { state.withLock { $0.failure } }

    /// Writes one report; the context plays no part in files.
    public func record(_ report: URLReport, context: ReportContext) {
        let shown = redact ? Redaction.report(report) : report
        state.withLock { state in
            guard !state.finished else { return }
            switch format {
            case .table:
                put(Data(ProbeTable.render(report, style: tableStyle).utf8), &state)
            case .jsonLines:
                _ = lines.withLine(shown) { put($0, &state) }
            case .jsonArray where !pretty:
                let element = (try? CompactJSONEncoder.encode(shown)) ?? Array("null".utf8)
                put(Data((state.written == 0 ? "[" : ",\n").utf8) + element, &state)
            case .jsonArray:
                let element = (try? ProbeJSON.foundation(shown, pretty: true)) ?? Data("null".utf8)
                // Indented as an element of the array, as one pretty-printed array would be.
                var text = Data(state.written == 0 ? "[\n  ".utf8 : ",\n  ".utf8)
                text.append(contentsOf: element.flatMap { $0 == 0x0A ? [0x0A, 0x20, 0x20] : [$0] })
                put(text, &state)
            case .har:
                let entries = ProbeExport.harEntries(report, redact: redact)
                guard !entries.isEmpty else { break }
                var text = Data()
                for (index, entry) in entries.enumerated() {
                    text.append(contentsOf: Data(state.written == 0 && index == 0 ? "\n".utf8 : ",\n".utf8))
                    text.append(ProbeExport.harEntryText(entry))
                }
                // Over the old tail: entry, then the tail again, so the file is valid between reports.
                lseek(descriptor, state.bodyEnd, SEEK_SET)
                put(text, &state)
                state.bodyEnd = lseek(descriptor, 0, SEEK_CUR)
                put(Self.harTail, &state)
            }
            state.written += 1
        }
    }

    /// One report as a JSON Lines record (with its newline), as `probe --format jsonl` writes it.
    ///
    /// - Parameter report: the report, already redacted when it should be.
    public static func jsonLine(_ report: URLReport) -> Data {
        ProbeJSON.line(report) ?? Data()
    }

    /// Writes `line` above the table's first block (the provider heading); other formats carry
    /// the provider in every report instead, and ignore it.
    public func heading(_ line: String) {
        guard format == .table else { return }
        state.withLock { state in
            guard !state.finished, state.written == 0 else { return }
            put(Data(line.utf8), &state)
        }
    }

    /// Completes the document (closes the JSON array) and flushes a file to disk; later reports
    /// are ignored. Idempotent, and quick: a stop that cannot wait (a second Ctrl-C) calls it.
    public func finish() {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            if format == .jsonArray {
                put(Data((state.written == 0 ? "[]\n" : pretty ? "\n]\n" : "]\n").utf8), &state)
            }
            // A file streamed over a long batch cannot be renamed into place; it is flushed to disk instead.
            if ownsDescriptor { fsync(descriptor) }
        }
    }

    /// `finish()`: a local file takes no time worth bounding.
    public func finish(within budget: Duration) async {
        finish()
    }

    private func begin() {
        state.withLock { state in
            switch format {
            case .jsonArray:
                // The opening bracket waits for the first element or for finish ("[]").
                break
            case .har:
                put(Self.harHead, &state)
                state.bodyEnd = lseek(descriptor, 0, SEEK_CUR)
                put(Self.harTail, &state)
            case .table, .jsonLines:
                break
            }
        }
    }

    private func put(_ data: Data, _ state: inout State) {
        data.withUnsafeBytes { put($0, &state) }
    }

    private func put(_ buffer: UnsafeRawBufferPointer, _ state: inout State) {
        // Only an empty buffer has no address, and it has nothing to write.
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let count = Glibc.write(descriptor, base + offset, buffer.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                if state.failure == nil { state.failure = SystemReason.words(errno) }
                return
            }
            offset += count
        }
    }

    /// Truncates a JSON Lines file after its last newline (a line cut off by a hard stop), and
    /// leaves the descriptor at its end.
    ///
    /// - Parameter descriptor: the file, open for reading and writing.
    public static func dropCutOffLine(_ descriptor: Int32) {
        var end = lseek(descriptor, 0, SEEK_END)
        var byte: UInt8 = 0
        while end > 0 {
            guard pread(descriptor, &byte, 1, end - 1) == 1, byte != 0x0A else { break }
            end -= 1
        }
        _ = ftruncate(descriptor, end)
        lseek(descriptor, end, SEEK_SET)
    }
}

/// A file an export could not be written to.
public struct ReportWriterError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String {
        "cannot write \(path): \(reason); name a regular file in a directory that exists and is writable"
    }
}

extension ProbeExport {
    /// The URLs a previous JSON Lines output already has (its `url` fields), for `--resume`;
    /// a line that does not parse (cut off by a hard stop) is not counted.
    ///
    /// - Parameter path: the JSON Lines file.
    /// - Returns: the URLs, as reports write them.
    /// - Throws: when the file cannot be read.
    public static func urlsDone(inJSONLines path: String) throws -> Set<String> {
        struct Line: Decodable { var url: String }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let decoder = JSONDecoder()
        var done = Set<String>()
        for line in data.split(separator: 0x0A) where !line.isEmpty {
            if let parsed = try? decoder.decode(Line.self, from: line) { done.insert(parsed.url) }
        }
        return done
    }
}

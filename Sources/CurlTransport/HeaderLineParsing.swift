// A public door onto the way the transfer loop splits libcurl's header and log buffers into
// lines and `Name: value` fields, for the fuzz target and its corpus replay test.

/// Header buffers as the transfer loop reads them.
public enum HeaderLineParsing {
    /// The fields of a buffer of header lines, split and trimmed exactly as the loop does.
    ///
    /// - Parameter bytes: what libcurl could hand the header or debug callback.
    /// - Returns: every line that parses as `Name: value`, and the buffer as one trimmed line.
    public static func fields(_ bytes: [UInt8]) -> (fields: [HeaderField], whole: String) {
        bytes.withUnsafeBytes { buffer in
            var fields: [HeaderField] = []
            LineBytes.forEachLine(buffer) { line in
                if let field = HeaderField(bytes: line) { fields.append(field) }
            }
            return (fields, String(decoding: LineBytes.trimmed(buffer), as: UTF8.self))
        }
    }
}

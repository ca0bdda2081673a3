// printf-style formatting through the C library's vsnprintf: the numeric formats ipdirect prints
// (%d, %x, %o, %f, %g with widths and precisions) without the full Foundation's String(format:).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension String {
    /// `format` filled in by the C library's printf rules, as Foundation's `String(format:)` for the
    /// C conversions. `%@` (an object's description) is not a C conversion and is not supported;
    /// interpolate strings instead. Integers go as `Int`/`Int32`, floating point as `Double`.
    public init(cFormat format: String, _ arguments: any CVarArg...) {
        // Most results fit the first buffer; a longer one is measured by that first pass.
        var buffer = [CChar](repeating: 0, count: 128)
        let needed = Int(withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) })
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: needed + 1)
            _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        }
        self = needed <= 0 ? "" : String(decoding: buffer.prefix(needed).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

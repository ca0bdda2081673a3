// The configuration file's parser as a fuzz entry point, beside the providers' parsers in
// `ParserEntryPoints`; the fuzz targets and their corpus replay call it, nothing else.
import NameResolution

extension ParserEntryPoints {
    /// The TOML configuration file.
    public static func configuration(_ bytes: [UInt8]) {
        _ = try? ConfigurationLayer.toml(String(decoding: bytes, as: UTF8.self), path: "fuzz.toml")
    }
}

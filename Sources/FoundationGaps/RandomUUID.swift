// A random (version 4) UUID from the system's generator: Foundation's UUID() opens, reads and
// closes /dev/urandom for each one, and the probe engine makes one per attempt (issue 34).
import FoundationEssentials

extension UUID {
    /// A version 4 UUID whose 122 random bits come from `SystemRandomNumberGenerator` (getrandom
    /// on Linux: one call per 8 bytes, no file opened).
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next(), generator.next())
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = raw[6] & 0x0F | 0x40  // version 4
            raw[8] = raw[8] & 0x3F | 0x80  // the RFC 4122 variant
            return UUID(
                uuid: (
                    raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10],
                    raw[11], raw[12], raw[13], raw[14], raw[15]
                ))
        }
    }
}

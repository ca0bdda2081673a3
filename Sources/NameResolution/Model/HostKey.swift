// The resolver cache's key: a host name normalised (lowercase, no trailing dot) and hashed in
// the same single pass over its bytes, so a lookup reads the name once.
import FoundationEssentials

/// A normalised host name with its hash worked out once, as the cache's dictionary key.
///
/// Why not a plain `String` key: a lookup must both normalise the name and hash it. Hashed as a
/// `String`, through `Hasher` (SipHash-1-3), the hash alone was a quarter of a lookup, and the
/// normalisation check was another pass over the bytes. Here one pass reads the UTF-8 eight bytes
/// at a time, folding each word into a keyed multiply-fold hash (the mixing step of wyhash and
/// aHash) and into the uppercase test. The dictionary takes that hash through
/// `_rawHashValue(seed:)`, the standard library's hook for keys that hash themselves (its integers
/// use it), so no `Hasher` runs. `ipdirect-bench cache` measures the difference.
///
/// The hash is keyed by a random value per process, as `Hasher` is: names a user types or lists
/// cannot be chosen to collide.
struct HostKey: Hashable, Sendable {
    /// The normalised name.
    let name: String
    /// The name's hash under this process's key.
    let nameHash: UInt64

    /// The key for `host`: most names arrive clean and are keyed as given, without a copy; a name
    /// with an ASCII uppercase letter or a final dot is lowercased and trimmed first.
    init(_ host: String) {
        let scan = Self.scan(host)
        if scan.normalized {
            self.init(name: host, nameHash: scan.hash)
        } else {
            var name = host.lowercased()
            while name.hasSuffix(".") { name.removeLast() }
            self.init(name: name, nameHash: Self.scan(name).hash)
        }
    }

    private init(name: String, nameHash: UInt64) {
        self.name = name
        self.nameHash = nameHash
    }

    static func == (a: HostKey, b: HostKey) -> Bool {
        a.nameHash == b.nameHash && a.name == b.name
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(nameHash)
    }

    /// The dictionary's hash: the stored hash mixed with the dictionary's own seed, which each
    /// dictionary draws so that copying between two of them never clusters.
    func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: Self.fold(nameHash ^ UInt64(truncatingIfNeeded: seed), Self.multiplier))
    }

    // MARK: The one pass

    /// This process's hash key.
    private static let processKey = UInt64.random(in: .min ... .max)
    private static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
    private static let wordMultiplier: UInt64 = 0xBF58_476D_1CE4_E5B9

    /// The name's hash, and whether `init` may keep it as it is: no ASCII uppercase letter, no
    /// final dot.
    static func scan(_ host: String) -> (hash: UInt64, normalized: Bool) {
        if let scan = host.utf8.withContiguousStorageIfAvailable({ scan(UnsafeRawBufferPointer($0)) }) {
            return scan
        }
        // A bridged string without contiguous UTF-8: read a native copy.
        var native = host
        return native.withUTF8 { scan(UnsafeRawBufferPointer($0)) }
    }

    static func scan(_ bytes: UnsafeRawBufferPointer) -> (hash: UInt64, normalized: Bool) {
        let count = bytes.count
        var hash = processKey ^ (UInt64(count) &* multiplier)
        var upper: UInt64 = 0
        if count >= 8 {
            var offset = 0
            while offset + 8 <= count {
                let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                upper |= uppercaseBits(word)
                hash = fold(hash ^ word, wordMultiplier)
                offset += 8
            }
            // The last word overlaps the one before, so every byte is read; the length, mixed in
            // above, tells names of different lengths apart.
            if offset < count {
                let word = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                upper |= uppercaseBits(word)
                hash = fold(hash ^ word, wordMultiplier)
            }
        } else if count > 0 {
            var word: UInt64 = 0
            for index in 0..<count { word |= UInt64(bytes[index]) << (8 * UInt64(index)) }
            upper = uppercaseBits(word)
            hash = fold(hash ^ word, wordMultiplier)
        }
        let normalized = upper == 0 && (count == 0 || bytes[count - 1] != UInt8(ascii: "."))
        return (fold(hash, multiplier), normalized)
    }

    /// The 128-bit product of `a` and `b`, its halves xored: each bit of the result depends on
    /// every bit of `a`.
    @inline(__always)
    static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    /// A high bit set in each byte of `word` that is an ASCII uppercase letter (0x41-0x5A).
    /// Bytes of multi-byte UTF-8 characters (0x80 and up) never count.
    @inline(__always)
    static func uppercaseBits(_ word: UInt64) -> UInt64 {
        let ascii = word & 0x7F7F_7F7F_7F7F_7F7F
        let atLeastA = ascii &+ 0x3F3F_3F3F_3F3F_3F3F  // high bit set where a byte is 0x41 or more
        let pastZ = ascii &+ 0x2525_2525_2525_2525  // high bit set where a byte is 0x5B or more
        return atLeastA & ~pastZ & ~word & 0x8080_8080_8080_8080
    }
}

// Tencent DNSPod D+'s encrypted form, in one place for the provider and the lab: the query's `dn`
// and the whole response body travel as hex of DES-ECB or AES-CBC ciphertext.

/// Tencent's `alg` parameter: how `dn` and the answer are sealed (DNSPod SDK
/// `DesCipherSuite`, `AesCipherSuite`).
public enum TencentAlgorithm: String, Sendable, CaseIterable {
    /// DES/ECB/PKCS5Padding, key = the key string's UTF-8 bytes, output hex(ciphertext).
    case des
    /// AES/CBC/PKCS7Padding, key = the key string right-padded with '0' to 16 characters,
    /// a random 16-byte IV, output hex(IV) + hex(ciphertext).
    case aes

    /// The key bytes the SDK derives from the key string.
    public func keyBytes(_ key: String) -> [UInt8] {
        switch self {
        case .des: return Array(key.utf8)
        case .aes:
            let padded = key.count < 16 ? key + String(repeating: "0", count: 16 - key.count) : key
            return Array(padded.utf8)
        }
    }

    /// Seals `text` as lowercase hex.
    ///
    /// - Throws: `WireCipherError` for a key the cipher cannot use (or DES unavailable).
    public func seal(_ text: String, key: String) throws(WireCipherError) -> String {
        let bytes = keyBytes(key)
        switch self {
        case .des: return Hex.encode(try WireCipher.desECB(encrypt: true, key: bytes, Array(text.utf8)))
        case .aes:
            let iv = WireCipher.randomBytes(16)
            return Hex.encode(iv)
                + Hex.encode(try WireCipher.aesCBC(encrypt: true, key: bytes, iv: iv, Array(text.utf8)))
        }
    }

    /// Opens hex sealed by `seal`.
    ///
    /// - Throws: `WireCipherError.rejected` for text that is not hex or does not decrypt.
    public func open(_ hex: String, key: String) throws(WireCipherError) -> String {
        guard let sealed = Hex.decode(hex.trimmedWhitespace) else {
            throw .rejected("the answer is not hex")
        }
        let bytes = keyBytes(key)
        let plain: [UInt8]
        switch self {
        case .des: plain = try WireCipher.desECB(encrypt: false, key: bytes, sealed)
        case .aes:
            guard sealed.count > 16 else { throw .rejected("the ciphertext is shorter than its IV") }
            plain = try WireCipher.aesCBC(
                encrypt: false, key: bytes, iv: Array(sealed.prefix(16)), Array(sealed.dropFirst(16)))
        }
        guard let text = String(validating: plain, as: UTF8.self) else {
            throw .rejected("the answer decrypts to bytes that are not text")
        }
        return text
    }
}

extension String {
    fileprivate var trimmedWhitespace: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}

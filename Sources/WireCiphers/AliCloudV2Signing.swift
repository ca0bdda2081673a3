// Alibaba Cloud HTTPDNS v2's request signature, in one place for the provider that signs and the
// lab that checks: HMAC-SHA256 over the sorted signed parameters, keyed by the hex-decoded secret.

/// The `s` parameter of `/v2/d`, as the SDKs compute it.
public enum AliCloudV2Signing {
    /// The parameters that are signed, besides every `sdns-*` one (Android SDK `SignService`;
    /// iOS 3.4.2 signs whatever it sends of these, which is the same set).
    public static let signedKeys: Set<String> = ["id", "m", "dn", "cip", "q", "enc", "exp", "tags", "v"]

    /// Whether `key` takes part in the signature.
    public static func isSigned(_ key: String) -> Bool { signedKeys.contains(key) || key.hasPrefix("sdns-") }

    /// `k=v&k=v` over the non-empty signed parameters sorted by key, values as they are
    /// (not URL-encoded), which is what the HMAC covers.
    public static func content(_ parameters: [String: String]) -> String {
        parameters.filter { isSigned($0.key) && !$0.value.isEmpty }.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value)" }.joined(separator: "&")
    }

    /// Lowercase hex HMAC-SHA256 of `content(parameters)` under the secret's bytes.
    ///
    /// - Parameter secret: the secret as the console shows it: hex, decoded before use.
    /// - Returns: nil when the secret is not hex (the SDKs then send no signature at all).
    public static func signature(_ parameters: [String: String], secret: String) -> String? {
        guard let key = Hex.decode(secret), !key.isEmpty else { return nil }
        return Hex.encode(WireCipher.hmacSHA256(key: key, message: Array(content(parameters).utf8)))
    }
}

/// Alibaba Cloud HTTPDNS v2's `m` parameter and the response's `mode`: how `enc` and `data` are sealed.
public enum AliCloudV2Mode: Int, Sendable, CaseIterable {
    /// Parameters in the clear, `data` a JSON object.
    case plain = 0
    /// AES-CBC, PKCS#7, a random 16-byte IV in front of the ciphertext.
    case aesCBC = 1
    /// AES-GCM, a random 12-byte IV in front, the 16-byte tag behind.
    case aesGCM = 2

    /// Seals `plaintext` as IV ‖ ciphertext (‖ tag) under `key` (the hex-decoded AES key).
    ///
    /// - Throws: `WireCipherError` for a bad key.
    public func seal(_ plaintext: [UInt8], key: [UInt8]) throws(WireCipherError) -> [UInt8] {
        switch self {
        case .plain: return plaintext
        case .aesCBC:
            let iv = WireCipher.randomBytes(16)
            return iv + (try WireCipher.aesCBC(encrypt: true, key: key, iv: iv, plaintext))
        case .aesGCM:
            let iv = WireCipher.randomBytes(12)
            return iv + (try WireCipher.aesGCM(encrypt: true, key: key, iv: iv, plaintext))
        }
    }

    /// Opens IV ‖ ciphertext (‖ tag) sealed by `seal`.
    ///
    /// - Throws: `WireCipherError` for a bad key, a short input, or one that does not decrypt.
    public func open(_ sealed: [UInt8], key: [UInt8]) throws(WireCipherError) -> [UInt8] {
        switch self {
        case .plain: return sealed
        case .aesCBC:
            // iOS 3.4.2 refuses anything not longer than the IV; so do we.
            guard sealed.count > 16 else { throw .rejected("the ciphertext is shorter than its IV") }
            return try WireCipher.aesCBC(
                encrypt: false, key: key, iv: Array(sealed.prefix(16)), Array(sealed.dropFirst(16)))
        case .aesGCM:
            guard sealed.count > 12 else { throw .rejected("the ciphertext is shorter than its IV") }
            return try WireCipher.aesGCM(
                encrypt: false, key: key, iv: Array(sealed.prefix(12)), Array(sealed.dropFirst(12)))
        }
    }
}

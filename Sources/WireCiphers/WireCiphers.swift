// The ciphers HTTPDNS services put on the wire, through OpenSSL's EVP (AES-CBC, AES-GCM, and
// single DES from OpenSSL 3's legacy provider) and swift-crypto (HMAC-SHA256). No cipher by hand.
import COpenSSL
import Crypto
import FoundationEssentials

/// Why a cipher operation failed, in words.
public enum WireCipherError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key has a length the cipher cannot use.
    case badKey(String)
    /// The input was not what the cipher expects (length, hex, base64, authentication tag).
    case rejected(String)
    /// The cipher is not available in this OpenSSL (DES without the legacy provider).
    case unavailable(String)

    public var description: String {
        switch self {
        case .badKey(let why), .rejected(let why), .unavailable(let why): return why
        }
    }
}

/// Hex as the services write it: lowercase on output, either case on input.
public enum Hex {
    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of a hex string; nil for an odd length or a character that is not a hex digit.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}

/// The wire ciphers. Every function is pure: key, IV and input in, bytes out.
public enum WireCipher {
    /// HMAC-SHA256 of `message` under `key`.
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// Random bytes for an IV.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// AES-CBC with PKCS#7 padding; the key length (16, 24, 32) picks AES-128/192/256.
    ///
    /// - Throws: `WireCipherError.badKey` for another key length, `.rejected` when
    ///   decryption finds bad padding (almost always: the wrong key).
    public static func aesCBC(
        encrypt: Bool, key: [UInt8], iv: [UInt8], _ input: [UInt8]
    ) throws(WireCipherError)
        -> [UInt8]
    {
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = EVP_aes_128_cbc()
        case 24: cipher = EVP_aes_192_cbc()
        case 32: cipher = EVP_aes_256_cbc()
        default: throw .badKey("an AES key is 16, 24 or 32 bytes (32, 48 or 64 hex digits), not \(key.count)")
        }
        guard iv.count == 16 else { throw .rejected("AES-CBC needs a 16-byte IV") }
        return try run(cipher, encrypt: encrypt, key: key, iv: iv, input)
    }

    /// AES-GCM with a 12-byte IV and a 16-byte tag appended to the ciphertext.
    ///
    /// - Throws: `.badKey` for a key of the wrong length, `.rejected` when the tag does not
    ///   verify (the wrong key, or a ciphertext changed on the way).
    public static func aesGCM(
        encrypt: Bool, key: [UInt8], iv: [UInt8], _ input: [UInt8]
    ) throws(WireCipherError)
        -> [UInt8]
    {
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = EVP_aes_128_gcm()
        case 24: cipher = EVP_aes_192_gcm()
        case 32: cipher = EVP_aes_256_gcm()
        default: throw .badKey("an AES key is 16, 24 or 32 bytes (32, 48 or 64 hex digits), not \(key.count)")
        }
        guard iv.count == 12 else { throw .rejected("AES-GCM needs a 12-byte IV") }
        let tagLength = 16
        if !encrypt, input.count < tagLength { throw .rejected("the AES-GCM ciphertext is shorter than its tag") }
        guard let context = EVP_CIPHER_CTX_new() else { throw .unavailable("OpenSSL could not allocate a cipher") }
        defer { EVP_CIPHER_CTX_free(context) }
        let mode: Int32 = encrypt ? 1 : 0
        guard EVP_CipherInit_ex(context, cipher, nil, nil, nil, mode) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(iv.count), nil) == 1,
            EVP_CipherInit_ex(context, nil, nil, key, iv, mode) == 1
        else { throw .unavailable("OpenSSL refused AES-GCM: \(openSSLError())") }
        let body = encrypt ? input : Array(input.dropLast(tagLength))
        var tag = encrypt ? [UInt8](repeating: 0, count: tagLength) : Array(input.suffix(tagLength))
        var out = [UInt8](repeating: 0, count: body.count + 16)
        var written: Int32 = 0
        var finalLength: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard EVP_CipherUpdate(context, buffer.baseAddress, &written, body, Int32(body.count)) == 1 else {
                return false
            }
            if !encrypt {
                guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), &tag) == 1 else {
                    return false
                }
            }
            guard let base = buffer.baseAddress else { return false }
            return EVP_CipherFinal_ex(context, base + Int(written), &finalLength) == 1
        }
        guard ok else {
            ERR_clear_error()
            throw .rejected("the AES-GCM tag does not verify")
        }
        out.removeLast(out.count - Int(written + finalLength))
        if encrypt {
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tagLength), &tag) == 1 else {
                throw .unavailable("OpenSSL gave no AES-GCM tag: \(openSSLError())")
            }
            out += tag
        }
        return out
    }

    /// Single DES in ECB mode with PKCS#5 padding, as Tencent's SDK uses it
    /// (`DES/ECB/PKCS5Padding`). Java's DES takes the first 8 bytes of a longer key; so do we.
    ///
    /// - Throws: `.badKey` for a key under 8 bytes, `.unavailable` when OpenSSL's legacy
    ///   provider (where single DES lives since OpenSSL 3) cannot be loaded, `.rejected` for
    ///   bad padding on decryption.
    public static func desECB(encrypt: Bool, key: [UInt8], _ input: [UInt8]) throws(WireCipherError) -> [UInt8] {
        guard key.count >= 8 else { throw .badKey("a DES key is 8 bytes (8 characters), not \(key.count)") }
        let cipher = try LegacyProvider.shared.desECB()
        return try run(cipher, encrypt: encrypt, key: Array(key.prefix(8)), iv: [], input)
    }

    /// One EVP pass with the cipher's default (PKCS) padding.
    private static func run(
        _ cipher: OpaquePointer?, encrypt: Bool, key: [UInt8], iv: [UInt8], _ input: [UInt8]
    ) throws(WireCipherError) -> [UInt8] {
        guard let context = EVP_CIPHER_CTX_new() else { throw .unavailable("OpenSSL could not allocate a cipher") }
        defer { EVP_CIPHER_CTX_free(context) }
        let initialised =
            iv.isEmpty
            ? EVP_CipherInit_ex(context, cipher, nil, key, nil, encrypt ? 1 : 0)
            : EVP_CipherInit_ex(context, cipher, nil, key, iv, encrypt ? 1 : 0)
        guard initialised == 1 else { throw .unavailable("OpenSSL refused the cipher: \(openSSLError())") }
        var out = [UInt8](repeating: 0, count: input.count + 32)
        var written: Int32 = 0
        var finalLength: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard EVP_CipherUpdate(context, buffer.baseAddress, &written, input, Int32(input.count)) == 1 else {
                return false
            }
            guard let base = buffer.baseAddress else { return false }
            return EVP_CipherFinal_ex(context, base + Int(written), &finalLength) == 1
        }
        guard ok else {
            ERR_clear_error()
            throw .rejected(
                encrypt ? "OpenSSL could not encrypt" : "the ciphertext does not decrypt (bad padding or length)")
        }
        out.removeLast(out.count - Int(written + finalLength))
        return out
    }

    private static func openSSLError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no detail" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        ERR_clear_error()
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// OpenSSL 3 keeps single DES in its legacy provider, which is not loaded by default. It is
/// loaded here, once, into a library context of our own, so libcurl's TLS keeps the
/// process-wide default context untouched.
private final class LegacyProvider: @unchecked Sendable {
    static let shared = LegacyProvider()

    /// nil when the provider could not be loaded; then `failure` says why.
    private let context: OpaquePointer?
    private let cipher: OpaquePointer?
    private let failure: String?

    private init() {
        guard let context = OSSL_LIB_CTX_new() else {
            (self.context, cipher, failure) = (nil, nil, "OpenSSL could not make a library context")
            return
        }
        let legacy = OSSL_PROVIDER_load(context, "legacy")
        let standard = OSSL_PROVIDER_load(context, "default")
        guard legacy != nil, standard != nil, let des = EVP_CIPHER_fetch(context, "DES-ECB", nil) else {
            ERR_clear_error()
            (self.context, cipher, failure) = (
                context, nil,
                "single DES needs OpenSSL 3's legacy provider (legacy.so in the OpenSSL modules directory, "
                    + "OPENSSL_MODULES to point elsewhere), which could not be loaded"
            )
            return
        }
        (self.context, cipher, failure) = (context, des, nil)
    }

    func desECB() throws(WireCipherError) -> OpaquePointer {
        guard let cipher else { throw .unavailable(failure ?? "single DES is unavailable") }
        return cipher
    }
}

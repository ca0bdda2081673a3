// Alibaba Cloud HTTPDNS's legacy request signatures (`/sign_d`, `/sign_resolve`, a signed `/ss`), in
// one place for the provider that signs and the lab that checks: lowercase hex MD5 of "x-secret-t".
import Crypto
import FoundationEssentials

/// The `s` parameter of `/{account}/sign_d`, `/sign_resolve` and `/ss`, as the SDKs compute it.
public enum AliCloudLegacySigning {
    /// Lowercase hex of md5("host-secret-expiry").
    ///
    /// - Parameters:
    ///   - host: the name asked for, as it goes in `host=`; for `/sign_resolve` the comma-joined
    ///     names (C SDK 2.2.5, src/hdns_sign.c).
    ///   - secret: the signing secret.
    ///   - expiry: the `t` parameter, Unix seconds as text.
    public static func signature(host: String, secret: String, expiry: String) -> String {
        md5Hex("\(host)-\(secret)-\(expiry)")
    }

    /// Lowercase hex of md5("nonce-secret-time"), the signature of a service list request
    /// (C SDK 2.2.5, src/hdns_scheduler.c: `n` a 12-hex nonce, `t` the time of signing).
    ///
    /// - Parameters:
    ///   - nonce: the `n` parameter.
    ///   - secret: the signing secret.
    ///   - time: the `t` parameter, Unix seconds as text.
    public static func serviceListSignature(nonce: String, secret: String, time: String) -> String {
        md5Hex("\(nonce)-\(secret)-\(time)")
    }

    private static func md5Hex(_ text: String) -> String { Hex.encode(Insecure.MD5.hash(data: Data(text.utf8))) }
}

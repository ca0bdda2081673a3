// Alibaba Cloud HTTPDNS's legacy request signature (`/sign_d`), in one place for the provider that
// signs and the lab that checks: lowercase hex MD5 of "host-secret-expiry".
import Crypto
import Foundation

/// The `s` parameter of `/{account}/sign_d`, as the SDKs compute it.
public enum AliCloudLegacySigning {
    /// Lowercase hex of md5("host-secret-expiry").
    ///
    /// - Parameters:
    ///   - host: the name asked for, as it goes in `host=`.
    ///   - secret: the signing secret.
    ///   - expiry: the `t` parameter, Unix seconds as text.
    public static func signature(host: String, secret: String, expiry: String) -> String {
        Hex.encode(Insecure.MD5.hash(data: Data("\(host)-\(secret)-\(expiry)".utf8)))
    }
}

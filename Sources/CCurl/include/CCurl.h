// CCurl: the thin C shim between Swift and libcurl. Swift cannot call C variadics, so every
// curl_easy_setopt / curl_easy_getinfo use goes through one typed wrapper here (prefix ccurl_),
// as swift-corelibs-foundation's CFURLSessionInterface does (the multi loop sets no multi option).
// It also holds the OpenSSL hook that checks the server certificate against the original
// host name inside the TLS handshake, so nothing of a request reaches a server that fails it.
#ifndef CCURL_H
#define CCURL_H

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

// MARK: - curl_easy_setopt, one wrapper per argument type

CURLcode ccurl_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode ccurl_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value);
/// For string options (libcurl copies strings it is given, except CURLOPT_POSTFIELDS).
CURLcode ccurl_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
/// For object options: curl_slist *, CURLU *, user data pointers.
CURLcode ccurl_easy_setopt_ptr(CURL *easy, CURLoption option, void *value);
/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this signature.
CURLcode ccurl_easy_setopt_write_function(CURL *easy, CURLoption option, curl_write_callback callback);
CURLcode ccurl_easy_setopt_debug_function(CURL *easy, curl_debug_callback callback);

// MARK: - curl_easy_getinfo, one wrapper per result type

CURLcode ccurl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode ccurl_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value);
CURLcode ccurl_easy_getinfo_double(CURL *easy, CURLINFO info, double *value);
CURLcode ccurl_easy_getinfo_string(CURL *easy, CURLINFO info, char **value);

// MARK: - TLS check hook

/// One certificate as the server sent it, DER encoded.
typedef struct ccurl_der {
    unsigned char *bytes;
    size_t length;
} ccurl_der;

/// What the TLS hook saw during one handshake. Owned by the caller of
/// ccurl_tls_check_new; valid until ccurl_tls_check_free.
typedef struct ccurl_tls_check {
    /// The name the certificate must match (the original host), or NULL to leave the
    /// name check to libcurl. An IP literal is matched against the certificate's IP
    /// addresses; one trailing dot on a name is ignored.
    char *expected_name;
    /// Whether the hook ran (a TLS handshake reached the certificate stage).
    int ran;
    /// X509_V_OK (0) or the OpenSSL verify error (X509_V_ERR_*), e.g. 62 hostname mismatch.
    long verify_error;
    /// Depth in the chain at which verify_error was raised (0 = the server's own certificate).
    int error_depth;
    /// The chain the server presented, leaf first. At most 8 certificates are kept.
    ccurl_der chain[8];
    int chain_count;
    /// 1 when the ClientHello carried a server name (SNI); the name is in `sni`.
    int sni_sent;
    /// The SNI host name as OpenSSL had it for this connection ("" when none was sent).
    char sni[256];
    /// The trust store handed to the handshake (see ccurl_tls_check_use_trust), or NULL to
    /// leave trust to libcurl. Private to the shim.
    void *trust;
    /// CLOCK_MONOTONIC nanoseconds (the clock DispatchTime's uptime reads on Linux) when libcurl
    /// set up the TLS handshake, the TCP connection made; 0 when no handshake began. libcurl 7.88
    /// stamps its connect time only once TLS is done too, so this is a refused handshake's.
    uint64_t started_ns;
    /// The protocol version the handshake agreed, as OpenSSL names it ("TLSv1.3", a string of
    /// OpenSSL's own); NULL unless the handshake completed.
    const char *version;
} ccurl_tls_check;

/// NULL when memory runs out (the caller must then fail the transfer, not run it unchecked).
ccurl_tls_check *ccurl_tls_check_new(const char *expected_name);
void ccurl_tls_check_free(ccurl_tls_check *check);
/// Installs the hook on an easy handle (CURLOPT_SSL_CTX_FUNCTION/DATA). Returns
/// CURLE_NOT_BUILT_IN when libcurl's TLS backend is not OpenSSL.
CURLcode ccurl_easy_install_tls_check(CURL *easy, ccurl_tls_check *check);
/// Makes the handshake trust the CAs of `file` and of `directory` (either may be NULL) through a
/// store parsed once per pair and shared, instead of libcurl parsing the file per connection.
/// Returns 1 when it will (the caller then clears CURLOPT_CAINFO and CURLOPT_CAPATH so libcurl
/// loads nothing), 0 when the file does not load (libcurl then loads it and reports the error).
int ccurl_tls_check_use_trust(ccurl_tls_check *check, const char *file, const char *directory);
/// OpenSSL's text for a verify error ("hostname mismatch", "certificate has expired", ...).
const char *ccurl_verify_error_string(long error);

/// The OpenSSL verify results (X509_V_*) Swift names, exported as values so no Swift code
/// carries OpenSSL's numbers (this header does not include OpenSSL's own).
extern const long ccurl_x509_v_ok;
extern const long ccurl_x509_v_err_unable_to_get_issuer_cert;
extern const long ccurl_x509_v_err_cert_not_yet_valid;
extern const long ccurl_x509_v_err_cert_has_expired;
extern const long ccurl_x509_v_err_depth_zero_self_signed_cert;
extern const long ccurl_x509_v_err_self_signed_cert_in_chain;
extern const long ccurl_x509_v_err_unable_to_get_issuer_cert_locally;
extern const long ccurl_x509_v_err_unable_to_verify_leaf_signature;
extern const long ccurl_x509_v_err_cert_untrusted;
extern const long ccurl_x509_v_err_hostname_mismatch;

// MARK: - libcurl facts

/// curl_version_info(CURLVERSION_NOW): the macro does not import into Swift.
curl_version_info_data *ccurl_version_info(void);
/// 1 when the linked libcurl's TLS backend is OpenSSL (the TLS hook needs it).
int ccurl_tls_backend_is_openssl(void);

#endif

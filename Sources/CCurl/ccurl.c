// CCurl: typed wrappers over libcurl's variadic calls, and the OpenSSL certificate hook with the
// trust stores it shares. Logic stays in Swift; this file adapts calling conventions, reads OpenSSL
// state and keeps the one OpenSSL object that outlives a transfer (a parsed trust store).
#include "CCurl.h"

#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// OpenSSL frees its global state from an atexit handler unless told not to, and a process that
// exits (a command returning, `resolve --cached` leaving its background request behind) does not
// stop the transfer loop's thread first: a transfer still in a handshake or reading an error then
// runs on freed OpenSSL state and the exit becomes a SIGSEGV (seen under `make tsan`:
// ERR_lib_error_string on a freed lock, from curl_multi_perform). The first OpenSSL
// initialisation decides, so this runs when the program is loaded, before libcurl or anything
// else touches OpenSSL; the operating system reclaims the memory at exit anyway.
__attribute__((constructor)) static void ccurl_keep_openssl_until_exit(void) {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

CURLcode ccurl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_ptr(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode ccurl_easy_setopt_write_function(CURL *easy, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}
CURLcode ccurl_easy_setopt_debug_function(CURL *easy, curl_debug_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, callback);
}

CURLcode ccurl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode ccurl_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode ccurl_easy_getinfo_double(CURL *easy, CURLINFO info, double *value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode ccurl_easy_getinfo_string(CURL *easy, CURLINFO info, char **value) {
    return curl_easy_getinfo(easy, info, value);
}

// MARK: - TLS check hook

ccurl_tls_check *ccurl_tls_check_new(const char *expected_name) {
    ccurl_tls_check *check = calloc(1, sizeof(ccurl_tls_check));
    if (check && expected_name) {
        check->expected_name = strdup(expected_name);
        // Fail closed: a check without its name would let any certificate's name pass.
        if (!check->expected_name) {
            free(check);
            return NULL;
        }
    }
    return check;
}

static void ccurl_tls_check_reset_chain(ccurl_tls_check *check) {
    for (int i = 0; i < check->chain_count; i++) {
        OPENSSL_free(check->chain[i].bytes);
        check->chain[i].bytes = NULL;
        check->chain[i].length = 0;
    }
    check->chain_count = 0;
}

void ccurl_tls_check_free(ccurl_tls_check *check) {
    if (!check) return;
    ccurl_tls_check_reset_chain(check);
    X509_STORE_free(check->trust);
    free(check->expected_name);
    free(check);
}

// MARK: - Trust stores, parsed once

// libcurl keeps a parsed CA store between connections only when no CA directory is set, and
// Debian's libcurl has one by default (/etc/ssl/certs): it parsed the whole CA bundle (about
// 140 certificates) again for every connection, some 25 ms of CPU per HTTPS request. The hook
// hands each connection a store parsed once per (file, directory) instead; the directory is
// looked up lazily by hash, as libcurl does. Kept 24 hours, libcurl's CA cache default, so a
// long-running agent sees an updated bundle.
#define CCURL_TRUST_SLOTS 8
#define CCURL_TRUST_SECONDS (24 * 60 * 60)

typedef struct ccurl_trust_slot {
    char *file;
    char *directory;
    X509_STORE *store;
    time_t loaded;
} ccurl_trust_slot;

static pthread_mutex_t ccurl_trust_lock = PTHREAD_MUTEX_INITIALIZER;
static ccurl_trust_slot ccurl_trust_slots[CCURL_TRUST_SLOTS];

static int ccurl_same(const char *a, const char *b) {
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

// A new store for the file and directory, with the flags libcurl sets on its own; NULL when
// the file does not load (libcurl then loads it itself and reports the error as it always has).
static X509_STORE *ccurl_trust_load(const char *file, const char *directory) {
    X509_STORE *store = X509_STORE_new();
    if (!store) return NULL;
    if ((file && X509_STORE_load_file(store, file) != 1) ||
        (directory && X509_STORE_load_path(store, directory) != 1)) {
        X509_STORE_free(store);
        return NULL;
    }
    // As libcurl: intermediates in the trust store are trust anchors too.
    X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN);
    return store;
}

int ccurl_tls_check_use_trust(ccurl_tls_check *check, const char *file, const char *directory) {
    if (!check || (!file && !directory)) return 0;
    time_t now = time(NULL);
    X509_STORE *store = NULL;
    pthread_mutex_lock(&ccurl_trust_lock);
    ccurl_trust_slot *free_slot = NULL;
    ccurl_trust_slot *oldest = &ccurl_trust_slots[0];
    for (int i = 0; i < CCURL_TRUST_SLOTS; i++) {
        ccurl_trust_slot *slot = &ccurl_trust_slots[i];
        if (!slot->store) {
            if (!free_slot) free_slot = slot;
            continue;
        }
        if (slot->loaded < oldest->loaded) oldest = slot;
        if (ccurl_same(slot->file, file) && ccurl_same(slot->directory, directory)) {
            if (now - slot->loaded < CCURL_TRUST_SECONDS && X509_STORE_up_ref(slot->store) == 1) {
                store = slot->store;
            } else {
                free_slot = slot;  // expired: reloaded into the same slot below
            }
            break;
        }
    }
    if (!store) {
        store = ccurl_trust_load(file, directory);
        ccurl_trust_slot *slot = free_slot ? free_slot : oldest;
        char *file_copy = file ? strdup(file) : NULL;
        char *directory_copy = directory ? strdup(directory) : NULL;
        int copied = (!file || file_copy) && (!directory || directory_copy);
        if (store && copied && X509_STORE_up_ref(store) == 1) {
            X509_STORE_free(slot->store);
            free(slot->file);
            free(slot->directory);
            slot->file = file_copy;
            slot->directory = directory_copy;
            slot->store = store;
            slot->loaded = now;
        } else {
            free(file_copy);
            free(directory_copy);
        }
    }
    pthread_mutex_unlock(&ccurl_trust_lock);
    if (!store) return 0;
    X509_STORE_free(check->trust);
    check->trust = store;
    return 1;
}

static void ccurl_tls_check_keep(ccurl_tls_check *check, X509 *cert) {
    if (!cert || check->chain_count >= 8) return;
    unsigned char *der = NULL;
    int length = i2d_X509(cert, &der);
    if (length <= 0) return;
    check->chain[check->chain_count].bytes = der;
    check->chain[check->chain_count].length = (size_t)length;
    check->chain_count++;
}

// Replaces OpenSSL's chain verification for this handshake: runs the standard verification
// (which, with the expected name set on the context's parameters, includes the name check)
// and records what the server presented, whatever the result.
static int ccurl_verify_certificate(X509_STORE_CTX *store, void *arg) {
    ccurl_tls_check *check = arg;
    int ok = X509_verify_cert(store);
    check->ran = 1;
    check->verify_error = X509_STORE_CTX_get_error(store);
    check->error_depth = X509_STORE_CTX_get_error_depth(store);
    // Record the SNI the client actually put in its ClientHello (libcurl sends none for an
    // IP literal), so a trace says what happened rather than what we expected.
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    const char *server_name = ssl ? SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) : NULL;
    check->sni_sent = server_name != NULL && server_name[0] != 0;
    check->sni[0] = 0;
    if (check->sni_sent) {
        strncpy(check->sni, server_name, sizeof(check->sni) - 1);
        check->sni[sizeof(check->sni) - 1] = 0;
    }
    ccurl_tls_check_reset_chain(check);
    X509 *leaf = X509_STORE_CTX_get0_cert(store);
    ccurl_tls_check_keep(check, leaf);
    STACK_OF(X509) *presented = X509_STORE_CTX_get0_untrusted(store);
    for (int i = 0; presented && i < sk_X509_num(presented); i++) {
        X509 *cert = sk_X509_value(presented, i);
        if (cert != leaf && X509_cmp(cert, leaf) != 0) ccurl_tls_check_keep(check, cert);
    }
    return ok > 0 ? 1 : 0;
}

// MARK: - What the handshake agreed, without libcurl's verbose log

// The context's slot for its check: OpenSSL's info callback has no argument of its own, and
// libcurl 7.88 makes a context per connection, so the context leads back to the transfer.
static int ccurl_check_index = -1;
static pthread_once_t ccurl_check_index_once = PTHREAD_ONCE_INIT;

static void ccurl_check_index_make(void) {
    ccurl_check_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

// Keeps the version a completed handshake agreed: the one libcurl's verbose log names in
// "SSL connection using TLSv1.3 / ...", read where it is decided instead of from that line.
static void ccurl_tls_info(const SSL *ssl, int where, int value) {
    (void)value;
    if (!(where & SSL_CB_HANDSHAKE_DONE) || ccurl_check_index < 0) return;
    ccurl_tls_check *check = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ccurl_check_index);
    if (check) check->version = SSL_get_version(ssl);
}

static CURLcode ccurl_ssl_ctx_function(CURL *easy, void *ssl_ctx, void *userptr) {
    (void)easy;
    SSL_CTX *ctx = ssl_ctx;
    ccurl_tls_check *check = userptr;
    // libcurl calls this as it sets up the handshake, once the TCP connection is made.
    if (check->started_ns == 0) {
        struct timespec now;
        if (clock_gettime(CLOCK_MONOTONIC, &now) == 0)
            check->started_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    }
    // The check belongs to the transfer that made this connection, and libcurl may keep the
    // connection for a later transfer after that one has freed it: no renegotiation, so no second
    // handshake can reach the verify and info callbacks below through a check that is gone (a
    // server's HelloRequest is refused; TLS 1.3 has no renegotiation, and its session tickets and
    // key updates call neither).
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    pthread_once(&ccurl_check_index_once, ccurl_check_index_make);
    if (ccurl_check_index >= 0 && SSL_CTX_set_ex_data(ctx, ccurl_check_index, check) == 1)
        SSL_CTX_set_info_callback(ctx, ccurl_tls_info);
    if (check->expected_name) {
        X509_VERIFY_PARAM *param = SSL_CTX_get0_param(ctx);
        const char *name = check->expected_name;
        unsigned char address[16];
        if (inet_pton(AF_INET, name, address) == 1 || inet_pton(AF_INET6, name, address) == 1) {
            // An IP literal is matched against the certificate's IP addresses: the host
            // check compares DNS names only and would call a certificate for the IP a mismatch.
            if (X509_VERIFY_PARAM_set1_ip_asc(param, name) != 1) return CURLE_SSL_CERTPROBLEM;
        } else {
            // One trailing dot names the same host (example.com. is example.com); certificates
            // never carry it, so it is left out of the comparison.
            size_t length = strlen(name);
            if (length > 1 && name[length - 1] == '.') length--;
            X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
            if (X509_VERIFY_PARAM_set1_host(param, name, length) != 1) return CURLE_SSL_CERTPROBLEM;
        }
    }
    // The store chains are verified against (OpenSSL's verify store, which libcurl never
    // touches): libcurl may set its own cert store after this callback, and caches that one
    // per multi handle, so replacing the cert store would hand one transfer's CAs to the next.
    if (check->trust && SSL_CTX_set1_verify_cert_store(ctx, check->trust) != 1) return CURLE_SSL_CACERT_BADFILE;
    SSL_CTX_set_cert_verify_callback(ctx, ccurl_verify_certificate, check);
    return CURLE_OK;
}

CURLcode ccurl_easy_install_tls_check(CURL *easy, ccurl_tls_check *check) {
    if (!ccurl_tls_backend_is_openssl()) return CURLE_NOT_BUILT_IN;
    CURLcode code = curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, ccurl_ssl_ctx_function);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(easy, CURLOPT_SSL_CTX_DATA, check);
}

const char *ccurl_verify_error_string(long error) {
    return X509_verify_cert_error_string(error);
}

const long ccurl_x509_v_ok = X509_V_OK;
const long ccurl_x509_v_err_unable_to_get_issuer_cert = X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT;
const long ccurl_x509_v_err_cert_not_yet_valid = X509_V_ERR_CERT_NOT_YET_VALID;
const long ccurl_x509_v_err_cert_has_expired = X509_V_ERR_CERT_HAS_EXPIRED;
const long ccurl_x509_v_err_depth_zero_self_signed_cert = X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT;
const long ccurl_x509_v_err_self_signed_cert_in_chain = X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN;
const long ccurl_x509_v_err_unable_to_get_issuer_cert_locally = X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY;
const long ccurl_x509_v_err_unable_to_verify_leaf_signature = X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE;
const long ccurl_x509_v_err_cert_untrusted = X509_V_ERR_CERT_UNTRUSTED;
const long ccurl_x509_v_err_hostname_mismatch = X509_V_ERR_HOSTNAME_MISMATCH;

curl_version_info_data *ccurl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

int ccurl_tls_backend_is_openssl(void) {
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info && info->ssl_version && strncmp(info->ssl_version, "OpenSSL", 7) == 0;
}

// OpenSSL, the TLS library under libcurl4-openssl-dev: the shim hooks certificate checks here,
// and the HTTPDNS wire ciphers (AES-CBC/GCM, DES-ECB from the legacy provider) go through EVP.
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/provider.h>

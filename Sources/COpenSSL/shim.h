// OpenSSL, the TLS library under libcurl4-openssl-dev: the shim hooks certificate checks here.
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

// libcurl's public headers, found through pkg-config (libcurl4-openssl-dev); only the CCurl shim
// and CurlTransport see them.
#include <curl/curl.h>

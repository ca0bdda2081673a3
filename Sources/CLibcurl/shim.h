// libcurl's public headers, found through pkg-config (libcurl4-openssl-dev).
#include <curl/curl.h>

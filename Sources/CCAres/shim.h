// c-ares (1.18 and later) with static inline wrappers for the header macros Swift cannot import.
// Prefix: cares_. DNS messages are built and parsed by c-ares itself; these only read its header bits.
#ifndef CCARES_SHIM_H
#define CCARES_SHIM_H
#include <ares.h>
#include <ares_dns.h>
#include <ares_nameser.h>
#include <netinet/in.h>

/// Bytes in a DNS message header (RFC 1035 4.1.1).
static inline int cares_header_size(void) { return NS_HFIXEDSZ; }
/// The message id of a DNS message of at least cares_header_size() bytes.
static inline unsigned short cares_header_id(const unsigned char *h) { return DNS_HEADER_QID(h); }
/// The response code (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED...).
static inline int cares_header_rcode(const unsigned char *h) { return DNS_HEADER_RCODE(h); }
/// Whether the TC (truncated) bit is set.
static inline int cares_header_tc(const unsigned char *h) { return DNS_HEADER_TC(h); }
/// Whether the QR bit says this is a response.
static inline int cares_header_qr(const unsigned char *h) { return DNS_HEADER_QR(h); }
/// The question count.
static inline int cares_header_qdcount(const unsigned char *h) { return DNS_HEADER_QDCOUNT(h); }

/// How many sockets ares_getsock can report.
static inline int cares_getsock_max(void) { return ARES_GETSOCK_MAXNUM; }
/// Whether socket `i` of an ares_getsock bitmask waits to read.
static inline int cares_getsock_readable(int bits, int i) { return ARES_GETSOCK_READABLE(bits, i) ? 1 : 0; }
/// Whether socket `i` of an ares_getsock bitmask waits to write.
static inline int cares_getsock_writable(int bits, int i) { return ARES_GETSOCK_WRITABLE(bits, i) ? 1 : 0; }
#endif

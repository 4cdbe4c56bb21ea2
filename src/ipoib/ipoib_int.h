/* Internals of the IPoIB interface (ipoib.h), shared by the files of src/ipoib
 * and by the fuzz targets of its parsers. */
#ifndef IMC_IPOIB_INT_H
#define IMC_IPOIB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/ipoib.h"
#include "util/hash.h"
#include "util/list.h"

/* Endpoints, neighbours and groups are util/hash.h entries keyed by a
 * seeded hash of their GID or address (ipo_gid_hash); creation and
 * waiting order are util/list.h lists. */

/* ---- packets waiting to be sent ---- */

struct ipo_pkt {
	struct ipo_pkt *next;
	size_t len;
	uint8_t kind;     /* what it counts as when sent */
	uint8_t data[];   /* IPoIB header + packet */
};

struct ipo_queue {
	struct ipo_pkt *head, *tail;
	size_t n;
};

/* ---- ND messages (RFC 4861 4.3, 4.4) ---- */

enum {
	IPO_ICMP6_NS = 135,
	IPO_ICMP6_NA = 136,
	IPO_NA_ROUTER = 0x80,
	IPO_NA_SOLICITED = 0x40,
	IPO_NA_OVERRIDE = 0x20,
	IPO_IP6_HDR_LEN = 40,
	IPO_IP4_HDR_LEN = 20,
	IPO_NS_LEN = 24,     /* ICMPv6 header, reserved/flags, target */
	IPO_PROTO_ICMP6 = 58,
};

/* An NS or NA as ND validation leaves it (RFC 4861 7.1.1, 7.1.2). */
struct ipo_nd {
	uint8_t type;                  /* IPO_ICMP6_NS or IPO_ICMP6_NA */
	uint8_t flags;                 /* NA: R, S, O */
	uint8_t src[16], dst[16];      /* IPv6 header addresses */
	uint8_t target[16];
	bool has_lladdr;               /* NS: source, NA: target option */
	struct imc_ipoib_hwaddr lladdr;
};

/* Parses an IPv6 packet (no link header) holding an NS or NA and
 * validates it as RFC 4861 7.1 asks: hop limit 255, checksum, code 0,
 * length, target not multicast, options of non-zero length, NS from ::
 * only to a solicited-node group and without a source option, NA to a
 * group without the Solicited flag. A link-layer option whose length is
 * not IPoIB's (3) is ignored. Returns 0, -ENOENT when the packet is IPv6
 * but not an NS/NA (deliver it), or -EINVAL (drop it). */
int ipo_nd_parse(const uint8_t *pkt, size_t len, struct ipo_nd *out);

/* Writes an NS or NA with its link-layer option (when has_lladdr) into
 * buf: IPv6 header (hop limit 255) and ICMPv6 with checksum. Returns the
 * length, or -ENOSPC. */
int ipo_nd_build(const struct ipo_nd *nd, uint8_t *buf, size_t len);

/* The IP header parser and the ICMPv6 checksum the interface uses are
 * public: imc_ip_parse(), imc_icmp6_csum() (ipoib.h). */

#endif

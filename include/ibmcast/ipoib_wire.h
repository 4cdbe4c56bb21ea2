/* IP over InfiniBand (RFC 4391): multicast GID mappings, the encapsulation
 * header, the 20-byte hardware address, ARP and the IPv6 ND link-layer
 * address option.
 *
 * Conventions of mad.h: pack() writes the wire form into a buffer of at
 * least the wire size and returns the size, -ENOSPC when the buffer is too
 * short, -EINVAL when a field does not fit its wire width. unpack() returns
 * the number of bytes consumed (input may go on beyond it), -EMSGSIZE when
 * the input is too short, -EINVAL when a field has a value the format
 * forbids; it never reads past len and leaves *out untouched on error.
 * IPv4 addresses are uint32_t in host order, IPv6 addresses 16 bytes in
 * network order.
 */
#ifndef IBMCAST_IPOIB_WIRE_H
#define IBMCAST_IPOIB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	IMC_IPOIB_HDR_LEN = 4,
	IMC_IPOIB_HWADDR_LEN = 20,
	IMC_IPOIB_ARP_LEN = 56,
	IMC_IPOIB_ND_OPT_LEN = 24,
	/* "80:00:00:48:fe:80:...": 20 two-digit groups, 19 colons, NUL */
	IMC_IPOIB_HWADDR_STRLEN = 60,
};

/* Multicast GIDs (RFC 4391 4). */
enum {
	IMC_IPOIB_DEFAULT_SCOPE = 2,      /* link-local */
	IMC_PKEY_FULL_MEMBER = 0x8000,
};

/* The broadcast group of a partition, ff1S:401b:PPPP::ffff:ffff, where
 * PPPP is the P_Key with the full-member bit set (so 0x7fff and 0xffff
 * name the same group) and S the scope (0-15; 2 unless the SM says
 * otherwise). -EINVAL for scope > 15 or a P_Key whose low 15 bits are 0
 * (IBA 10.9.1.2: 0x0000 and 0x8000 are invalid P_Keys). */
int imc_ipoib_bcast_mgid(uint16_t pkey, unsigned scope, struct imc_gid *out);

/* IPv4 multicast group (224.0.0.0/4) -> ff1S:401b:PPPP:0000:0000:0000 and
 * the low 28 bits of the group in bytes 12-15 (RFC 4391 4; Linux
 * ip_ib_mc_map). -EINVAL for a group outside 224.0.0.0/4, and as
 * imc_ipoib_bcast_mgid() for pkey and scope. */
int imc_ipoib_mgid_from_ipv4(uint32_t group, uint16_t pkey, unsigned scope,
			     struct imc_gid *out);

/* IPv6 multicast group (ff00::/8) -> ff1S:601b:PPPP and the low 80 bits
 * (bytes 6-15) of the group (RFC 4391 4; Linux ipv6_ib_mc_map). -EINVAL
 * for a group outside ff00::/8, and as imc_ipoib_bcast_mgid(). */
int imc_ipoib_mgid_from_ipv6(const uint8_t group[16], uint16_t pkey,
			     unsigned scope, struct imc_gid *out);

/* The P_Key field (bytes 4-5) of an MGID with an IPoIB signature; -EINVAL
 * for any other GID. */
int imc_ipoib_mgid_pkey(const struct imc_gid *mgid, uint16_t *pkey);

/* True when mgid is a broadcast group: flags 1, signature 0x401B, bytes
 * 6-11 zero, bytes 12-15 all ones (any scope, any P_Key field). */
bool imc_ipoib_mgid_is_bcast(const struct imc_gid *mgid);

/* The broadcast group of the partition and scope an IPoIB MGID belongs to
 * (same byte 1 low nibble and P_Key field). The group an IPoIB interface
 * must have joined first, and whose parameters its other groups take
 * (RFC 4391 4). -EINVAL if mgid has no IPoIB signature. */
int imc_ipoib_bcast_of(const struct imc_gid *mgid, struct imc_gid *bcast);

/* Solicited-node multicast address of an IPv6 unicast or anycast address
 * (RFC 4291 2.7.1): ff02::1:ff00:0/104 plus its low 24 bits. -EINVAL for a
 * multicast (ff00::/8) or the unspecified (::) address. */
int imc_ipv6_solicited_node(const uint8_t addr[16], uint8_t out[16]);

/* Encapsulation header (RFC 4391 6): EtherType, then 16 reserved bits
 * that are sent as zero and ignored on receive. */
enum {
	IMC_ETHERTYPE_IPV4 = 0x0800,
	IMC_ETHERTYPE_ARP = 0x0806,
	IMC_ETHERTYPE_IPV6 = 0x86DD,
};

struct imc_ipoib_hdr {
	uint16_t type;
};

int imc_ipoib_hdr_pack(const struct imc_ipoib_hdr *h, uint8_t *buf, size_t len);
int imc_ipoib_hdr_unpack(struct imc_ipoib_hdr *h, const uint8_t *buf, size_t len);

/* Hardware address (RFC 4391 9): one byte of flags, the 24-bit QPN,
 * the 16-byte port GID. Of the flags byte RFC 4755 defines 0x80 (the
 * sender accepts connected-mode RC connections) and 0x40 (UC); the other
 * bits are reserved. The byte is kept as received so that forwarding and
 * printing preserve it. */
enum {
	IMC_IPOIB_HW_RC = 0x80,
	IMC_IPOIB_HW_UC = 0x40,
	IMC_IPOIB_QPN_MULTICAST = 0xFFFFFF, /* with an MGID: a group address */
};

struct imc_ipoib_hwaddr {
	uint8_t flags;
	uint32_t qpn;                      /* 24 bits */
	struct imc_gid gid;
};

/* pack: -EINVAL if qpn does not fit 24 bits. */
int imc_ipoib_hwaddr_pack(const struct imc_ipoib_hwaddr *a, uint8_t *buf,
			  size_t len);
int imc_ipoib_hwaddr_unpack(struct imc_ipoib_hwaddr *a, const uint8_t *buf,
			    size_t len);

/* The group address Linux and RFC 4391 use for an MGID: flags 0, QPN
 * 0xFFFFFF, the MGID. */
void imc_ipoib_hwaddr_mcast(const struct imc_gid *mgid,
			    struct imc_ipoib_hwaddr *out);

/* Text form as `ip link` prints an IPoIB address: 20 bytes as two lower-case
 * hex digits each, separated by ':'. format() returns the length written
 * (59), or -EINVAL if qpn does not fit 24 bits. parse() takes exactly that
 * form (hex digits in either case) and returns 0, or -EINVAL without
 * touching *out. */
int imc_ipoib_hwaddr_format(const struct imc_ipoib_hwaddr *a,
			    char buf[IMC_IPOIB_HWADDR_STRLEN]);
int imc_ipoib_hwaddr_parse(const char *s, struct imc_ipoib_hwaddr *out);

/* ARP (RFC 826 as RFC 4391 9 applies it): hardware type 32, protocol type
 * 0x0800, hardware length 20, protocol length 4, opcode, sender hardware
 * and IPv4 address, target hardware and IPv4 address: 56 bytes. unpack
 * answers -EINVAL when hardware type, protocol type, hardware length or
 * protocol length differ from those values. The opcode is returned as it
 * is; what to do with one other than request or reply is the caller's
 * decision (RFC 826 says to ignore it). */
enum {
	IMC_ARP_HTYPE_INFINIBAND = 32,
	IMC_ARP_OP_REQUEST = 1,
	IMC_ARP_OP_REPLY = 2,
};

struct imc_ipoib_arp {
	uint16_t op;
	struct imc_ipoib_hwaddr sha;
	uint32_t spa;
	struct imc_ipoib_hwaddr tha;
	uint32_t tpa;
};

int imc_ipoib_arp_pack(const struct imc_ipoib_arp *p, uint8_t *buf, size_t len);
int imc_ipoib_arp_unpack(struct imc_ipoib_arp *p, const uint8_t *buf, size_t len);

/* IPv6 ND source/target link-layer address option for IPoIB (RFC 4391
 * 9.1.1, RFC 4861 4.6.1): Type 1 or 2, Length 3 (8-byte units), two
 * reserved bytes (sent as zero, ignored on receive), the 20-byte hardware
 * address: 24 bytes. unpack answers -EINVAL for another type or a length
 * other than 3 (RFC 4861 4.6: a length of 0 makes the packet invalid),
 * -EMSGSIZE when the buffer holds less than the option. */
enum {
	IMC_ND_OPT_SOURCE_LLADDR = 1,
	IMC_ND_OPT_TARGET_LLADDR = 2,
};

struct imc_ipoib_nd_opt {
	uint8_t type;
	struct imc_ipoib_hwaddr addr;
};

int imc_ipoib_nd_opt_pack(const struct imc_ipoib_nd_opt *o, uint8_t *buf,
			  size_t len);
int imc_ipoib_nd_opt_unpack(struct imc_ipoib_nd_opt *o, const uint8_t *buf,
			    size_t len);

#ifdef __cplusplus
}
#endif
#endif

/* IPv4, IPv6, UDP, ICMP and ICMPv6 headers as an IP host on an IPoIB
 * interface builds and reads them: the Internet checksum (RFC 1071) with
 * its pseudo headers (RFC 768, RFC 8200 8.1), a view of a packet's IP
 * header, echo requests and replies (RFC 792, RFC 4443 4.1/4.2) and UDP
 * datagrams. Byte buffers only: no sockets, no state.
 */
#ifndef IBMCAST_IP_H
#define IBMCAST_IP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	IMC_IP4_HDR_LEN = 20,        /* without options */
	IMC_IP6_HDR_LEN = 40,
	IMC_L4_HDR_LEN = 8,          /* UDP, ICMP echo, ICMPv6 echo */
	IMC_IPPROTO_ICMP = 1,
	IMC_IPPROTO_UDP = 17,
	IMC_IPPROTO_ICMPV6 = 58,
	IMC_IP_TTL = 64,             /* hop limit of what is built here */
};

/* One's complement sum (RFC 1071) of len bytes added to acc, not yet
 * folded nor complemented: sums of several pieces chain. An odd len pads
 * with a zero byte. */
uint32_t imc_inet_sum(uint32_t acc, const void *p, size_t len);

/* The folded, complemented sum: the checksum of the bytes (acc from
 * imc_inet_sum(), or 0). A message whose checksum field is right gives
 * 0. */
uint16_t imc_inet_csum(uint32_t acc, const void *p, size_t len);

/* The checksum of an upper-layer message of len bytes with its pseudo
 * header: IPv4 (version 4, 4-byte addresses; RFC 768) or IPv6 (16-byte
 * addresses; RFC 8200 8.1). */
uint16_t imc_inet_l4_csum(unsigned version, const uint8_t *src,
			  const uint8_t *dst, uint8_t proto,
			  const void *msg, size_t len);

/* A packet's IP header as read by imc_ip_view(); src and dst point into
 * the packet (4 or 16 bytes). */
struct imc_ip_view {
	unsigned version;            /* 4 or 6 */
	size_t hdr_len;              /* IPv4 IHL * 4, IPv6 40 */
	size_t len;                  /* total length, <= the packet's */
	uint8_t proto;               /* IPv4 protocol, IPv6 next header */
	const uint8_t *src, *dst;
	const uint8_t *l4;           /* after the header */
	size_t l4_len;
};

/* Reads the IP header of pkt: version, header length and total length
 * must fit in len. Returns 0 or -EINVAL. */
int imc_ip_view(const uint8_t *pkt, size_t len, struct imc_ip_view *out);

/* Where and what a built packet goes: version 4 or 6, addresses of 4 or
 * 16 bytes, the IPv4 identification. */
struct imc_ip_spec {
	unsigned version;
	const uint8_t *src, *dst;
	uint16_t id;
};

/* An ICMP (v4) or ICMPv6 (v6) echo request (reply when reply is true)
 * with identifier id, sequence seq and size data bytes (byte k of the
 * message is k for k >= 8) into buf of cap bytes. Returns the packet's
 * length, -EINVAL (bad spec) or -ENOSPC. */
int imc_ip_echo_build(uint8_t *buf, size_t cap, const struct imc_ip_spec *s,
		      bool reply, uint16_t id, uint16_t seq, size_t size);

/* A UDP datagram (RFC 768) from sport to dport carrying len bytes of
 * payload (NULL: byte k of the datagram is k for k >= 8), its checksum
 * filled in. Returns the packet's length, -EINVAL or -ENOSPC. */
int imc_ip_udp_build(uint8_t *buf, size_t cap, const struct imc_ip_spec *s,
		     uint16_t sport, uint16_t dport, const void *payload,
		     size_t len);

/* Turns the echo request pkt (len bytes, as imc_ip_view() read it) into
 * its reply in place: addresses swapped, hop limit IMC_IP_TTL, type
 * changed, checksums made again. Returns 0, or -EINVAL when pkt is not
 * an echo request. */
int imc_ip_echo_answer(uint8_t *pkt, size_t len);

/* The echo message of the packet v views: 0 with *request (ICMP type 8
 * or ICMPv6 128, else a reply: 0 or 129), *id and *seq, or -ENOENT when
 * it is no echo. */
int imc_ip_echo_read(const struct imc_ip_view *v, bool *request,
		     uint16_t *id, uint16_t *seq);

#ifdef __cplusplus
}
#endif
#endif

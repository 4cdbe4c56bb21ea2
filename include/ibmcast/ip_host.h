/* An IP host behind an IPoIB interface (ipoib.h): the addresses it owns,
 * answers to ICMP and ICMPv6 echo requests to them (RFC 792, RFC 4443
 * 4.2), echo requests and UDP datagrams it sends (ip.h builds them), and
 * counts of what it receives, in all and per multicast group.
 *
 * The interface's deliver op hands each packet to imc_ip_host_deliver();
 * answers go out from the loop, because an interface op may not call
 * back into the interface (ipoib.h). Everything runs from the loop.
 */
#ifndef IBMCAST_IP_HOST_H
#define IBMCAST_IP_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/ip.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/loop.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_ip_host;

#define IMC_IP_HOST_ADDRS_MAX 16

/* What the host tells its owner; each may be NULL. They run inside
 * imc_ip_host_deliver(); they may send (imc_ip_host_ping(),
 * imc_ip_host_udp()) but not destroy the host. */
struct imc_ip_host_ops {
	/* Every IP packet delivered, before the host looks at it. */
	void (*packet)(void *ctx, const struct imc_ipoib_packet *p,
		       const struct imc_ip_view *v);
	/* An echo reply delivered (unicast). */
	void (*echo_reply)(void *ctx, const struct imc_ip_view *v,
			   uint16_t id, uint16_t seq);
	/* A UDP datagram (unicast to us, or to a group). */
	void (*udp)(void *ctx, const struct imc_ip_view *v, uint16_t sport,
		    uint16_t dport, const uint8_t *payload, size_t len);
	/* The interface's carrier, as its owner passes it on with
	 * imc_ip_host_carrier(). */
	void (*carrier)(void *ctx, bool up);
	void *ctx;
};

struct imc_ip_host_stats {
	uint64_t received;           /* IP packets delivered */
	uint64_t received_mcast;     /* of them, to a multicast group */
	uint64_t ping_replies;       /* echo replies received */
	uint64_t ping_answered;      /* echo requests answered */
	uint64_t send_errors;        /* imc_ipoib_xmit() refused */
};

/* A host on the loop, sending through ifc (which must outlive it; the
 * caller creates the interface with a deliver op that calls
 * imc_ip_host_deliver()). ifc may be NULL until imc_ip_host_bind().
 * ops NULL: none. Returns 0, -EINVAL or -ENOMEM. */
int imc_ip_host_create(struct imc_loop *loop, struct imc_ipoib *ifc,
		       const struct imc_ip_host_ops *ops,
		       struct imc_ip_host **out);
void imc_ip_host_bind(struct imc_ip_host *h, struct imc_ipoib *ifc);

/* Drops the answers not yet sent and frees h. NULL is a no-op. */
void imc_ip_host_destroy(struct imc_ip_host *h);

/* A packet the interface delivered: counted; an echo request to one of
 * our addresses is answered (from the loop), an echo reply and a UDP
 * datagram go to the ops. */
void imc_ip_host_deliver(struct imc_ip_host *h,
			 const struct imc_ipoib_packet *p);

/* Passes the interface's carrier on to the ops. */
void imc_ip_host_carrier(struct imc_ip_host *h, bool up);

/* Adds the address to the interface and to the host. Returns 0, -EEXIST
 * (already ours; nothing changes), -ENOSPC (IMC_IP_HOST_ADDRS_MAX) or
 * the interface's error. */
int imc_ip_host_addr_add(struct imc_ip_host *h, const struct imc_ip_addr *a,
			 unsigned plen);
/* 0 or -ENOENT. */
int imc_ip_host_addr_del(struct imc_ip_host *h, const struct imc_ip_addr *a);
unsigned imc_ip_host_naddrs(const struct imc_ip_host *h);
/* The k-th address (k < imc_ip_host_naddrs()) and its prefix length. */
const struct imc_ip_addr *imc_ip_host_addr(const struct imc_ip_host *h,
					   unsigned k, unsigned *plen);
/* All addresses at once: returns their number, *addrs and *plens (may
 * be NULL) the arrays, valid until the next add or delete. */
unsigned imc_ip_host_addrs(const struct imc_ip_host *h,
			   const struct imc_ip_addr **addrs,
			   const unsigned **plens);
bool imc_ip_host_owns(const struct imc_ip_host *h,
		      const struct imc_ip_addr *a);
/* The address to send to dst from: one on dst's prefix, else the first
 * of its family; NULL when there is none. */
const struct imc_ip_addr *imc_ip_host_src_for(const struct imc_ip_host *h,
					      const struct imc_ip_addr *dst);

/* Whether d is on a's prefix of plen bits (same family). */
bool imc_ip_addr_on_prefix(const struct imc_ip_addr *a, unsigned plen,
			   const struct imc_ip_addr *d);

/* An echo request of size data bytes (src NULL: imc_ip_host_src_for()),
 * or a UDP datagram (payload NULL: a byte pattern) sent at once. Returns
 * 0, -EADDRNOTAVAIL (no source address), -EINVAL, -ENOSPC (too long)
 * or the interface's error. */
int imc_ip_host_ping(struct imc_ip_host *h, const struct imc_ip_addr *src,
		     const struct imc_ip_addr *dst, uint16_t id, uint16_t seq,
		     size_t size);
int imc_ip_host_udp(struct imc_ip_host *h, const struct imc_ip_addr *src,
		    const struct imc_ip_addr *dst, uint16_t sport,
		    uint16_t dport, const void *payload, size_t len);

void imc_ip_host_stats(const struct imc_ip_host *h,
		       struct imc_ip_host_stats *out);
/* Packets received to group g (0 for a group never heard). */
uint64_t imc_ip_host_group_received(const struct imc_ip_host *h,
				    const struct imc_ip_addr *g);

#ifdef __cplusplus
}
#endif
#endif

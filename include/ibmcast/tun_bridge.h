/* A TUN interface bridged to an IPoIB interface: the kernel's IP stack on
 * one side, ibmcast's IPoIB (RFC 4391 datagram mode) on the other.
 *
 *   kernel --(TUN read)--> imc_ipoib_xmit()    --> UD sends
 *   kernel <--(TUN write)-- deliver op of the IPoIB interface <-- UD receives
 *
 * The TUN carries bare IP packets (IFF_NO_PI); the IPoIB interface adds
 * and strips the 4-byte IPoIB header, resolves neighbours itself (ARP with
 * hardware type 32, ND with the IPoIB link-layer option) and queues what
 * waits for them, so the kernel side needs no link layer: the TUN is a
 * NOARP interface and IPv6 addresses on it skip duplicate address
 * detection. The TUN's MTU is the IPoIB MTU (the broadcast group's IB
 * MTU - 4, RFC 4391 3) and its carrier follows the IPoIB carrier.
 *
 * The bridge does not own the IPoIB interface: whoever created it routes
 * its deliver and carrier ops to imc_tun_bridge_deliver() and
 * imc_tun_bridge_carrier() (the ops cannot be changed after creation).
 *
 * IP multicast follows the kernel: every 100 ms the bridge reads the
 * groups the kernel holds on the TUN (imc_tun_mcast_list: what its
 * sockets joined with IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP, and its own
 * 224.0.0.1, ff02::1 and solicited-node groups) and listens to each on
 * the IPoIB interface, a FullMember join of the group's MGID (RFC 4391
 * 4); a group the kernel left is unlistened (the SA is told once no
 * listener of the port is left). Interface-local groups (ff01::/16) stay
 * off the wire. Destroying the bridge unlistens them all.
 */
#ifndef IBMCAST_TUN_BRIDGE_H
#define IBMCAST_TUN_BRIDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/loop.h"
#include "ibmcast/tun.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_tun_bridge;

/* Creates a TUN interface from cfg (cfg->mtu 0: the IPoIB MTU) on loop
 * (real time), brings it up with the carrier of ifc, and bridges it to
 * ifc, which must outlive the bridge. Addresses are the caller's to add
 * (imc_tun_bridge_addr_add). Returns 0 or the errors of imc_tun_create()
 * and imc_tun_set_up(). Freed with imc_tun_bridge_destroy(). */
int imc_tun_bridge_create(struct imc_loop *loop, struct imc_ipoib *ifc,
			  const struct imc_tun_config *cfg,
			  struct imc_tun_bridge **out);

/* Removes the TUN interface and frees the bridge; the IPoIB interface is
 * left as it is. After it returns the bridge calls nothing, and the
 * IPoIB ops must no longer call into it. NULL is a no-op. */
void imc_tun_bridge_destroy(struct imc_tun_bridge *b);

struct imc_tun *imc_tun_bridge_tun(const struct imc_tun_bridge *b);
struct imc_ipoib *imc_tun_bridge_ipoib(const struct imc_tun_bridge *b);

/* Adds an address to the kernel's side (the TUN); the IPoIB interface
 * answers ARP/ND for the same address once its owner added it there.
 * Returns as imc_tun_addr_add(). */
int imc_tun_bridge_addr_add(struct imc_tun_bridge *b,
			    const struct imc_ip_addr *a, unsigned prefix_len);

/* For the IPoIB interface's ops: hands a delivered IP packet to the
 * kernel; follows a carrier change (and a new IPoIB MTU after a join). */
void imc_tun_bridge_deliver(struct imc_tun_bridge *b,
			    const struct imc_ipoib_packet *p);
void imc_tun_bridge_carrier(struct imc_tun_bridge *b, bool up);

/* What the bridge did for a group of the kernel's. */
enum imc_tun_bridge_mcast {
	IMC_TUN_BRIDGE_MCAST_LISTEN,  /* the kernel joined: listened to */
	IMC_TUN_BRIDGE_MCAST_JOINED,  /* the SA answered the join */
	IMC_TUN_BRIDGE_MCAST_LEAVE,   /* the kernel left: unlistened */
};

const char *imc_tun_bridge_mcast_str(enum imc_tun_bridge_mcast ev);

/* group: the IP group; mgid: what it maps to. Valid during the call. The
 * callback must not destroy the bridge. */
typedef void imc_tun_bridge_mcast_fn(void *ctx, enum imc_tun_bridge_mcast ev,
				     const struct imc_ip_addr *group,
				     const struct imc_gid *mgid);

/* Observes the bridge's multicast changes from now on (fn NULL: none),
 * from the loop. */
void imc_tun_bridge_on_mcast(struct imc_tun_bridge *b,
			     imc_tun_bridge_mcast_fn *fn, void *ctx);

enum imc_tun_bridge_drop {
	IMC_TUN_BRIDGE_DROP_DOWN,       /* IPoIB -ENETDOWN */
	IMC_TUN_BRIDGE_DROP_MTU,        /* -EMSGSIZE */
	IMC_TUN_BRIDGE_DROP_NO_ROUTE,   /* -EHOSTUNREACH */
	IMC_TUN_BRIDGE_DROP_QUEUE,      /* -ENOBUFS */
	IMC_TUN_BRIDGE_DROP_OTHER,      /* -EINVAL, -ENOMEM, send errors */
	IMC_TUN_BRIDGE_DROP_KERNEL,     /* the TUN write was refused */
	IMC_TUN_BRIDGE_DROP__COUNT
};

const char *imc_tun_bridge_drop_str(enum imc_tun_bridge_drop d);

struct imc_tun_bridge_stats {
	uint64_t to_ipoib, to_ipoib_bytes;   /* accepted by imc_ipoib_xmit */
	uint64_t to_kernel, to_kernel_bytes; /* written to the TUN */
	uint64_t drops[IMC_TUN_BRIDGE_DROP__COUNT];
	uint64_t carrier_changes;
	uint64_t mcast_listens;              /* groups the kernel joined */
	uint64_t mcast_leaves;               /* groups it left */
	uint64_t mcast_errors;               /* lists or listens that failed */
};

void imc_tun_bridge_get_stats(const struct imc_tun_bridge *b,
			      struct imc_tun_bridge_stats *st);

#ifdef __cplusplus
}
#endif
#endif

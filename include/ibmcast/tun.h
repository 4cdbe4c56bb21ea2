/* Linux TUN interfaces and network namespaces: where the kernel's IP stack
 * meets ibmcast (`ibmcast up` bridges a TUN interface to an IPoIB one).
 *
 * A TUN interface here is a layer-3 device (IFF_TUN | IFF_NO_PI): each
 * read of its fd is one IPv4 or IPv6 packet the kernel routed to it, each
 * write one packet the kernel receives from it. The fd is non-blocking and
 * watched by a real-time imc_loop; packets reach the owner through a
 * receive callback from the loop. Closing the fd (imc_tun_destroy) removes
 * the interface: a TUN that is not persistent lives only as long as its fd.
 *
 * Configuration goes through rtnetlink (libmnl): MTU, administrative state
 * and IPv4/IPv6 addresses, in the namespace the interface lives in. The
 * carrier is set with TUNSETCARRIER (Linux 5.0), so that the kernel sees
 * the link go down when the IPoIB interface behind it loses its carrier.
 *
 * Namespaces are named as iproute2 names them, by a bind mount of the
 * namespace on /run/netns/NAME, so that `ip netns exec NAME` and
 * `ip -n NAME` reach them. A namespace made by imc_netns_create() is
 * removed by imc_netns_destroy(); one the process could not remove (it was
 * killed) is removed by the next imc_netns_reap().
 *
 * All of this needs CAP_NET_ADMIN (and CAP_SYS_ADMIN for namespaces):
 * without it calls return -EPERM (or -EACCES for /dev/net/tun).
 * Nothing here is thread-safe; namespaces are entered and left by the
 * calling thread (setns), so create TUNs from one thread at a time.
 */
#ifndef IBMCAST_TUN_H
#define IBMCAST_TUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- network namespaces ---- */

enum {
	IMC_NETNS_NAME_MAX = 64,  /* bytes of a name, NUL included */
};

struct imc_netns;

/* Creates the network namespace NAME as `ip netns add NAME` does, with its
 * loopback interface up. Name: 1-63 bytes of [A-Za-z0-9._-], not "." or
 * "..". Returns 0, -EEXIST when /run/netns/NAME exists, -EINVAL for a bad
 * name, -EPERM without the privilege, or another negative errno. The
 * caller frees it with imc_netns_destroy(), which removes it. */
int imc_netns_create(const char *name, struct imc_netns **out);

/* Opens the existing namespace NAME (/run/netns/NAME); destroy then only
 * closes it. -ENOENT when there is none. */
int imc_netns_open(const char *name, struct imc_netns **out);

/* Closes ns and, when imc_netns_create() made it, removes it: the name is
 * gone at once, the namespace itself (and any interface in it) when the
 * last process inside it leaves. NULL is a no-op. */
void imc_netns_destroy(struct imc_netns *ns);

const char *imc_netns_name(const struct imc_netns *ns);

/* Removes the namespaces imc_netns_create() made in processes that died
 * without imc_netns_destroy(): each holds a lock (flock) on
 * /run/ibmcast/netns/NAME.lock while it lives, and a lock nobody holds
 * marks a namespace left behind. Only names starting with prefix are
 * considered. removed (may be NULL) is called with each name removed.
 * Returns how many were removed, or a negative errno. */
int imc_netns_reap(const char *prefix,
		   void (*removed)(const char *name, void *ctx), void *ctx);

/* ---- TUN interfaces ---- */

enum {
	/* Bytes before the packet handed to the receive callback that the
	 * callback may write (an encapsulation header prepended in place). */
	IMC_TUN_HEADROOM = 64,
	IMC_TUN_IFNAME_MAX = 16,  /* IFNAMSIZ, NUL included */
	IMC_TUN_READ_BATCH = 64,  /* default packets read per readiness */
};

struct imc_tun;

/* A packet the kernel sent out of the interface: pkt[0..len) is an IPv4 or
 * IPv6 packet (the version nibble tells which; the kernel sends nothing
 * else through an IFF_NO_PI TUN). The IMC_TUN_HEADROOM bytes before pkt
 * are the callback's to write; pkt is valid during the callback only. The
 * callback may destroy the TUN. */
typedef void imc_tun_recv_fn(struct imc_tun *tun, uint8_t *pkt, size_t len,
			     void *ctx);

struct imc_tun_config {
	/* Interface name, or a template with one "%d" the kernel fills in
	 * with the first free number. NULL: "imc%d". */
	const char *name;
	/* Namespace the interface is created in; NULL: the caller's. The
	 * namespace must outlive the TUN. */
	struct imc_netns *netns;
	/* MTU to set at creation; 0 keeps the kernel's default (1500). */
	unsigned mtu;
	/* Packets read per readiness callback before the loop serves other
	 * fds and timers; 0: IMC_TUN_READ_BATCH. */
	unsigned read_batch;
};

/* Creates a TUN interface, administratively down, carrier on, and starts
 * watching its fd on loop (a real-time loop: -EOPNOTSUPP otherwise). recv
 * runs from the loop, never inside this call. Returns 0, -EACCES or -EPERM
 * without the privilege, -ENOENT when /dev/net/tun is missing, -EEXIST
 * when the name is taken, or another negative errno. The caller frees it
 * with imc_tun_destroy(). */
int imc_tun_create(struct imc_loop *loop, const struct imc_tun_config *cfg,
		   imc_tun_recv_fn *recv, void *ctx, struct imc_tun **out);

/* Stops watching, closes the fd (the kernel removes the interface and its
 * addresses and routes) and frees tun. No callback after it returns. May
 * be called from tun's own receive callback. NULL is a no-op. */
void imc_tun_destroy(struct imc_tun *tun);

/* The interface's name as the kernel gave it, its index and MTU, in its
 * namespace. */
const char *imc_tun_name(const struct imc_tun *tun);
unsigned imc_tun_ifindex(const struct imc_tun *tun);
unsigned imc_tun_mtu(const struct imc_tun *tun);

/* Sets the MTU (68..65535 for IPv4; IPv6 needs 1280). Returns 0 or the
 * negative errno of the kernel's answer. */
int imc_tun_set_mtu(struct imc_tun *tun, unsigned mtu);

/* Adds an address with its prefix: family AF_INET (addr: 4 bytes) or
 * AF_INET6 (16 bytes), network byte order. The kernel adds the route to
 * the prefix through the interface. IPv6 addresses skip duplicate address
 * detection (IFA_F_NODAD): a TUN has no link layer to probe, and the
 * IPoIB side resolves neighbours itself. On an interface that is up with
 * carrier the call returns once the kernel accepts packets for an IPv6
 * address (its local route comes a moment after the request, even without
 * DAD; waits up to 2 s, then -ETIMEDOUT). -EINVAL for a bad family or
 * prefix length, -EEXIST when the address is there already. */
int imc_tun_addr_add(struct imc_tun *tun, int family, const void *addr,
		     unsigned prefix_len);

/* Administrative state (ip link set up/down). Bringing it up with carrier
 * waits, as imc_tun_addr_add() does, for its IPv6 addresses to work. */
int imc_tun_set_up(struct imc_tun *tun, bool up);
bool imc_tun_is_up(const struct imc_tun *tun);

/* Carrier (the kernel's view of the link, as `ip link` prints NO-CARRIER).
 * Returns 0, or -EOPNOTSUPP on kernels before 5.0 (the carrier then stays
 * on). */
int imc_tun_set_carrier(struct imc_tun *tun, bool on);

/* Hands one IPv4 or IPv6 packet to the kernel, as received on the
 * interface. Returns 0 or a negative errno (the packet is then dropped and
 * counted: -EIO while the interface is down, -EINVAL for a packet the
 * kernel refuses). Never blocks. */
int imc_tun_write(struct imc_tun *tun, const void *pkt, size_t len);

/* One IP multicast group joined on the interface: family AF_INET (addr:
 * 4 bytes) or AF_INET6 (16), network byte order, valid during the call. */
typedef void imc_tun_mcast_fn(void *ctx, int family, const uint8_t *addr);

/* Calls fn for each multicast group the kernel holds on the interface
 * now, IPv4 first: those its sockets joined (IP_ADD_MEMBERSHIP,
 * IPV6_JOIN_GROUP) and its own (224.0.0.1, ff02::1, ff01::1, the
 * solicited-node groups of its IPv6 addresses), as `ip maddr show dev`
 * lists them. The kernel's membership state, not its IGMP/MLD reports
 * (which a querier suppresses and a lost packet hides). Returns 0 or a
 * negative errno (fn may have been called for part of the list). */
int imc_tun_mcast_list(struct imc_tun *tun, imc_tun_mcast_fn *fn, void *ctx);

struct imc_tun_stats {
	uint64_t read_packets, read_bytes;     /* kernel -> us */
	uint64_t write_packets, write_bytes;   /* us -> kernel */
	uint64_t write_errors;                 /* writes the kernel refused */
	uint64_t read_errors;                  /* reads that failed */
	uint64_t wakeups;                      /* readiness callbacks */
};

void imc_tun_get_stats(const struct imc_tun *tun, struct imc_tun_stats *st);

#ifdef __cplusplus
}
#endif
#endif

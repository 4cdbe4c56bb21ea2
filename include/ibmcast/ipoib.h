/* An IP over InfiniBand interface, datagram mode (RFC 4391, RFC 4392),
 * that never asks the SA for a PathRecord.
 *
 * One interface per (port, P_Key): a UD QP (the caller's), the Q_Key of
 * the partition's broadcast group (set on the QP through an op once the
 * join answer gives it), the hardware address (flags, QPN, port
 * GID; RFC 4391 9) and an MTU of the broadcast group's IB MTU - 4.
 *
 *  - Bring-up: imc_ipoib_up() joins ff1S:401b:PPPP::ffff:ffff FullMember
 *    through the join tracker with the UD QP as the member's QP. Carrier
 *    is up only once that join has succeeded and its AV is set; it goes
 *    down when the tracker reports the port down or a re-join, and up
 *    again after the re-join.
 *  - Endpoints are keyed by GID; IPv4 and IPv6 neighbours map to them.
 *    A unicast AV is fabricated from the endpoint's GID and the LID and
 *    QPN learned from ARP/ND or from a received packet (GRH SGID, SLID,
 *    source QPN), with SL, rate, TClass, FlowLabel and HopLimit of the
 *    broadcast group's record. The GRH is always sent, so that the peer
 *    finds its endpoint by GID and can create it from the packet. A
 *    receive from an unknown GID creates its endpoint. A multicast AV
 *    comes only from a join answer, never from fabrication.
 *  - Address resolution: ARP with hardware type 32 (RFC 4391 9,
 *    RFC 826) for IPv4, neighbour discovery with the IPoIB link-layer
 *    address option (RFC 4861, RFC 4391 9.1.1) for IPv6; the interface
 *    answers requests for its own addresses and joins the all-nodes and
 *    solicited-node groups (RFC 4291 2.7.1).
 *  - Sends wait, in order, for an unresolved neighbour, an endpoint whose
 *    AV cannot be made yet, or an unjoined group; queues are bounded per
 *    endpoint, per group and in total, and drops are counted by reason.
 *    An answer to a packet received before the group's join callback set
 *    the broadcast AV (the QP is attached first) waits for that AV.
 *  - IP multicast: listening joins the group's MGID FullMember; sending
 *    to a group not listened to joins SendOnlyFullMember (or, when the SA
 *    lacks that capability, SendOnlyNonMember as Linux does), left after
 *    an idle timeout.
 *
 * Sans-I/O: the interface sends through ops, runs its timers on the
 * loop, and hears the port only through the join tracker's member
 * events. It never reads the clock.
 *
 * Ops and their calling context:
 *  - send and deliver may run inside imc_ipoib_xmit(), imc_ipoib_recv()
 *    and from the loop (the data path is synchronous);
 *  - carrier runs from the loop only, never inside an API call;
 *  - no op may call back into the interface (defer through the loop,
 *    e.g. a host answering a ping from deliver arms a timer);
 *  - after imc_ipoib_destroy() returns, no op runs.
 */
#ifndef IBMCAST_IPOIB_H
#define IBMCAST_IPOIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/ipoib_wire.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_ipoib;

/* ---- IP addresses ---- */

enum imc_ip_family {
	IMC_IPV4 = 4,
	IMC_IPV6 = 6,
};

/* "ffff:...:255.255.255.255/128" and NUL fit. */
#define IMC_IP_ADDR_STRLEN 56

/* One IPv4 or IPv6 address. Zero the struct before filling it so that
 * equal addresses compare equal byte for byte. */
struct imc_ip_addr {
	uint8_t family;        /* IMC_IPV4 or IMC_IPV6 */
	uint32_t v4;           /* host order (IMC_IPV4) */
	uint8_t v6[16];        /* network order (IMC_IPV6) */
};

void imc_ip_addr_v4(uint32_t addr, struct imc_ip_addr *out);
void imc_ip_addr_v6(const uint8_t addr[16], struct imc_ip_addr *out);

/* "10.0.0.1", "fe80::1", optionally followed by "/LEN". prefix_len NULL:
 * a "/LEN" is an error; else it gets LEN, or 32/128 when absent. Returns
 * 0 or -EINVAL (nothing written). */
int imc_ip_addr_parse(const char *s, struct imc_ip_addr *out,
		      unsigned *prefix_len);

/* Writes the text form (RFC 5952 for IPv6); returns its length or
 * -EINVAL for a bad family. */
int imc_ip_addr_format(const struct imc_ip_addr *a,
		       char buf[IMC_IP_ADDR_STRLEN]);

bool imc_ip_addr_is_multicast(const struct imc_ip_addr *a);

/* Orders addresses: IPv4 before IPv6, then by address (host order for
 * IPv4, bytes for IPv6); 0 when equal. */
int imc_ip_addr_cmp(const struct imc_ip_addr *a, const struct imc_ip_addr *b);

/* The Internet checksum (RFC 1071) of an ICMPv6 message with its pseudo
 * header (RFC 8200 8.1). */
uint16_t imc_icmp6_csum(const uint8_t src[16], const uint8_t dst[16],
			const uint8_t *msg, size_t len);

/* The few fields of an IP header an interface routes on. */
struct imc_ip_hdr {
	uint8_t family;                /* IMC_IPV4 or IMC_IPV6 */
	size_t len;                    /* IP total length (<= packet) */
	struct imc_ip_addr src, dst;
	uint8_t proto;                 /* IPv4 protocol, IPv6 next header */
};

/* Parses the IP header of a packet (no link header): version, header
 * length, total length within len. Returns 0 or -EINVAL. */
int imc_ip_parse(const uint8_t *pkt, size_t len, struct imc_ip_hdr *out);

/* ---- what the interface asks of its owner ---- */

/* The address vector of one UD send (IBA 10.2.1 as ibv_ah_attr). The GRH
 * is always present. */
struct imc_ipoib_av {
	uint16_t dlid;
	uint8_t sl;
	uint8_t rate;              /* SA rate code, 0: the port's rate */
	struct imc_gid dgid;
	uint8_t sgid_index;
	uint8_t tclass;
	uint32_t flow_label;       /* 20 bits */
	uint8_t hop_limit;
};

/* A packet for the host's IP stack: an IPv4 or IPv6 packet without a
 * link header. Valid during the call. */
struct imc_ipoib_packet {
	uint16_t ethertype;        /* IMC_ETHERTYPE_IPV4 or _IPV6 */
	const uint8_t *data;
	size_t len;
	bool multicast;            /* arrived on a multicast group */
	struct imc_gid src_gid;    /* the sender's GID (zero without a GRH) */
};

struct imc_ipoib_ops {
	/* One UD datagram to remote_qpn (0xFFFFFF for a group) with qkey;
	 * data is the IPoIB header and packet, valid during the call.
	 * Returns 0 or a negative errno (counted, IMC_IPOIB_DROP_SEND). */
	int (*send)(void *ctx, const struct imc_ipoib_av *av,
		    uint32_t remote_qpn, uint32_t qkey, const uint8_t *data,
		    size_t len);
	/* An IP packet for the host. */
	void (*deliver)(void *ctx, const struct imc_ipoib_packet *p);
	/* Carrier (link) changed; from the loop. May be NULL. */
	void (*carrier)(void *ctx, bool up);
	/* Sets the UD QP's Q_Key (the Modify QP verb) to the broadcast
	 * group's (RFC 4391 4: every IPoIB datagram of the partition
	 * carries it), each time that join is answered, from the loop,
	 * before carrier goes up. Returns 0 or a negative errno, which
	 * fails the join (retried as a failed join). NULL: the owner keeps
	 * the QP's Q_Key itself. */
	int (*set_qkey)(void *ctx, uint32_t qkey);
	void *ctx;
};

/* ---- configuration ---- */

struct imc_ipoib_config {
	struct imc_gid port_gid;       /* the port's GID (hardware address) */
	uint8_t sgid_index;            /* its index in the GID table */
	uint32_t qpn;                  /* the UD QP's number, 24 bits */
	uint16_t pkey;                 /* partition; bit 15 as in the table */
	uint8_t scope;                 /* broadcast group scope, 2 */
	unsigned port_mtu;             /* IB MTU code of the port */
	uint8_t hw_flags;              /* hardware address flags; 0 (UD only) */
	/* Send queues, in packets. */
	size_t queue_endpoint;         /* per neighbour or endpoint */
	size_t queue_group;            /* per unjoined multicast group */
	size_t queue_total;            /* all queues together */
	/* ARP and ND (RFC 4861 10: RETRANS_TIMER 1 s, MAX_MULTICAST_SOLICIT
	 * 3). A neighbour not confirmed for neigh_expiry is forgotten; an
	 * endpoint no neighbour maps to is forgotten after the same idle
	 * time. */
	imc_time_t resolve_timeout;    /* between solicitations */
	unsigned resolve_retries;      /* solicitations after the first */
	imc_time_t neigh_expiry;
	/* A send-only group not sent to for this long is left. */
	imc_time_t sendonly_idle;
	/* The SA sets ClassPortInfo CapabilityMask2 bit 12
	 * (SendOnlyFullMember supported). */
	bool sa_sendonly_full;
	/* After a failed broadcast join, try again after join_retry,
	 * doubling up to join_retry_max. */
	imc_time_t join_retry;
	imc_time_t join_retry_max;
	/* Seeds the hash of the GID and address tables, which the network
	 * fills (e.g. imc_rng_next()); 0 is valid. Nothing that reaches an
	 * op or a listing depends on it. */
	uint64_t hash_seed;
};

/* Defaults: P_Key 0xffff, scope 2, MTU 2048, flags 0, queues 16 per
 * endpoint, 64 per group, 4096 in total, ARP/ND every 1 s with 3 retries,
 * expiry 60 s, send-only idle 10 s, SendOnlyFullMember supported, join
 * retry 1 s up to 16 s, hash seed 0. port_gid and qpn are zero: set
 * them. */
void imc_ipoib_config_init(struct imc_ipoib_config *cfg);

/* ---- life cycle ---- */

/* An interface on loop joining through mcast (not owned; both must
 * outlive it). qp is what the tracker's ops get as the member's QP (the
 * caller's UD QP whose number is cfg->qpn). cfg and ops are copied; ops
 * must have send and deliver. cfg is required: it names the port's GID
 * and the QP, which have no default (imc_ipoib_config_init() fills the
 * rest). The interface starts DOWN. Returns 0,
 * -EINVAL (NULL argument, missing op, bad P_Key, scope, MTU, QPN or
 * queue bound) or -ENOMEM. */
int imc_ipoib_create(struct imc_loop *loop, struct imc_mcast *mcast, void *qp,
		     const struct imc_ipoib_config *cfg,
		     const struct imc_ipoib_ops *ops, struct imc_ipoib **out);

/* Leaves every group (the tracker tells the SA), drops what is queued,
 * frees everything. No op runs after it returns. Not from an op. NULL is
 * a no-op. */
void imc_ipoib_destroy(struct imc_ipoib *ifc);

/*   state     event                                  next
 *   DOWN      imc_ipoib_up()                         JOINING
 *   JOINING   broadcast join answered, AV set        UP (carrier on)
 *   JOINING   join failed                            BACKOFF
 *   UP        tracker: re-joining or port down       JOINING (carrier off)
 *   UP        tracker: error                         BACKOFF (carrier off)
 *   BACKOFF   retry timer                            JOINING
 *   any       imc_ipoib_down()                       DOWN (carrier off)
 */
enum imc_ipoib_state {
	IMC_IPOIB_DOWN,
	IMC_IPOIB_JOINING,
	IMC_IPOIB_UP,
	IMC_IPOIB_BACKOFF,
};

const char *imc_ipoib_state_str(enum imc_ipoib_state s);

/* Administrative up: joins the broadcast group (and the groups listened
 * to). 0, or -EALREADY when not DOWN. */
int imc_ipoib_up(struct imc_ipoib *ifc);

/* Administrative down: leaves every group, drops what is queued (counted
 * as IMC_IPOIB_DROP_FLUSHED), forgets neighbours and endpoints; keeps the
 * addresses and listened groups for the next up. No-op when DOWN. */
void imc_ipoib_down(struct imc_ipoib *ifc);

enum imc_ipoib_state imc_ipoib_state(const struct imc_ipoib *ifc);
bool imc_ipoib_carrier(const struct imc_ipoib *ifc);

/* The interface's hardware address: cfg flags, QPN and port GID. */
void imc_ipoib_hwaddr(const struct imc_ipoib *ifc,
		      struct imc_ipoib_hwaddr *out);

/* IP MTU: the broadcast group's MTU (the port's before the join) - 4. */
unsigned imc_ipoib_mtu(const struct imc_ipoib *ifc);

/* ---- inputs ---- */

/* What a UD receive gives. */
struct imc_ipoib_rx {
	uint32_t src_qp;
	uint16_t slid;
	uint8_t sl;
	uint16_t pkey;
	bool has_grh;
	struct imc_gid sgid;
	struct imc_gid dgid;       /* an MGID when received on a group */
	const uint8_t *data;       /* IPoIB header + packet */
	size_t len;
};

/* A datagram the UD QP received: ARP and ND are handled here, IP packets
 * go to deliver (inside this call). Bad or foreign packets are counted
 * and dropped. */
void imc_ipoib_recv(struct imc_ipoib *ifc, const struct imc_ipoib_rx *rx);

/* An IPv4 or IPv6 packet from the host (the version nibble says which).
 * Sent now, or queued until its neighbour resolves, its group is joined
 * or the broadcast AV is set. Returns 0 (sent or queued) or the drop:
 * -ENETDOWN (DOWN), -EMSGSIZE (above the MTU), -EINVAL (not an IP
 * packet), -EHOSTUNREACH (unicast to no prefix of the interface),
 * -ENOBUFS (a queue is full), -ENOMEM, or the send op's error. */
int imc_ipoib_xmit(struct imc_ipoib *ifc, const void *pkt, size_t len);

/* Addresses: the interface answers ARP/ND for them; an IPv6 address also
 * joins its solicited-node group (the first IPv6 address the all-nodes
 * group ff02::1 as well). Unicast destinations must fall into one of the
 * prefixes. Returns 0, -EEXIST, -ENOENT (del), -EINVAL (multicast,
 * unspecified, bad prefix length) or -ENOMEM. */
int imc_ipoib_addr_add(struct imc_ipoib *ifc, const struct imc_ip_addr *a,
		       unsigned prefix_len);
int imc_ipoib_addr_del(struct imc_ipoib *ifc, const struct imc_ip_addr *a);

/* Multicast reception: each listen joins the group FullMember (once
 * the broadcast group is joined) and needs one unlisten. Returns 0,
 * -EINVAL (not a multicast address), -ENOENT (unlisten without listen)
 * or -ENOMEM. */
int imc_ipoib_mcast_listen(struct imc_ipoib *ifc,
			   const struct imc_ip_addr *group);
int imc_ipoib_mcast_unlisten(struct imc_ipoib *ifc,
			     const struct imc_ip_addr *group);

/* The MGID an IP multicast group maps to on this interface (RFC 4391 4:
 * its P_Key and scope): for imc_ipoib_endpoint_get(). 0 or -EINVAL. */
int imc_ipoib_mcast_mgid(const struct imc_ipoib *ifc,
			 const struct imc_ip_addr *group, struct imc_gid *mgid);

/* A change of the port, as its owner hears it (the same events its join
 * tracker gets, imc_mcast_port_event()). Call it from the loop, not from
 * an op. The interface follows the port's LID without a PathRecord:
 *  - LID_CHANGE: the port has a new LID; peers address it by the old
 *    one. The interface announces itself on the link: a gratuitous ARP
 *    per IPv4 address (RFC 5227 3) on the broadcast group and an
 *    unsolicited Neighbor Advertisement with the Override flag and the
 *    IPoIB link-layer address (RFC 4861 7.2.6, RFC 4391 9.1.1) per IPv6
 *    address to all-nodes; a receiver that knows the sender's GID takes
 *    the LID of the packet (any received packet does that).
 *  - REREGISTER, SM_CHANGE: any peer may have a new LID (IBA 14.4.11).
 *    Every unicast AV becomes stale: the next send to it waits (in the
 *    endpoint's bounded queue) for the peer to answer a unicast probe
 *    (ARP request, or NS to its address, RFC 4861 7.3.3), or to send
 *    anything; unanswered, the probe becomes a multicast solicitation
 *    (resolve_timeout, resolve_retries), then the packets are dropped
 *    (IMC_IPOIB_DROP_UNRESOLVED).
 * A DOWN interface has no endpoint to make stale; a LID change it hears
 * is announced once it is up again. Other events: nothing. */
void imc_ipoib_port_event(struct imc_ipoib *ifc, enum imc_mcast_port_event ev);

/* ---- counters and listings ---- */

enum imc_ipoib_drop {
	IMC_IPOIB_DROP_DOWN,           /* interface down */
	IMC_IPOIB_DROP_MALFORMED,      /* bad IPoIB, IP, ARP or ND packet */
	IMC_IPOIB_DROP_ETHERTYPE,      /* EtherType not IPv4, ARP or IPv6 */
	IMC_IPOIB_DROP_MTU,            /* above the interface MTU */
	IMC_IPOIB_DROP_PKEY,           /* received on another partition */
	IMC_IPOIB_DROP_NO_ROUTE,       /* unicast to no prefix */
	IMC_IPOIB_DROP_UNRESOLVED,     /* ARP/ND gave up */
	IMC_IPOIB_DROP_JOIN_FAILED,    /* the group's join failed */
	IMC_IPOIB_DROP_QUEUE_ENDPOINT, /* neighbour/endpoint queue full */
	IMC_IPOIB_DROP_QUEUE_GROUP,    /* group queue full */
	IMC_IPOIB_DROP_QUEUE_TOTAL,    /* all queues together full */
	IMC_IPOIB_DROP_SEND,           /* the send op refused */
	IMC_IPOIB_DROP_NOT_LISTENING,  /* multicast to a group not listened */
	IMC_IPOIB_DROP_LOOPBACK,       /* our own multicast, looped back */
	IMC_IPOIB_DROP_FLUSHED,        /* queued when the interface went down */
	IMC_IPOIB_DROP_NO_MEMORY,
	IMC_IPOIB_DROP__COUNT
};

const char *imc_ipoib_drop_str(enum imc_ipoib_drop d);

struct imc_ipoib_stats {
	uint64_t tx_packets, tx_bytes;     /* IP packets sent, IP bytes */
	uint64_t rx_packets, rx_bytes;     /* IP packets delivered */
	uint64_t tx_mcast, rx_mcast;       /* of those, on groups */
	uint64_t arp_tx, arp_rx;
	uint64_t nd_tx, nd_rx;             /* NS and NA */
	uint64_t resolved;                 /* solicited neighbours answered */
	uint64_t resolve_retries;
	uint64_t resolve_failures;
	uint64_t expired;                  /* neighbours and endpoints */
	uint64_t endpoints_from_rx;        /* created by a receive */
	uint64_t avs_fabricated;           /* unicast AVs made */
	uint64_t deferred;                 /* answers that waited for the
					    * broadcast AV */
	uint64_t joins, join_errors;       /* group joins asked, failed */
	uint64_t sendonly_joins, sendonly_leaves;
	uint64_t carrier_changes;
	uint64_t announces;                /* gratuitous ARPs and unsolicited
					    * NAs after a LID change */
	uint64_t made_stale;               /* unicast AVs made stale by a
					    * reregister or an SM change */
	uint64_t probes;                   /* unicast probes of stale AVs */
	uint64_t revalidated;              /* stale AVs confirmed again */
	uint64_t drops[IMC_IPOIB_DROP__COUNT];
	size_t endpoints;                  /* now */
	size_t neighbours;
	size_t groups;
	size_t queued;                     /* packets waiting now */
	size_t queued_max;                 /* most at once */
	size_t queued_max_endpoint;        /* most in one neighbour's or
					    * endpoint's queue */
	size_t queued_max_group;           /* most in one group's queue */
};

void imc_ipoib_get_stats(const struct imc_ipoib *ifc,
			 struct imc_ipoib_stats *st);

/* One endpoint, unicast or multicast. */
struct imc_ipoib_endpoint_info {
	struct imc_gid gid;        /* port GID or MGID */
	bool multicast;
	bool has_av;               /* AV set (multicast: from a join answer) */
	bool stale;                /* unicast: to be re-validated before use */
	struct imc_ipoib_av av;    /* valid when has_av */
	uint32_t qpn;              /* unicast: remote QPN, 0 if unknown */
	size_t queued;
	unsigned listeners;        /* multicast: listens held */
	bool sendonly;             /* multicast: joined to send only */
};

/* In GID order; fn must not change the interface. */
void imc_ipoib_foreach_endpoint(const struct imc_ipoib *ifc,
				void (*fn)(void *arg,
					   const struct imc_ipoib_endpoint_info *e),
				void *arg);

/* The endpoint of gid (unicast or multicast): 0, or -ENOENT. */
int imc_ipoib_endpoint_get(const struct imc_ipoib *ifc,
			   const struct imc_gid *gid,
			   struct imc_ipoib_endpoint_info *out);

enum imc_ipoib_neigh_state {
	IMC_IPOIB_NEIGH_INCOMPLETE,  /* solicitations sent, no answer yet */
	IMC_IPOIB_NEIGH_REACHABLE,   /* mapped to an endpoint */
};

struct imc_ipoib_neigh_info {
	struct imc_ip_addr addr;
	enum imc_ipoib_neigh_state state;
	struct imc_ipoib_hwaddr hw;  /* REACHABLE */
	size_t queued;
};

/* IPv4 before IPv6, each in address order; fn must not change the
 * interface. */
void imc_ipoib_foreach_neigh(const struct imc_ipoib *ifc,
			     void (*fn)(void *arg,
					const struct imc_ipoib_neigh_info *n),
			     void *arg);

#ifdef __cplusplus
}
#endif
#endif

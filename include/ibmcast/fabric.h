/* The embedded fabric: a deterministic simulation of an InfiniBand subnet.
 *
 * HCAs and switches from a topology (topo.h), cables with latency,
 * bandwidth, loss, duplication, reordering and up/down state, a minimal SM
 * (LID assignment and min-hop routing through subnet.h, SM LID, client
 * reregister), switch forwarding tables (LFT, and MFTs programmed through
 * imc_fabric_mft_set, the interface the SA engine uses), and UD QPs with
 * Q_Key and P_Key checks, receive queues, MTU enforcement, optional GRH and
 * multicast attach. QP1 carries MADs like any UD QP (QPN 1, Q_Key
 * 0x80010000). Every CA and switch also has an SMA and a PMA, and MAD
 * users outside the simulation (an external SM) attach to QP0/QP1 of a
 * port through fabric_mad.h.
 *
 * Everything runs on an imc_loop: a virtual loop gives a simulation that a
 * seed replays exactly; a real-time loop runs the same fabric against the
 * wall clock (for TUN bridging). The fabric never reads the clock or calls
 * a random function of its own: time comes from the loop, randomness from
 * streams split from the configured seed.
 *
 * Callbacks (receive, port events) run from the loop, never inside the
 * call that caused them; after imc_qp_destroy or imc_fabric_port_unwatch
 * returns, that object gets no callback.
 *
 * Nodes and ports are named by (node index in the topology, port number).
 */
#ifndef IBMCAST_FABRIC_H
#define IBMCAST_FABRIC_H

#include <stdio.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/pcap.h"
#include "ibmcast/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* IBA 14.2.5.6 PortInfo:NeighborMTU / SA MTU codes. */
enum {
	IMC_MTU_256 = 1,
	IMC_MTU_512 = 2,
	IMC_MTU_1024 = 3,
	IMC_MTU_2048 = 4,
	IMC_MTU_4096 = 5,
};

/* Bytes of an IB MTU code, 0 for an invalid code. */
unsigned imc_mtu_bytes(unsigned mtu_code);

/* IBA 14.2.5.6 PortState values. */
enum imc_port_state {
	IMC_PORT_DOWN = 1,
	IMC_PORT_INIT = 2,
	IMC_PORT_ARMED = 3,
	IMC_PORT_ACTIVE = 4,
};

const char *imc_port_state_str(enum imc_port_state s);

/* One direction of a cable, or the defaults for every cable. */
struct imc_link_params {
	imc_time_t latency;       /* ns from the last bit out to the last bit in */
	uint64_t bits_per_sec;    /* serialization rate; 0 = from the width (QDR lanes) */
	double loss;              /* probability a packet is lost, 0..1 */
	double dup;               /* probability a packet arrives twice */
	double reorder;           /* probability a packet is held back ... */
	imc_time_t reorder_delay; /* ... by this long, so that later ones pass it */
};

struct imc_fabric_config {
	uint64_t seed;
	struct imc_link_params link;  /* every cable, both directions */
	unsigned mtu;                 /* IB MTU code of every port */
	unsigned rate;                /* SA rate code of every HCA port */
	unsigned rq_depth;            /* receive queue depth of each QP */
	uint64_t subnet_prefix;       /* GID prefix */
	imc_time_t sm_sweep_delay;    /* link change -> SM reroute and ports up */
	/* An SM outside the fabric (IBA 14.4) runs the subnet through SMPs
	 * (fabric_mad.h); the fabric's own SM steps aside. Bring-up and a
	 * cable coming up take ports to INIT with LID 0, not ACTIVE (IBA
	 * 7.2); LFTs and MFTs start empty; LIDs, LMC, MasterSMLID, port
	 * states (ARMED, ACTIVE) and forwarding tables come from SubnSet()s
	 * only; nothing sweeps after a link change (switches send Trap 128
	 * to their MasterSMLID instead). Users of a port find the SA at the
	 * port's sm_lid (imc_fabric_port_attr), as the SM set it.
	 * imc_fabric_sm_move and imc_fabric_lid_change are -EOPNOTSUPP. */
	bool external_sm;
};

/* Defaults: seed 1, latency 100 ns, 4x QDR bandwidth, no faults, MTU 2048,
 * rate 40 Gb/s, 512-entry receive queues, prefix fe80::/64, sweep 1 ms. */
void imc_fabric_config_default(struct imc_fabric_config *c);

struct imc_fabric;

/* Creates the fabric with every port down (cfg NULL: the defaults of
 * imc_fabric_config_default()). topo and loop must outlive it,
 * and topo must not change while it lives. Returns 0, -EINVAL (bad config,
 * e.g. a latency or delay past IMC_TIME_LIMIT, or topology without an SM
 * port) or -ENOMEM. */
int imc_fabric_create(const struct imc_topo *topo, struct imc_loop *loop,
		      const struct imc_fabric_config *cfg,
		      struct imc_fabric **out);

/* Frees the fabric and everything it still holds (QPs, packets in flight,
 * armed timers). Owners of QPs and watches must not use them afterwards.
 * Not from a callback of the fabric. */
void imc_fabric_destroy(struct imc_fabric *f);

/* The topology and loop the fabric was created with. */
const struct imc_topo *imc_fabric_topo(const struct imc_fabric *f);
struct imc_loop *imc_fabric_loop(const struct imc_fabric *f);

/* The SM's first sweep, at the current loop time: assigns LIDs, computes
 * routes, programs every LFT and brings every cabled port to ACTIVE with
 * the SM's LID. Port watches get IMC_PORT_EV_ACTIVE from the loop.
 * Returns 0 or a negative errno (-ENOSPC: more endpoints than LIDs). */
int imc_fabric_bring_up(struct imc_fabric *f);

/* ---- ports ---- */

#define IMC_PKEY_TABLE_MAX 32

struct imc_port_attr {
	enum imc_port_state state;
	uint16_t lid;
	uint16_t sm_lid;
	uint64_t guid;
	struct imc_gid gid;           /* subnet prefix + port GUID */
	unsigned mtu;                 /* IB MTU code */
	unsigned rate;                /* SA rate code */
	unsigned npkeys;
	uint16_t pkeys[IMC_PKEY_TABLE_MAX];
};

/* -EINVAL for a bad node/port. Switch ports report the switch's LID. */
int imc_fabric_port_attr(const struct imc_fabric *f, uint32_t node,
			 unsigned port, struct imc_port_attr *out);

/* HCA port by GID or by LID, O(1). -ENOENT when none. */
int imc_fabric_port_by_gid(const struct imc_fabric *f,
			   const struct imc_gid *gid, uint32_t *node,
			   unsigned *port);
int imc_fabric_port_by_lid(const struct imc_fabric *f, uint16_t lid,
			   uint32_t *node, unsigned *port);

/* Sets the MTU (IB MTU code) of one port, HCA or switch: larger
 * datagrams are refused at send (-EMSGSIZE) or dropped (IMC_DROP_MTU)
 * where they would leave or enter that port. -EINVAL for a bad port or
 * code. */
int imc_fabric_port_mtu_set(struct imc_fabric *f, uint32_t node,
			    unsigned port, unsigned mtu);

/* Events on an HCA port, as a consumer of the port sees them. */
enum imc_port_event {
	IMC_PORT_EV_ACTIVE,            /* port became ACTIVE */
	IMC_PORT_EV_DOWN,              /* port left ACTIVE */
	IMC_PORT_EV_LID_CHANGE,
	IMC_PORT_EV_SM_CHANGE,         /* new SM LID */
	IMC_PORT_EV_CLIENT_REREGISTER, /* IBA 14.4.11: re-register with the SA */
	IMC_PORT_EV_PKEY_CHANGE,
};

const char *imc_port_event_str(enum imc_port_event ev);

/* Lives in its owner's object. Fields are private. A watch hears the
 * events posted after it was registered, in the order they were posted;
 * a callback may unwatch any watch, its own included. Watching a port
 * that is already ACTIVE gives no ACTIVE event: read imc_fabric_port_attr. */
struct imc_port_watch {
	void (*cb)(struct imc_port_watch *w, enum imc_port_event ev);
	uint32_t node;
	uint8_t port;
	uint64_t seq;   /* registration order */
	struct imc_port_watch *next, *prev;
};

int imc_fabric_port_watch(struct imc_fabric *f, uint32_t node, unsigned port,
			  struct imc_port_watch *w,
			  void (*cb)(struct imc_port_watch *w,
				     enum imc_port_event ev));
void imc_fabric_port_unwatch(struct imc_fabric *f, struct imc_port_watch *w);

/* ---- SM-side events and faults, all at the current loop time ---- */

/* Cable of node:port down or up. Both ports go DOWN at once (event); after
 * sm_sweep_delay the SM reroutes and, for a cable up, brings them ACTIVE. */
int imc_fabric_link_set(struct imc_fabric *f, uint32_t node, unsigned port,
			bool up);
bool imc_fabric_link_up(const struct imc_fabric *f, uint32_t node,
			unsigned port);

/* Fault parameters of the cable at node:port, both directions; -EINVAL
 * for a probability outside 0..1 or a delay past IMC_TIME_LIMIT. */
int imc_fabric_link_params_set(struct imc_fabric *f, uint32_t node,
			       unsigned port, const struct imc_link_params *p);

/* Moves the SM to node:port (an HCA port): every active port's SM LID
 * changes and its watches get IMC_PORT_EV_SM_CHANGE. */
int imc_fabric_sm_move(struct imc_fabric *f, uint32_t node, unsigned port);
int imc_fabric_sm_port(const struct imc_fabric *f, uint32_t *node,
		       unsigned *port);

/* Client reregister on node:port, or on every HCA port when node is
 * IMC_TOPO_NONE. */
int imc_fabric_client_reregister(struct imc_fabric *f, uint32_t node,
				 unsigned port);

/* Gives node:port a new LID (-EBUSY if taken, -EINVAL if not unicast) and
 * reroutes; watches get IMC_PORT_EV_LID_CHANGE. */
int imc_fabric_lid_change(struct imc_fabric *f, uint32_t node, unsigned port,
			  uint16_t lid);

/* Replaces the P_Key table of an HCA port (n <= IMC_PKEY_TABLE_MAX). */
int imc_fabric_pkey_set(struct imc_fabric *f, uint32_t node, unsigned port,
			const uint16_t *pkeys, unsigned n);

/* ---- multicast forwarding (IBA 18.2.4.4) ---- */

/* Ports 0..255 of a switch as a bit set. */
struct imc_portmask {
	uint64_t bits[4];
};

static inline void imc_portmask_set(struct imc_portmask *m, unsigned port)
{
	m->bits[(port >> 6) & 3] |= 1ull << (port & 63);
}

static inline void imc_portmask_clear(struct imc_portmask *m, unsigned port)
{
	m->bits[(port >> 6) & 3] &= ~(1ull << (port & 63));
}

static inline bool imc_portmask_test(const struct imc_portmask *m,
				     unsigned port)
{
	return (m->bits[(port >> 6) & 3] >> (port & 63)) & 1;
}

/* Sets the MFT entry of mlid (0xC000..0xFFFE) on a switch: the ports a
 * packet to mlid leaves by (never back out of the port it came in on, IBA
 * 18.2.4.4). An empty mask removes the entry. O(1). */
int imc_fabric_mft_set(struct imc_fabric *f, uint32_t switch_node,
		       uint16_t mlid, const struct imc_portmask *ports);
int imc_fabric_mft_get(const struct imc_fabric *f, uint32_t switch_node,
		       uint16_t mlid, struct imc_portmask *ports);

/* Writes mlid's forwarding as programmed in the switches' MFTs as a
 * Graphviz DOT graph: switches with an entry (boxes, with the entry's
 * ports), tree edges between switches that forward to each other, edges
 * forwarded over from one side only (dashed red), and the HCA ports the
 * entries reach (ellipses). title (may be NULL) heads the drawing.
 * Returns 0, -EINVAL (bad MLID, NULL f or out) or -EIO. */
int imc_fabric_mft_dot(const struct imc_fabric *f, uint16_t mlid,
		       const char *title, FILE *out);

/* Programs mlid on every switch as one spanning tree over the HCA ports
 * nodes[i]:ports[i]: breadth first from the switch of the first member,
 * over cables that are up, switch ports in increasing order; branches
 * that lead to no member are cut, and switches off the tree lose their
 * entry for mlid (n == 0 clears it everywhere). A datagram a member sends
 * to mlid then reaches every other member port exactly once and never
 * its own port: switches do not send back out of the ingress port (IBA
 * 18.2.4.4), and HCAs do not loop multicast back to themselves here.
 * Returns the number of distinct member ports the tree reaches, -EINVAL
 * for a bad MLID or a member that is not a cabled HCA port, -ENOMEM. */
int imc_fabric_mft_program_tree(struct imc_fabric *f, uint16_t mlid,
				const uint32_t *nodes, const unsigned *ports,
				size_t n);

/* ---- UD QPs ---- */

/* An address vector (IBA 10.2.1, as ibv_ah_attr). */
struct imc_ah {
	uint16_t dlid;
	uint8_t sl;
	uint8_t static_rate;   /* SA rate code, 0 = port rate */
	bool has_grh;
	struct imc_gid dgid;
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t tclass;
};

/* A received datagram, as a work completion plus the GRH. data and len
 * are valid during the callback only. */
struct imc_ud_recv {
	uint32_t src_qp;
	uint16_t slid;
	uint16_t dlid;
	uint8_t sl;
	uint16_t pkey;
	bool has_grh;
	struct imc_gid sgid;
	struct imc_gid dgid;
	uint32_t flow_label;
	uint8_t tclass;
	uint8_t hop_limit;
	const uint8_t *data;
	size_t len;
};

struct imc_qp;

typedef void imc_qp_recv_fn(struct imc_qp *qp, const struct imc_ud_recv *r,
			    void *ctx);

/* Creates a UD QP on an HCA port. qpn 0 allocates a number (from 2 up, in
 * order); qpn 1 is the port's QP1 (Q_Key forced to 0x80010000; -EBUSY if
 * it exists). pkey must be in the port's P_Key table (-EINVAL otherwise).
 * recv runs from the loop for each datagram that passes the checks. */
int imc_qp_create(struct imc_fabric *f, uint32_t node, unsigned port,
		  uint32_t qpn, uint32_t qkey, uint16_t pkey,
		  imc_qp_recv_fn *recv, void *ctx, struct imc_qp **out);

/* Frees qp and detaches it from its groups: no callback after return;
 * datagrams still in flight to it, and those received whose callback has
 * not run, are dropped and counted as IMC_DROP_NO_QP. May be called from
 * qp's own receive callback. */
void imc_qp_destroy(struct imc_qp *qp);

uint32_t imc_qp_num(const struct imc_qp *qp);

/* Receive callbacks of qp run delay ns after the first datagram of a
 * batch was queued instead of at once, as with completion moderation:
 * datagrams arriving meanwhile wait in the receive queue (rq_depth) and
 * overflow it as on a slow consumer. 0 (the default) runs them at the
 * next loop round. Applies from the next batch. */
void imc_qp_set_recv_delay(struct imc_qp *qp, imc_time_t delay);

/* Changes the QP's Q_Key, as the Modify QP verb does (ibv_modify_qp()
 * with IBV_QP_QKEY): datagrams that arrive from then on are checked
 * against the new Q_Key (IBA 10.2.5); those already in the receive queue
 * passed the check of their arrival. Returns 0, or -EINVAL for QP1,
 * whose Q_Key is fixed (IBA 13.5). */
int imc_qp_set_qkey(struct imc_qp *qp, uint32_t qkey);
uint32_t imc_qp_qkey(const struct imc_qp *qp);

/* Sends one datagram (copied). Returns 0, -ENETDOWN when the port is not
 * ACTIVE, -EMSGSIZE above the port's MTU, -EINVAL for a bad AV (LID 0, a
 * multicast DLID without a GRH, ...). Loss on the way is not an error. */
int imc_qp_send(struct imc_qp *qp, const struct imc_ah *ah,
		uint32_t remote_qpn, uint32_t remote_qkey, const void *data,
		size_t len);

/* Multicast attach (IBA 10.5.2.5): datagrams to mlid whose GRH DGID is
 * mgid reach this QP. -EEXIST if attached, -ENOENT on detach if not. */
int imc_qp_attach(struct imc_qp *qp, const struct imc_gid *mgid,
		  uint16_t mlid);
int imc_qp_detach(struct imc_qp *qp, const struct imc_gid *mgid,
		  uint16_t mlid);

/* ---- counters, capture, determinism ---- */

enum imc_drop {
	IMC_DROP_LINK_DOWN,    /* sent into a cable that is down */
	IMC_DROP_LOSS,         /* lost on a cable (fault injection) */
	IMC_DROP_NO_ROUTE,     /* no LFT entry for the DLID */
	IMC_DROP_NO_MFT,       /* no MFT entry for the MLID */
	IMC_DROP_PORT_STATE,   /* egress or ingress port not ACTIVE */
	IMC_DROP_DLID,         /* DLID is not this port's */
	IMC_DROP_PKEY,         /* P_Key not in the receiving port's table */
	IMC_DROP_QKEY,         /* Q_Key mismatch at the destination QP */
	IMC_DROP_NO_QP,        /* no such QP, or not attached to the group */
	IMC_DROP_RQ_FULL,      /* receive queue overflow */
	IMC_DROP_MTU,          /* larger than a port's MTU on the way */
	IMC_DROP__COUNT
};

const char *imc_drop_str(enum imc_drop d);

struct imc_port_counters {
	uint64_t tx_packets, tx_bytes;
	uint64_t rx_packets, rx_bytes;
	uint64_t drops[IMC_DROP__COUNT];
};

/* Counters of the cable direction that leaves node:port. */
struct imc_link_counters {
	uint64_t packets, bytes;
	uint64_t lost, duplicated, reordered;
};

int imc_fabric_port_counters(const struct imc_fabric *f, uint32_t node,
			     unsigned port, struct imc_port_counters *out);
int imc_fabric_link_counters(const struct imc_fabric *f, uint32_t node,
			     unsigned port, struct imc_link_counters *out);

struct imc_fabric_totals {
	uint64_t sent;         /* datagrams accepted by imc_qp_send */
	uint64_t delivered;    /* datagrams handed to a receive callback */
	uint64_t hops;         /* cable traversals */
	uint64_t drops[IMC_DROP__COUNT];
	/* Of those, MADs: datagrams to QP0 or QP1 (IBA 13.5.1). */
	uint64_t mad_sent, mad_delivered, mad_drops;
};

void imc_fabric_totals(const struct imc_fabric *f,
		       struct imc_fabric_totals *out);

/* Records every packet as it leaves node:port (every port when node is
 * IMC_TOPO_NONE) into p as LRH..VCRC frames with valid CRCs, stamped with
 * loop time. p stays the caller's; one capture at a time; NULL stops. */
int imc_fabric_capture(struct imc_fabric *f, struct imc_pcap *p,
		       uint32_t node, unsigned port);

/* A hash of every event so far (sends, hops, deliveries and drops with
 * their times): equal for two runs with the same seed and inputs. */
uint64_t imc_fabric_trace_hash(const struct imc_fabric *f);

#ifdef __cplusplus
}
#endif
#endif

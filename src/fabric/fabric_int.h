/* What the SMP transport and the SMA/PMA (smp.c, sma.c) need of the
 * fabric's runtime, and the hooks the runtime calls in them; then the
 * runtime's own objects, shared by its four files:
 *
 *   fabric.c       create and destroy, the built-in SM, faults, counters
 *   fabric_port.c  port state, port events and watches, port attributes,
 *                  what the SMA reads and sets
 *   fabric_path.c  the datagram path: cables, switches (LFT, MFT), the
 *                  checks at an HCA port, receive queues
 *   fabric_qp.c    UD QPs: create, send, attach; GMPs of the SMAs
 *
 * Private to src/fabric.
 */
#ifndef IBMCAST_FABRIC_INT_H
#define IBMCAST_FABRIC_INT_H

#include "ibmcast/fabric.h"
#include "ibmcast/fabric_mad.h"
#include "ibmcast/packet.h"
#include "ibmcast/rng.h"
#include "ibmcast/subnet.h"
#include "util/hash.h"
#include "util/list.h"
#include "util/mix.h"
#include "util/bytes.h"

struct fab_mad;

/* One port as the SMA sees it. */
struct fab_port_view {
	enum imc_node_type type;
	unsigned nports;          /* external ports of the node */
	uint32_t gidx;            /* index over every port of the fabric */
	enum imc_port_state state;
	uint16_t lid;             /* a switch's on every port */
	uint16_t sm_lid;
	uint8_t mtu;
	uint8_t width;            /* lanes */
	bool cabled;
	bool link_up;             /* cabled and up (physical LinkUp) */
	uint32_t peer_node;       /* when cabled */
	unsigned peer_port;
	imc_time_t latency;       /* of the direction leaving this port */
};

/* ---- provided by the runtime (fabric*.c) ---- */

int fab_port_view(const struct imc_fabric *f, uint32_t node, unsigned port,
		  struct fab_port_view *v);
uint32_t fab_nports_total(const struct imc_fabric *f);
struct fab_mad *fab_mad_of(const struct imc_fabric *f);
bool fab_external_sm(const struct imc_fabric *f);

/* SM-driven PortState change (IBA 14.2.5.6 Set(PortInfo)): DOWN (the
 * link retrains: back to INIT at once while the cable is up), ARMED from
 * INIT, ACTIVE from ARMED. -EINVAL for any other transition. */
int fab_port_state_set(struct imc_fabric *f, uint32_t node, unsigned port,
		       enum imc_port_state s);
/* Base LID of an HCA port, or of a switch (port 0): its watches hear
 * LID_CHANGE when it is ACTIVE. -EINVAL for a bad port or LID. */
int fab_port_lid_set(struct imc_fabric *f, uint32_t node, unsigned port,
		     uint16_t lid);
int fab_port_sm_lid_set(struct imc_fabric *f, uint32_t node, unsigned port,
			uint16_t sm_lid);
/* Posts a port event to the watches of an HCA port. */
void fab_port_post(struct imc_fabric *f, uint32_t node, unsigned port,
		   enum imc_port_event ev);
int fab_port_pkeys(const struct imc_fabric *f, uint32_t node, unsigned port,
		   uint16_t *pkeys, unsigned *n);

/* 64-entry blocks of a switch's LFT (IMC_PORT_NONE beyond the table). */
int fab_lft_block_get(const struct imc_fabric *f, uint32_t sw, unsigned block,
		      uint8_t out[64]);
int fab_lft_block_set(struct imc_fabric *f, uint32_t sw, unsigned block,
		      const uint8_t in[64]);

/* Sends a GMP as a UD datagram from node:port (an HCA port, or a switch's
 * port 0 through its LFT). Returns 0, -ENETDOWN, -EINVAL or -ENOMEM. */
int fab_gmp_send(struct imc_fabric *f, uint32_t node, unsigned port,
		 const struct imc_fabric_mad_addr *to, const uint8_t *mad,
		 size_t len);

/* Mixes an SMP event into the fabric's trace hash. */
void fab_trace(struct imc_fabric *f, unsigned ev, uint32_t gidx,
	       uint64_t serial);

/* ---- provided by smp.c / sma.c, called by the runtime ---- */

int fab_mad_create(struct imc_fabric *f, struct fab_mad **out);
void fab_mad_destroy(struct fab_mad *m);

/* A datagram for QP0/QP1 reached node:port (a switch's: port 0). Returns
 * true when an agent or the PMA took it; false leaves it to the
 * simulation's QP. */
bool fab_mad_gmp_in(struct fab_mad *m, uint32_t node, unsigned port,
		    const struct imc_ud_recv *r, uint32_t dqp);

/* The state of node:port changed (after the change). */
void fab_mad_port_changed(struct fab_mad *m, uint32_t node, unsigned port,
			  enum imc_port_state old, enum imc_port_state now);

/* ---- between smp.c and sma.c ---- */

/* SMP header offsets (IBA 14.2.1.2, rdma-core's struct umad_smp). */
enum {
	SMP_METHOD = 3,
	SMP_STATUS = 4,           /* bit 15: D, the direction (DR only) */
	SMP_HOP_PTR = 6,
	SMP_HOP_CNT = 7,
	SMP_TID = 8,
	SMP_ATTR_ID = 16,
	SMP_ATTR_MOD = 20,
	SMP_MKEY = 24,
	SMP_DR_SLID = 32,
	SMP_DR_DLID = 34,
	SMP_DATA = 64,
	SMP_INITIAL_PATH = 128,
	SMP_RETURN_PATH = 192,
	SMP_MAX_HOPS = 64,
};

enum {
	MAD_CLASS_SMP_LID = 0x01,
	MAD_CLASS_PERF = 0x04,
	MAD_CLASS_SMP_DR = 0x81,
	MAD_METHOD_GET = 0x01,
	MAD_METHOD_SET = 0x02,
	MAD_METHOD_GET_RESP = 0x81,
	MAD_METHOD_TRAP = 0x05,
	MAD_METHOD_TRAP_REPRESS = 0x07,
	MAD_METHOD_RESP = 0x80,   /* the R bit, IBA 13.4.5 */
	ATTR_SM_INFO = 0x0020,
	ATTR_NOTICE = 0x0002,
	/* IBA 13.4.7 MAD status */
	MAD_STATUS_BAD_VERSION = 0x0004,
	MAD_STATUS_UNSUP_METHOD = 0x0008,
	MAD_STATUS_UNSUP_ATTR = 0x000C,
	MAD_STATUS_BAD_FIELD = 0x001C,
};

struct sma_state;

struct fab_mad {
	struct imc_fabric *f;
	uint32_t nports;                      /* gidx range */
	struct imc_list *agents;              /* by gidx, in attach order */
	struct imc_fabric_mad_agent **sm;     /* by gidx: the SM agent */
	struct imc_list flying;               /* SMPs on their way */
	struct imc_list free;
	uint64_t serial;
	struct imc_fabric_mad_stats st;
	struct sma_state *sma;
};

/* Answers an SMP or PMA MAD in place as node's agent, the MAD having
 * arrived at port (see imc_fabric_sma_process). */
int sma_answer(struct fab_mad *m, uint32_t node, unsigned port, uint8_t *mad,
	       size_t len);
/* SMA state of a port: its PortInfo fields the fabric does not hold. */
int sma_init(struct fab_mad *m);
void sma_fini(struct fab_mad *m);
/* The SMA's Trap() sender: node's trap with this TID was repressed.
 * Returns true when it was one of its own. */
bool sma_trap_repress(struct fab_mad *m, uint32_t node, uint64_t tid);
void sma_port_changed(struct fab_mad *m, uint32_t node, unsigned port,
		      enum imc_port_state old, enum imc_port_state now);
/* Sends a MAD from node's SMA (port: the CA port, or 0), LID routed. */
int smp_send_from_sma(struct fab_mad *m, uint32_t node, unsigned port,
		      uint16_t dlid, const uint8_t *mad);
void sma_set_issm(struct fab_mad *m, uint32_t gidx, bool on);
/* dlid is one of the LIDs of the port (base lid, LMC of gidx). */
bool sma_lid_match(const struct fab_mad *m, uint32_t gidx, uint16_t lid,
		   uint16_t dlid);
struct imc_fabric *fab_mad_fabric(const struct fab_mad *m);
struct imc_fabric_mad_stats *fab_mad_stats(struct fab_mad *m);

/* ---- the runtime's objects (fabric*.c only) ---- */

enum {
	BUF_SMALL = 256,          /* payload bytes of a small datagram */
	BUF_LARGE = 4096,         /* the largest IB MTU */
	RING_MIN = 16,            /* first ring of a direction, or a QP's
				   * first beyond RQ_INLINE */
	RQ_INLINE = 2,
	HDR_MAX = IMC_LRH_SIZE + IMC_GRH_SIZE + IMC_BTH_SIZE + IMC_DETH_SIZE,
	FRAME_MAX = HDR_MAX + BUF_LARGE + 3 + IMC_ICRC_SIZE + IMC_VCRC_SIZE,
	QDR_LANE_BPS = 8000,      /* Mb/s of data per QDR lane (10 Gbaud, 8b/10b) */
};

/* Trace events, mixed into the trace hash with the drop reason. */
enum {
	TR_SEND = 1,
	TR_HOP = 2,
	TR_DELIVER = 3,
	TR_DROP = 16,
};

enum pend_state {
	PEND_FREE,
	PEND_HELD,
	PEND_LOOP,
};

struct dir;
struct port;

/* One datagram, shared by its copies (refs). The first cache line holds
 * what a hop and the checks at a port read; the second what the receive
 * callback reads besides; the payload follows. */
struct pkt {
	_Alignas(64) uint64_t serial;
	struct imc_gid dgid;
	uint32_t refs;
	uint32_t len;             /* payload bytes */
	uint32_t dqpn, qkey;
	uint16_t dlid, pkey;
	uint16_t wire;            /* bytes on the wire, LRH through VCRC */
	uint8_t sl;
	bool has_grh;
	uint8_t large;            /* size class */

	struct pkt *next;         /* free list */
	struct imc_gid sgid;
	uint32_t sqpn, psn, flow_label;
	uint16_t slid;
	uint8_t tclass, hop_limit;
	_Alignas(64) uint8_t data[];
};

_Static_assert(offsetof(struct pkt, large) < 64,
	       "struct pkt: the hop fields fill the first cache line");

/* A reference held back on a cable or looped back to its port, on a
 * timer of its own. */
struct pend {
	struct imc_timer t;
	struct imc_list link;     /* HELD: the direction's held list; LOOP:
				   * f->loops; FREE: f->free_pends */
	struct imc_fabric *f;
	struct dir *dir;          /* HELD */
	struct port *to;
	struct pkt *p;
	enum pend_state state;
};

/* A reference on the wire. */
struct hop {
	imc_time_t at;            /* arrival */
	struct pkt *p;
};

/* One direction of a cable: the one that leaves port from. */
struct dir {
	/* Queueing a datagram reads the first cache line and counts in the
	 * second; its arrival reads the first and the timer. */
	_Alignas(64) struct hop *ring; /* on the wire, in arrival order */
	uint32_t rhead, rlen, rmask;
	bool up;
	bool faulty;              /* any of loss, dup, reorder */
	imc_time_t busy_until;
	uint64_t ps_per_byte;
	imc_time_t latency;       /* p.latency */
	struct imc_fabric *f;
	struct port *to;
	struct imc_timer t;       /* arrival of the ring's first */
	struct imc_link_counters c;
	struct port *from;
	struct imc_list held;     /* held back, any order */
	struct imc_link_params p;
	struct imc_rng rng;
};

_Static_assert(offsetof(struct dir, to) < 64 &&
	       offsetof(struct dir, c) + 16 <= 128,
	       "struct dir: hot fields in the first two cache lines");

struct evq_ent {
	enum imc_port_event ev;
	uint64_t seq;             /* watches registered before it hear it */
};

/* What only an HCA port has. */
struct hport {
	struct imc_fabric *f;
	struct port *port;
	struct imc_hnode gl;          /* f->by_guid */
	unsigned npkeys;
	uint16_t pkeys[IMC_PKEY_TABLE_MAX];
	uint32_t next_qpn;
	struct imc_port_watch *w_head, *w_tail;
	struct imc_port_watch *w_iter;  /* next watch of the running dispatch */
	struct imc_timer ev_timer;
	struct evq_ent *evq;
	unsigned ev_head, ev_len, ev_cap;
};

struct node {
	enum imc_node_type type;
	uint32_t idx;
	unsigned nports;
	struct port *port;        /* nports + 1, [0] = a switch's port 0 */
	uint16_t lid;             /* a switch's LID */
	uint8_t *lft;             /* a switch's LFT copy, indexed by LID */
	size_t lft_len;
};

/* What an arrival reads comes first: the state, where it goes next, the
 * receive counters and, at an HCA port, the group of the last multicast
 * datagram (mc_*). A broadcast storm reaches every port in turn, so
 * every line that the check of a datagram touches is a cache miss. */
struct port {
	_Alignas(64) struct node *node;
	struct hport *h;          /* HCA ports only */
	struct dir *out;          /* NULL when not cabled */
	struct imc_qp *mc_qp;     /* the QP of (mc_mlid, mc_mgid), if alone */
	enum imc_port_state state;
	uint32_t gidx;            /* index over every port of the fabric */
	uint32_t mtu_bytes;
	uint16_t lid;
	uint16_t sm_lid;
	struct imc_gid mc_mgid;
	uint16_t mc_mlid;
	uint8_t num;
	uint8_t mtu;
	uint8_t rate;
	struct imc_port_counters c;
};

struct mft_ent {
	struct imc_hnode hl;
	uint32_t sw;
	uint16_t mlid;
	struct imc_portmask mask;
};

struct att;

/* The QPs of one HCA port attached to (MLID, MGID), in attach order. */
struct mgrp {
	struct imc_hnode hl;
	struct port *port;
	uint16_t mlid;
	struct imc_gid mgid;
	struct imc_list atts;     /* struct att, glink */
};

struct att {
	struct imc_list glink;    /* in the group, in attach order */
	struct imc_list qlink;    /* in the QP */
	struct mgrp *g;
	struct imc_qp *qp;
};

/* Receiving reads the first two cache lines: the checks and the ring,
 * then the completion timer and the ring's first slots, kept inside the
 * QP: a receive queue that the completion timer empties every round
 * needs no more, and no line of its own. */
struct imc_qp {
	_Alignas(64) uint32_t qpn;
	uint32_t qkey;
	uint16_t pkey;
	unsigned rq_head, rq_len, rq_cap;
	struct pkt **rq;          /* receive ring, grown up to rq_depth */
	imc_qp_recv_fn *recv;
	void *ctx;
	struct port *port;
	imc_time_t recv_delay;
	struct imc_timer done;
	struct pkt *rq_inline[RQ_INLINE];  /* rq until it grows */
	struct imc_fabric *f;
	struct imc_list atts;     /* struct att, qlink */
	struct imc_hnode hl;          /* f->qps, by (port, QPN) */
	struct imc_list link;     /* f->qp_list, in creation order */
	uint32_t psn;
};

_Static_assert(offsetof(struct imc_qp, rq_inline) + RQ_INLINE *
	       sizeof(struct pkt *) <= 128,
	       "struct imc_qp: receiving reads two cache lines");

struct imc_fabric {
	const struct imc_topo *topo;
	struct imc_loop *loop;
	struct imc_fabric_config cfg;
	struct imc_subnet *sn;
	struct node *nodes;
	uint32_t nnodes;
	struct port *ports;       /* every port of every node, by gidx */
	uint32_t nports;
	struct dir *dirs;
	struct hport *hports;
	uint32_t nhports;
	uint16_t sm_lid;
	uint32_t sm_node;
	unsigned sm_port;
	struct imc_timer sweep;

	struct imc_htab qps, mft, grps, by_guid;
	struct imc_list qp_list;  /* struct imc_qp, link */
	struct imc_qp *cur_qp;    /* QP whose recv callback runs */

	struct pkt *free_pkts[2]; /* by size class */
	struct imc_list free_pends;
	struct imc_list loops;    /* LOOP pends */
	uint64_t serial;
	uint64_t watch_seq;

	struct imc_pcap *cap;
	uint32_t cap_node;
	unsigned cap_port;
	uint8_t *frame;

	uint64_t hash;
	struct imc_fabric_totals tot;

	struct fab_mad *mad;      /* SMAs, PMAs and MAD agents */
	uint32_t *lid_port;       /* external SM: LID -> gidx + 1 */
};

/* ---- small steps every file takes ---- */

/* Mixes an event at a port into the trace hash. */
static inline void fab_trace_at(struct imc_fabric *f, imc_time_t now,
				unsigned ev, const struct port *at,
				uint64_t serial)
{
	const uint64_t prime = 0x100000001b3ull;  /* FNV-1a's, per word */
	uint64_t h = f->hash;

	h = (h ^ now) * prime;
	h = (h ^ ((uint64_t)at->gidx << 8 | ev)) * prime;
	h = (h ^ serial) * prime;
	f->hash = h ^ (h >> 29);
}

static inline struct port *fab_port_at(const struct imc_fabric *f,
				       uint32_t node, unsigned port)
{
	if (node >= f->nnodes || port > f->nodes[node].nports)
		return NULL;
	return &f->nodes[node].port[port];
}

static inline struct hport *fab_hca_port(const struct imc_fabric *f,
					 uint32_t node, unsigned port)
{
	struct port *p = fab_port_at(f, node, port);

	return p ? p->h : NULL;
}

/* One more reference, for a copy. */
static inline struct pkt *fab_pkt_ref(struct pkt *p)
{
	p->refs++;
	return p;
}

static inline void fab_pkt_unref(struct imc_fabric *f, struct pkt *p)
{
	if (--p->refs)
		return;
	p->next = f->free_pkts[p->large];
	f->free_pkts[p->large] = p;
}

static inline void fab_count_drop(struct imc_fabric *f, struct port *at,
				  enum imc_drop why, uint64_t serial)
{
	at->c.drops[why]++;
	f->tot.drops[why]++;
	fab_trace_at(f, imc_loop_now(f->loop), TR_DROP + why, at, serial);
}

/* Counts the drop of one reference and lets it go. */
static inline void fab_drop(struct imc_fabric *f, struct pkt *p,
			    struct port *at, enum imc_drop why)
{
	if (p->dqpn <= 1)
		f->tot.mad_drops++;
	fab_count_drop(f, at, why, p->serial);
	fab_pkt_unref(f, p);
}

/* ---- between the runtime's files ---- */

/* fabric.c */
/* n zeroed elements of size bytes (a multiple of 64) on a cache line. */
void *fab_zalloc64(size_t n, size_t size);

/* fabric_port.c */
/* The one place a port's state changes (the table in fabric_port.c). */
void fab_port_state(struct imc_fabric *f, struct port *p,
		    enum imc_port_state s);
/* Queues ev for the port's watches; they hear it from the loop. */
void fab_post(struct imc_fabric *f, struct hport *h, enum imc_port_event ev);
void fab_ev_fire(struct imc_timer *t);
void fab_port_gid(const struct imc_fabric *f, const struct port *p,
		  struct imc_gid *gid);
/* Grows a switch's LFT to len entries (more than it has), the new ones
 * IMC_PORT_NONE. 0 or -ENOMEM (the LFT unchanged). */
int fab_lft_grow(struct node *n, size_t len);

/* fabric_path.c */
/* A datagram with room for len payload bytes, one reference. */
struct pkt *fab_pkt_new(struct imc_fabric *f, size_t len);
/* Delivers p (the caller's reference) to its own port po from the loop,
 * no cable crossed: unicast to the sender's own LID. -ENOMEM (p
 * dropped) when no timer could be had. */
int fab_loop_back(struct imc_fabric *f, struct pkt *p, struct port *po,
		  imc_time_t now);
/* Sends p out of port out, whose cable is up and state ACTIVE. */
void fab_xmit(struct imc_fabric *f, struct pkt *p, struct port *out,
	      imc_time_t now);
/* The egress checks of a port, then fab_xmit. Both consume p. */
void fab_egress(struct imc_fabric *f, struct pkt *p, struct port *out,
		imc_time_t now);
void fab_dir_params(struct dir *d, const struct imc_link_params *lp,
		    unsigned width);
bool fab_params_ok(const struct imc_link_params *p);
/* Drops what is in flight on d: the cable went down under it. */
void fab_dir_flush(struct imc_fabric *f, struct dir *d);
void fab_dir_fire(struct imc_timer *t);
/* The QP's completion timer. */
void fab_done_fire(struct imc_timer *t);
/* Drops what qp received and has not handed to its callback yet. */
void fab_rq_flush(struct imc_qp *qp);
uint64_t fab_qp_hash(const struct port *p, uint32_t qpn);
struct imc_qp *fab_qp_find(const struct imc_fabric *f, const struct port *p,
			   uint32_t qpn);
uint64_t fab_grp_hash(const struct port *p, uint16_t mlid,
		      const struct imc_gid *mgid);
struct mgrp *fab_grp_find(const struct imc_fabric *f, const struct port *p,
			  uint16_t mlid, const struct imc_gid *mgid);
/* Frees what is in flight, the free lists and the MFT (destroy). */
void fab_path_free(struct imc_fabric *f);

/* fabric_qp.c */
/* Frees qp and what it holds (imc_fabric_destroy, imc_qp_destroy). */
void fab_qp_free(struct imc_qp *qp);

#endif

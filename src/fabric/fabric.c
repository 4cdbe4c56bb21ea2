/* The embedded fabric's runtime: ports, cables, switches and UD QPs.
 *
 * Port state (IBA 14.2.5.6), changed only by port_state():
 *
 *   from \ to   DOWN          INIT          ARMED        ACTIVE
 *   DOWN        -             cable up      -            SM sweep
 *   INIT        cable down    -             SubnSet      SM sweep
 *   ARMED       cable down,   -             -            SubnSet
 *               SubnSet
 *   ACTIVE      cable down,   -             -            -
 *               SubnSet
 *
 * The built-in SM arms and activates in one step; an external SM goes
 * through ARMED with SubnSet(PortInfo) (IBA 14.2.5.6, fab_port_state_set).
 * Watches of an HCA port hear DOWN when it leaves ACTIVE and ACTIVE when
 * it enters it.
 *
 * A datagram (struct pkt) is written once, by imc_qp_send(), and only
 * read afterwards: the copies a switch or an HCA port makes of a
 * multicast datagram, and the copy of the duplication fault, are
 * references to it, counted, and it is freed with the last. A broadcast
 * reaching every port of a subnet is thus one datagram that stays in
 * the cache while its copies are delivered, not one cold copy per port.
 * A reference sits in one place at a time:
 *
 *   a cable direction's ring    on the wire, with its arrival time
 *   a pend, state HELD          held back (reorder fault) on a timer of
 *                               its own, so that later datagrams pass it
 *   a pend, state LOOP          unicast to the sender's own LID; its
 *                               timer delivers it
 *   a QP's receive ring         until the QP's completion timer runs recv
 *
 * and moves from one to the next (a switch forwards it into another
 * cable), or is dropped. Pend state, changed only by pend_state():
 *
 *   FREE -> HELD | LOOP -> FREE   (the timer fired, or a flush)
 *
 * One event per hop: a datagram on a cable direction arrives at
 * max(now, busy_until) + size * 8 / bps + latency, and busy_until moves to
 * the end of its serialization, so datagrams queue FIFO behind each other.
 * Arrival times on a direction therefore never decrease, and each
 * direction has one timer, armed for the arrival of its first datagram:
 * the loop holds one timer per busy cable instead of one per datagram,
 * and a direction's queue is a ring of (arrival time, datagram), so that
 * queueing and arriving read the ring, not the datagrams.
 *
 * Lookups on the packet path are O(1): LFTs are arrays indexed by LID,
 * MFT entries, QPs and multicast attachments sit in chained hash tables
 * keyed by (switch, MLID), (port, QPN) and (port, MLID, MGID). Nothing
 * that reaches events iterates a hash table: MFT masks go by port number,
 * attachments in attach order, ports and nodes by index.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/packet.h"
#include "ibmcast/rng.h"
#include "ibmcast/subnet.h"
#include "fabric_int.h"
#include "wire/bytes.h"

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

/* ---- hash tables: intrusive, chained, keyed by a 64-bit hash ---- */

struct hlink {
	struct hlink *next;
	uint64_t hash;
};

struct htab {
	struct hlink **b;
	size_t mask;
	size_t n;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int ht_init(struct htab *t, size_t cap)
{
	t->b = calloc(cap, sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	t->mask = cap - 1;
	t->n = 0;
	return 0;
}

static struct hlink *ht_head(const struct htab *t, uint64_t hash)
{
	return t->b[hash & t->mask];
}

/* Doubles the table at load 1; when that fails the chains grow longer
 * instead, which costs time but loses nothing. */
static void ht_add(struct htab *t, struct hlink *e, uint64_t hash)
{
	struct hlink **b;

	if (t->n > t->mask) {
		size_t cap = (t->mask + 1) * 2;
		struct hlink **nb = calloc(cap, sizeof(*nb));

		if (nb) {
			for (size_t i = 0; i <= t->mask; i++) {
				struct hlink *x = t->b[i], *next;

				for (; x; x = next) {
					next = x->next;
					x->next = nb[x->hash & (cap - 1)];
					nb[x->hash & (cap - 1)] = x;
				}
			}
			free(t->b);
			t->b = nb;
			t->mask = cap - 1;
		}
	}
	e->hash = hash;
	b = &t->b[hash & t->mask];
	e->next = *b;
	*b = e;
	t->n++;
}

static void ht_del(struct htab *t, struct hlink *e)
{
	struct hlink **pp = &t->b[e->hash & t->mask];

	while (*pp != e)
		pp = &(*pp)->next;
	*pp = e->next;
	t->n--;
}

/* ---- objects ---- */

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
	struct pend *next, *prev; /* the direction's held list, or f's loops */
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
	struct pend *held;        /* held back, any order */
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
	struct hlink gl;          /* f->by_guid */
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
	struct hlink hl;
	uint32_t sw;
	uint16_t mlid;
	struct imc_portmask mask;
};

struct att;

/* The QPs of one HCA port attached to (MLID, MGID), in attach order. */
struct mgrp {
	struct hlink hl;
	struct port *port;
	uint16_t mlid;
	struct imc_gid mgid;
	struct att *head, *tail;
};

struct att {
	struct att *next, *prev;  /* in the group */
	struct att *qnext;        /* in the QP */
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
	struct att *atts;
	struct hlink hl;          /* f->qps, by (port, QPN) */
	struct imc_qp *next, *prev;  /* f's list, in creation order */
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

	struct htab qps, mft, grps, by_guid;
	struct imc_qp *qp_head, *qp_tail;
	struct imc_qp *cur_qp;    /* QP whose recv callback runs */

	struct pkt *free_pkts[2]; /* by size class */
	struct pend *free_pends;
	struct pend *loops;       /* LOOP pends */
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

/* ---- names ---- */

unsigned imc_mtu_bytes(unsigned mtu_code)
{
	if (mtu_code < IMC_MTU_256 || mtu_code > IMC_MTU_4096)
		return 0;
	return 128u << mtu_code;
}

const char *imc_port_state_str(enum imc_port_state s)
{
	switch (s) {
	case IMC_PORT_DOWN:
		return "DOWN";
	case IMC_PORT_INIT:
		return "INIT";
	case IMC_PORT_ARMED:
		return "ARMED";
	case IMC_PORT_ACTIVE:
		return "ACTIVE";
	}
	return "?";
}

const char *imc_port_event_str(enum imc_port_event ev)
{
	switch (ev) {
	case IMC_PORT_EV_ACTIVE:
		return "active";
	case IMC_PORT_EV_DOWN:
		return "down";
	case IMC_PORT_EV_LID_CHANGE:
		return "lid-change";
	case IMC_PORT_EV_SM_CHANGE:
		return "sm-change";
	case IMC_PORT_EV_CLIENT_REREGISTER:
		return "client-reregister";
	case IMC_PORT_EV_PKEY_CHANGE:
		return "pkey-change";
	}
	return "?";
}

const char *imc_drop_str(enum imc_drop d)
{
	static const char *const names[IMC_DROP__COUNT] = {
		[IMC_DROP_LINK_DOWN] = "link-down",
		[IMC_DROP_LOSS] = "loss",
		[IMC_DROP_NO_ROUTE] = "no-route",
		[IMC_DROP_NO_MFT] = "no-mft",
		[IMC_DROP_PORT_STATE] = "port-state",
		[IMC_DROP_DLID] = "dlid",
		[IMC_DROP_PKEY] = "pkey",
		[IMC_DROP_QKEY] = "qkey",
		[IMC_DROP_NO_QP] = "no-qp",
		[IMC_DROP_RQ_FULL] = "rq-full",
		[IMC_DROP_MTU] = "mtu",
	};

	if ((unsigned)d >= IMC_DROP__COUNT)
		return "?";
	return names[d];
}

void imc_fabric_config_default(struct imc_fabric_config *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->link.latency = 100;
	c->link.bits_per_sec = 0;
	c->mtu = IMC_MTU_2048;
	c->rate = 7;                      /* 40 Gb/s, IBA 15.2.5.16 rate code */
	c->rq_depth = 512;
	c->subnet_prefix = 0xfe80000000000000ull;
	c->sm_sweep_delay = IMC_NSEC_PER_MSEC;
}

/* ---- trace ---- */

static void trace(struct imc_fabric *f, imc_time_t now, unsigned ev,
		  const struct port *at, uint64_t serial)
{
	const uint64_t prime = 0x100000001b3ull;  /* FNV-1a's, per word */
	uint64_t h = f->hash;

	h = (h ^ now) * prime;
	h = (h ^ ((uint64_t)at->gidx << 8 | ev)) * prime;
	h = (h ^ serial) * prime;
	f->hash = h ^ (h >> 29);
}

/* ---- datagrams and pends ---- */

/* A datagram with room for len payload bytes, one reference. */
static struct pkt *pkt_new(struct imc_fabric *f, size_t len)
{
	unsigned large = len > BUF_SMALL;
	struct pkt *p = f->free_pkts[large];

	if (p) {
		f->free_pkts[large] = p->next;
	} else {
		p = aligned_alloc(64, sizeof(*p) +
				      (large ? BUF_LARGE : BUF_SMALL));
		if (!p)
			return NULL;
		p->large = (uint8_t)large;
	}
	p->refs = 1;
	return p;
}

/* One more reference, for a copy. */
static struct pkt *pkt_ref(struct pkt *p)
{
	p->refs++;
	return p;
}

static void pkt_unref(struct imc_fabric *f, struct pkt *p)
{
	if (--p->refs)
		return;
	p->next = f->free_pkts[p->large];
	f->free_pkts[p->large] = p;
}

static void pend_fire(struct imc_timer *t);

static void pend_state(struct pend *e, enum pend_state s)
{
	e->state = s;
}

static struct pend *pend_get(struct imc_fabric *f)
{
	struct pend *e = f->free_pends;

	if (e) {
		f->free_pends = e->next;
		return e;
	}
	e = malloc(sizeof(*e));
	if (e) {
		e->f = f;
		imc_timer_init(&e->t, pend_fire);
		e->state = PEND_FREE;
	}
	return e;
}

/* Back to the free list; its timer is not armed any more. */
static void pend_put(struct imc_fabric *f, struct pend *e)
{
	pend_state(e, PEND_FREE);
	e->p = NULL;
	e->next = f->free_pends;
	f->free_pends = e;
}

static void pend_link(struct pend **head, struct pend *e)
{
	e->prev = NULL;
	e->next = *head;
	if (*head)
		(*head)->prev = e;
	*head = e;
}

static void pend_unlink(struct pend **head, struct pend *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		*head = e->next;
	if (e->next)
		e->next->prev = e->prev;
}

static void count_drop(struct imc_fabric *f, struct port *at,
		       enum imc_drop why, uint64_t serial)
{
	at->c.drops[why]++;
	f->tot.drops[why]++;
	trace(f, imc_loop_now(f->loop), TR_DROP + why, at, serial);
}

/* Counts the drop of one reference and lets it go. */
static void drop(struct imc_fabric *f, struct pkt *p, struct port *at,
		 enum imc_drop why)
{
	if (p->dqpn <= 1)
		f->tot.mad_drops++;
	count_drop(f, at, why, p->serial);
	pkt_unref(f, p);
}

/* ---- ports and events ---- */

static struct port *port_at(const struct imc_fabric *f, uint32_t node,
			    unsigned port)
{
	if (node >= f->nnodes || port > f->nodes[node].nports)
		return NULL;
	return &f->nodes[node].port[port];
}

static struct hport *hca_port(const struct imc_fabric *f, uint32_t node,
			      unsigned port)
{
	struct port *p = port_at(f, node, port);

	return p ? p->h : NULL;
}

static void ev_fire(struct imc_timer *t);

/* Queues ev for the port's watches; they hear it from the loop. */
static void post(struct imc_fabric *f, struct hport *h, enum imc_port_event ev)
{
	if (h->ev_len == h->ev_cap) {
		unsigned cap = h->ev_cap ? h->ev_cap * 2 : 4;
		struct evq_ent *q = malloc(cap * sizeof(*q));

		if (!q)
			return;
		for (unsigned i = 0; i < h->ev_len; i++)
			q[i] = h->evq[(h->ev_head + i) % h->ev_cap];
		free(h->evq);
		h->evq = q;
		h->ev_cap = cap;
		h->ev_head = 0;
	}
	h->evq[(h->ev_head + h->ev_len) % h->ev_cap] =
		(struct evq_ent){ ev, f->watch_seq };
	h->ev_len++;
	if (!imc_timer_armed(&h->ev_timer))
		imc_timer_arm(f->loop, &h->ev_timer, imc_loop_now(f->loop));
}

/* Runs the events queued before this firing; events posted by the
 * callbacks wait for the next one. A callback may unwatch any watch:
 * imc_fabric_port_unwatch moves w_iter past the one it removes. */
static void ev_fire(struct imc_timer *t)
{
	struct hport *h = imc_container_of(t, struct hport, ev_timer);
	unsigned n = h->ev_len;

	while (n-- && h->ev_len) {
		struct evq_ent e = h->evq[h->ev_head];
		struct imc_port_watch *w;

		h->ev_head = (h->ev_head + 1) % h->ev_cap;
		h->ev_len--;
		for (w = h->w_head; w; w = h->w_iter) {
			h->w_iter = w->next;
			if (w->seq <= e.seq)
				w->cb(w, e.ev);
		}
	}
}

static bool port_can(enum imc_port_state from, enum imc_port_state to)
{
	switch (to) {
	case IMC_PORT_DOWN:
		return from != IMC_PORT_DOWN;
	case IMC_PORT_INIT:
		return from == IMC_PORT_DOWN;
	case IMC_PORT_ARMED:
		return from == IMC_PORT_INIT;
	case IMC_PORT_ACTIVE:
		return from != IMC_PORT_ACTIVE;
	}
	return false;
}

static void port_state(struct imc_fabric *f, struct port *p,
		       enum imc_port_state s)
{
	enum imc_port_state old = p->state;

	if (!port_can(old, s))
		return;
	p->state = s;
	if (s == IMC_PORT_ACTIVE && !f->cfg.external_sm)
		p->sm_lid = f->sm_lid;
	if (f->mad)
		fab_mad_port_changed(f->mad, p->node->idx, p->num, old, s);
	if (!p->h)
		return;
	if (s == IMC_PORT_ACTIVE)
		post(f, p->h, IMC_PORT_EV_ACTIVE);
	else if (old == IMC_PORT_ACTIVE)
		post(f, p->h, IMC_PORT_EV_DOWN);
}

/* ---- cables ---- */

static void dir_params(struct dir *d, const struct imc_link_params *lp,
		       unsigned width)
{
	uint64_t bps = lp->bits_per_sec;

	d->p = *lp;
	if (!bps)
		bps = (uint64_t)(width ? width : 4) * QDR_LANE_BPS * 1000000ull;
	d->p.bits_per_sec = bps;
	d->latency = lp->latency;
	d->ps_per_byte = (8000000000000ull + bps - 1) / bps;
	d->faulty = lp->loss > 0 || lp->dup > 0 || lp->reorder > 0;
}

static bool params_ok(const struct imc_link_params *p)
{
	/* Written so that NaN fails every test. Delays past
	 * IMC_TIME_LIMIT would wrap the 64-bit sums of arrival times. */
	return p->loss >= 0 && p->loss <= 1 && p->dup >= 0 && p->dup <= 1 &&
	       p->reorder >= 0 && p->reorder <= 1 &&
	       p->latency <= IMC_TIME_LIMIT &&
	       p->reorder_delay <= IMC_TIME_LIMIT;
}

/* Doubles d's ring (RING_MIN at first), keeping the order. */
static int ring_grow(struct dir *d)
{
	uint32_t cap = d->ring ? (d->rmask + 1) * 2 : RING_MIN;
	struct hop *r;

	if (!cap)
		return -ENOMEM;
	r = malloc((size_t)cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->rlen; i++)
		r[i] = d->ring[(d->rhead + i) & d->rmask];
	free(d->ring);
	d->ring = r;
	d->rhead = 0;
	d->rmask = cap - 1;
	return 0;
}

/* Puts p (a reference the caller gives) on d to arrive at time at, on
 * the direction's ring or, held back, on a timer of its own. Returns
 * false (p dropped) when there is no room for it. */
static bool launch(struct imc_fabric *f, struct pkt *p, struct dir *d,
		   imc_time_t at, bool held)
{
	if (held) {
		struct pend *e = pend_get(f);

		if (!e || imc_timer_arm(f->loop, &e->t, at)) {
			if (e)
				pend_put(f, e);
			drop(f, p, d->from, IMC_DROP_LOSS);
			return false;
		}
		e->p = p;
		e->dir = d;
		e->to = d->to;
		pend_state(e, PEND_HELD);
		pend_link(&d->held, e);
		return true;
	}
	/* Nothing overtakes on a wire, even when the latency just fell. */
	if (d->rlen) {
		imc_time_t last = d->ring[(d->rhead + d->rlen - 1) &
					  d->rmask].at;

		if (at < last)
			at = last;
	}
	if ((!d->ring || d->rlen > d->rmask) && ring_grow(d)) {
		drop(f, p, d->from, IMC_DROP_LOSS);
		return false;
	}
	if (!d->rlen && imc_timer_arm(f->loop, &d->t, at)) {
		drop(f, p, d->from, IMC_DROP_LOSS);
		return false;
	}
	d->ring[(d->rhead + d->rlen++) & d->rmask] = (struct hop){ at, p };
	return true;
}

static void capture(struct imc_fabric *f, const struct pkt *p,
		    imc_time_t now)
{
	struct imc_ud_packet u;
	int n;

	memset(&u, 0, sizeof(u));
	u.lrh.sl = p->sl;
	u.lrh.dlid = p->dlid;
	u.lrh.slid = p->slid;
	u.has_grh = p->has_grh;
	u.grh.tclass = p->tclass;
	u.grh.flow_label = p->flow_label;
	u.grh.hop_limit = p->hop_limit;
	u.grh.sgid = p->sgid;
	u.grh.dgid = p->dgid;
	u.bth.opcode = IMC_BTH_OP_UD_SEND_ONLY;
	u.bth.pkey = p->pkey;
	u.bth.dest_qp = p->dqpn;
	u.bth.psn = p->psn;
	u.deth.qkey = p->qkey;
	u.deth.src_qp = p->sqpn;
	u.payload = p->data;
	u.payload_len = p->len;
	n = imc_ud_packet_build(&u, f->frame, FRAME_MAX);
	if (n > 0)
		imc_pcap_write(f->cap, now, f->frame, (size_t)n);
}

/* Sends p out of port out, whose cable is up and state ACTIVE. Consumes
 * the reference: on the wire, or dropped by the loss fault. */
static void xmit(struct imc_fabric *f, struct pkt *p, struct port *out,
		 imc_time_t now)
{
	struct dir *d = out->out;
	imc_time_t start = d->busy_until > now ? d->busy_until : now;
	imc_time_t end = start + (p->wire * d->ps_per_byte + 999) / 1000;
	imc_time_t at = end + d->latency;

	d->busy_until = end;
	d->c.packets++;
	d->c.bytes += p->wire;
	out->c.tx_packets++;
	out->c.tx_bytes += p->wire;
	if (f->cap && (f->cap_node == IMC_TOPO_NONE ||
		       (f->cap_node == out->node->idx && f->cap_port == out->num)))
		capture(f, p, now);
	if (d->faulty) {
		/* One draw each, whatever the outcome, so that a stream's
		 * position depends only on the packets sent into it. */
		bool lost = imc_rng_chance(&d->rng, d->p.loss);
		bool dup = imc_rng_chance(&d->rng, d->p.dup);
		bool late = imc_rng_chance(&d->rng, d->p.reorder);
		struct pkt *q = NULL;

		if (lost) {
			d->c.lost++;
			drop(f, p, out, IMC_DROP_LOSS);
			return;
		}
		if (dup)
			q = pkt_ref(p);
		if (late) {
			d->c.reordered++;
			at += d->p.reorder_delay;
		}
		/* A held packet's copy is held with it. */
		if (!launch(f, p, d, at, late)) {
			if (q)
				pkt_unref(f, q);
			return;
		}
		if (q) {
			/* The copy lands right behind the original. */
			d->c.duplicated++;
			launch(f, q, d, at, late);
		}
		return;
	}
	launch(f, p, d, at, false);
}

/* The egress checks of a port, then xmit. Consumes p. */
static void egress(struct imc_fabric *f, struct pkt *p, struct port *out,
		   imc_time_t now)
{
	if (!out->out || !out->out->up) {
		drop(f, p, out, IMC_DROP_LINK_DOWN);
		return;
	}
	if (out->state != IMC_PORT_ACTIVE) {
		drop(f, p, out, IMC_DROP_PORT_STATE);
		return;
	}
	if (p->len > out->mtu_bytes) {
		drop(f, p, out, IMC_DROP_MTU);
		return;
	}
	xmit(f, p, out, now);
}

/* ---- switches ---- */

static uint64_t mft_hash(uint32_t sw, uint16_t mlid)
{
	return mix64((uint64_t)sw << 16 | mlid);
}

static struct mft_ent *mft_find(const struct imc_fabric *f, uint32_t sw,
				uint16_t mlid)
{
	uint64_t h = mft_hash(sw, mlid);

	for (struct hlink *l = ht_head(&f->mft, h); l; l = l->next) {
		struct mft_ent *e = imc_container_of(l, struct mft_ent, hl);

		if (l->hash == h && e->sw == sw && e->mlid == mlid)
			return e;
	}
	return NULL;
}

/* IBA 18.2.4.4: a multicast packet leaves by every port of the MFT entry
 * except the one it came in on. */
static void forward_mcast(struct imc_fabric *f, struct pkt *p,
			  struct port *in, imc_time_t now)
{
	struct node *sw = in->node;
	struct mft_ent *e = mft_find(f, sw->idx, p->dlid);
	struct port *prev = NULL;

	if (!e) {
		drop(f, p, in, IMC_DROP_NO_MFT);
		return;
	}
	for (unsigned w = 0; w < 4; w++) {
		uint64_t bits = e->mask.bits[w];

		while (bits) {
			unsigned b = w * 64 + (unsigned)__builtin_ctzll(bits);
			struct port *o;

			bits &= bits - 1;
			if (b == in->num || b == 0 || b > sw->nports)
				continue;
			o = &sw->port[b];
			if (prev)
				egress(f, pkt_ref(p), prev, now);
			prev = o;
		}
	}
	if (prev)
		egress(f, p, prev, now);
	else
		pkt_unref(f, p);
}

static void recv_of(const struct pkt *p, struct imc_ud_recv *r);

/* A datagram for QP0/QP1 at port to, offered to the port's MAD agents
 * and PMA first (fabric_mad.h). Consumes p and returns true when one of
 * them took it. */
static bool mad_in(struct imc_fabric *f, struct pkt *p, struct port *to)
{
	struct imc_ud_recv r;

	if (!f->mad || p->dqpn > IMC_QP1)
		return false;
	recv_of(p, &r);
	if (!fab_mad_gmp_in(f->mad, to->node->idx, to->num, &r, p->dqpn))
		return false;
	f->tot.delivered++;
	f->tot.mad_delivered++;
	trace(f, imc_loop_now(f->loop), TR_DELIVER, to, p->serial);
	pkt_unref(f, p);
	return true;
}

static void forward(struct imc_fabric *f, struct pkt *p, struct port *in,
		    imc_time_t now)
{
	struct node *sw = in->node;
	unsigned out;

	if (imc_lid_is_mcast(p->dlid)) {
		forward_mcast(f, p, in, now);
		return;
	}
	out = p->dlid < sw->lft_len ? sw->lft[p->dlid] : IMC_PORT_NONE;
	if (out == IMC_PORT_NONE || out > sw->nports) {
		drop(f, p, in, IMC_DROP_NO_ROUTE);
		return;
	}
	if (out == 0) {
		/* For the switch itself: its PMA or an agent on port 0. */
		if (!mad_in(f, p, &sw->port[0]))
			drop(f, p, in, IMC_DROP_NO_QP);
		return;
	}
	egress(f, p, &sw->port[out], now);
}

/* ---- HCA ports ---- */

/* IBA 10.9.3: P_Keys match when their low 15 bits are equal (and not 0)
 * and at least one of the two has the full membership bit. */
static bool pkey_match(uint16_t a, uint16_t b)
{
	return (a & 0x7fff) == (b & 0x7fff) && (a & 0x7fff) &&
	       ((a | b) & 0x8000);
}

static bool pkey_in_table(const struct hport *h, uint16_t pkey)
{
	for (unsigned i = 0; i < h->npkeys; i++)
		if (pkey_match(h->pkeys[i], pkey))
			return true;
	return false;
}

static uint64_t qp_hash(const struct port *p, uint32_t qpn)
{
	return mix64((uint64_t)p->gidx << 24 | qpn);
}

static struct imc_qp *qp_find(const struct imc_fabric *f,
			      const struct port *p, uint32_t qpn)
{
	uint64_t h = qp_hash(p, qpn);

	for (struct hlink *l = ht_head(&f->qps, h); l; l = l->next) {
		struct imc_qp *qp = imc_container_of(l, struct imc_qp, hl);

		if (l->hash == h && qp->port == p && qp->qpn == qpn)
			return qp;
	}
	return NULL;
}

static uint64_t grp_hash(const struct port *p, uint16_t mlid,
			 const struct imc_gid *mgid)
{
	uint64_t h = mix64((uint64_t)p->gidx << 16 | mlid);

	h = mix64(h ^ imc_get64(mgid->raw));
	return mix64(h ^ imc_get64(mgid->raw + 8));
}

static struct mgrp *grp_find(const struct imc_fabric *f, const struct port *p,
			     uint16_t mlid, const struct imc_gid *mgid)
{
	uint64_t h = grp_hash(p, mlid, mgid);

	for (struct hlink *l = ht_head(&f->grps, h); l; l = l->next) {
		struct mgrp *g = imc_container_of(l, struct mgrp, hl);

		if (l->hash == h && g->port == p && g->mlid == mlid &&
		    !memcmp(&g->mgid, mgid, sizeof(*mgid)))
			return g;
	}
	return NULL;
}

static void done_fire(struct imc_timer *t);

/* The QP-level checks (IBA 10.9.3 P_Key of the QP, 10.2.5 Q_Key), then
 * the receive queue. Consumes p. */
/* Grows qp's receive ring out of the QP (RING_MIN), then doubles it,
 * keeping the order. */
static int rq_grow(struct imc_qp *qp)
{
	unsigned cap = qp->rq_cap < RING_MIN ? RING_MIN : qp->rq_cap * 2;
	struct pkt **r = malloc(cap * sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (unsigned i = 0; i < qp->rq_len; i++)
		r[i] = qp->rq[(qp->rq_head + i) & (qp->rq_cap - 1)];
	if (qp->rq != qp->rq_inline)
		free(qp->rq);
	qp->rq = r;
	qp->rq_head = 0;
	qp->rq_cap = cap;
	return 0;
}

static struct pkt *rq_pop(struct imc_qp *qp)
{
	struct pkt *p = qp->rq[qp->rq_head];

	qp->rq_head = (qp->rq_head + 1) & (qp->rq_cap - 1);
	qp->rq_len--;
	return p;
}

static void qp_rx(struct imc_fabric *f, struct imc_qp *qp, struct pkt *p,
		  imc_time_t now)
{
	struct port *in = qp->port;

	/* The GSI takes any P_Key of the port's table (IBA 13.5). */
	if (qp->qpn != IMC_QP1 && !pkey_match(qp->pkey, p->pkey)) {
		drop(f, p, in, IMC_DROP_PKEY);
		return;
	}
	if (p->qkey != qp->qkey) {
		drop(f, p, in, IMC_DROP_QKEY);
		return;
	}
	if (qp->rq_len >= f->cfg.rq_depth) {
		drop(f, p, in, IMC_DROP_RQ_FULL);
		return;
	}
	if (qp->rq_len == qp->rq_cap && rq_grow(qp)) {
		drop(f, p, in, IMC_DROP_RQ_FULL);
		return;
	}
	qp->rq[(qp->rq_head + qp->rq_len++) & (qp->rq_cap - 1)] = p;
	if (!imc_timer_armed(&qp->done))
		imc_timer_arm(f->loop, &qp->done, now + qp->recv_delay);
}

/* Checks at an HCA port in the order of the layers: link (port state,
 * DLID, length against the MTU), then transport (P_Key, QPN, Q_Key). */
static void deliver(struct imc_fabric *f, struct pkt *p, struct port *in,
		    imc_time_t now)
{
	bool mcast = imc_lid_is_mcast(p->dlid);
	struct imc_qp *qp;
	struct mgrp *g;
	struct att *a;

	if (!mcast && p->dlid != in->lid) {
		drop(f, p, in, IMC_DROP_DLID);
		return;
	}
	if (p->len > in->mtu_bytes) {
		drop(f, p, in, IMC_DROP_MTU);
		return;
	}
	if (!pkey_in_table(in->h, p->pkey)) {
		drop(f, p, in, IMC_DROP_PKEY);
		return;
	}
	if (!mcast) {
		if (p->dqpn <= IMC_QP1 && mad_in(f, p, in))
			return;
		qp = qp_find(f, in, p->dqpn);
		if (!qp) {
			drop(f, p, in, IMC_DROP_NO_QP);
			return;
		}
		qp_rx(f, qp, p, now);
		return;
	}
	/* IBA 10.5.2.5: every QP of the port attached to the group gets a
	 * copy; the group is (MLID, GRH DGID), so multicast needs the GRH
	 * and DestQP 0xFFFFFF. The port remembers the last group with one
	 * QP, which spares the lookup when the same group comes again. */
	if (!p->has_grh || p->dqpn != IMC_MCAST_QPN) {
		drop(f, p, in, IMC_DROP_NO_QP);
		return;
	}
	if (in->mc_qp && in->mc_mlid == p->dlid &&
	    !memcmp(&in->mc_mgid, &p->dgid, sizeof(p->dgid))) {
		qp_rx(f, in->mc_qp, p, now);
		return;
	}
	g = grp_find(f, in, p->dlid, &p->dgid);
	if (!g || !g->head) {
		drop(f, p, in, IMC_DROP_NO_QP);
		return;
	}
	if (!g->head->next) {
		in->mc_qp = g->head->qp;
		in->mc_mlid = g->mlid;
		in->mc_mgid = g->mgid;
	}
	for (a = g->head; a->next; a = a->next)
		qp_rx(f, a->qp, pkt_ref(p), now);
	qp_rx(f, a->qp, p, now);
}

/* p reached in: the far end of a cable (hop), or its own port, looped
 * back. */
static void arrive(struct imc_fabric *f, struct pkt *p, struct port *in,
		   imc_time_t now, bool hop)
{
	if (hop) {
		f->tot.hops++;
		in->c.rx_packets++;
		in->c.rx_bytes += p->wire;
		trace(f, now, TR_HOP, in, p->serial);
	}
	if (in->state != IMC_PORT_ACTIVE) {
		drop(f, p, in, IMC_DROP_PORT_STATE);
		return;
	}
	/* Only HCA ports have h: no need to read the node. */
	if (!in->h)
		forward(f, p, in, now);
	else
		deliver(f, p, in, now);
}

/* A direction's timer: its first datagrams arrived. Forwarding never
 * sends into the direction a datagram came by, so d's ring only shrinks
 * here. */
static void dir_fire(struct imc_timer *t)
{
	struct dir *d = imc_container_of(t, struct dir, t);
	struct imc_fabric *f = d->f;
	imc_time_t now = imc_loop_now(f->loop);

	while (d->rlen && d->ring[d->rhead].at <= now) {
		struct pkt *p = d->ring[d->rhead].p;

		d->rhead = (d->rhead + 1) & d->rmask;
		d->rlen--;
		arrive(f, p, d->to, now, true);
	}
	if (d->rlen)
		imc_timer_arm(f->loop, &d->t, d->ring[d->rhead].at);
}

/* A pend's timer: held back on a cable, or looped back. */
static void pend_fire(struct imc_timer *t)
{
	struct pend *e = imc_container_of(t, struct pend, t);
	struct imc_fabric *f = e->f;
	struct pkt *p = e->p;
	struct port *to = e->to;
	bool hop = e->state == PEND_HELD;

	if (hop)
		pend_unlink(&e->dir->held, e);
	else
		pend_unlink(&f->loops, e);
	pend_put(f, e);
	arrive(f, p, to, imc_loop_now(f->loop), hop);
}

/* Drops what is in flight on d: the cable went down under it. */
static void dir_flush(struct imc_fabric *f, struct dir *d)
{
	imc_timer_cancel(f->loop, &d->t);
	while (d->rlen) {
		struct pkt *p = d->ring[d->rhead].p;

		d->rhead = (d->rhead + 1) & d->rmask;
		d->rlen--;
		drop(f, p, d->from, IMC_DROP_LINK_DOWN);
	}
	while (d->held) {
		struct pend *e = d->held;
		struct pkt *p = e->p;

		pend_unlink(&d->held, e);
		imc_timer_cancel(f->loop, &e->t);
		pend_put(f, e);
		drop(f, p, d->from, IMC_DROP_LINK_DOWN);
	}
	d->busy_until = 0;
}

/* ---- the SM ---- */

/* Copies LIDs and LFTs from the subnet after it routed. */
static void sync_subnet(struct imc_fabric *f)
{
	f->sm_lid = imc_subnet_sm_lid(f->sn);
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct node *n = &f->nodes[i];

		if (n->type == IMC_NODE_SWITCH) {
			size_t len = 0;
			const uint8_t *lft = imc_subnet_lft_table(f->sn, i, &len);
			int lid = imc_subnet_lid(f->sn, i, 0);

			n->lid = lid > 0 ? (uint16_t)lid : 0;
			for (unsigned p = 0; p <= n->nports; p++)
				n->port[p].lid = n->lid;
			if (len > n->lft_len) {
				uint8_t *nl = realloc(n->lft, len);

				if (!nl)
					len = n->lft_len;
				else
					n->lft = nl;
			}
			if (lft && len)
				memcpy(n->lft, lft, len);
			n->lft_len = lft ? len : 0;
		} else {
			for (unsigned p = 1; p <= n->nports; p++) {
				int lid = imc_subnet_lid(f->sn, i, p);

				n->port[p].lid = lid > 0 ? (uint16_t)lid : 0;
			}
		}
	}
}

/* Brings up every port whose cable is up: the end of a sweep. An HCA
 * port needs a LID (the SM reached it). */
static void activate(struct imc_fabric *f)
{
	for (uint32_t i = 0; i < f->nports; i++) {
		struct port *p = &f->ports[i];

		if (p->num == 0 && p->node->type == IMC_NODE_SWITCH) {
			/* The management port is up once the SM knows it. */
			if (p->lid)
				port_state(f, p, IMC_PORT_ACTIVE);
			continue;
		}
		if (!p->out || !p->out->up || p->state == IMC_PORT_ACTIVE)
			continue;
		if (p->h && !p->lid)
			continue;
		port_state(f, p, IMC_PORT_ACTIVE);
	}
}

static void sweep_fire(struct imc_timer *t)
{
	struct imc_fabric *f = imc_container_of(t, struct imc_fabric, sweep);

	imc_subnet_sweep(f->sn);
	sync_subnet(f);
	activate(f);
}

/* External SM: a cable that is up trains to LinkUp, and its ports wait
 * in INIT for the SM (IBA 7.2); a switch's port 0 is INIT too. */
static void init_ports(struct imc_fabric *f)
{
	for (uint32_t i = 0; i < f->nports; i++) {
		struct port *p = &f->ports[i];

		if ((p->num == 0 && p->node->type == IMC_NODE_SWITCH) ||
		    (p->out && p->out->up))
			port_state(f, p, IMC_PORT_INIT);
	}
}

int imc_fabric_bring_up(struct imc_fabric *f)
{
	int rc;

	if (f->cfg.external_sm) {
		init_ports(f);
		return 0;
	}
	rc = imc_subnet_sweep(f->sn);

	if (rc < 0 && rc != -ENOSPC)
		return rc;
	sync_subnet(f);
	activate(f);
	return rc < 0 ? rc : 0;
}

/* ---- create and destroy ---- */

static bool config_ok(const struct imc_fabric_config *c)
{
	return params_ok(&c->link) && imc_mtu_bytes(c->mtu) && c->rate &&
	       c->rate <= 0x3f && c->rq_depth &&
	       c->sm_sweep_delay <= IMC_TIME_LIMIT;
}

/* n zeroed elements of size bytes (a multiple of 64) on a cache line. */
static void *zalloc64(size_t n, size_t size)
{
	void *p;

	if (n > SIZE_MAX / size)
		return NULL;
	p = aligned_alloc(64, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

static int build(struct imc_fabric *f)
{
	const struct imc_topo *t = f->topo;
	uint32_t np = 0, nh = 0, nd = 0, gi = 0, hi = 0, di = 0;
	struct imc_rng root;
	int err;

	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];

		np += tn->nports + 1u;
		for (unsigned p = 1; p <= tn->nports; p++) {
			if (tn->port[p].peer != IMC_TOPO_NONE)
				nd++;
			if (tn->type == IMC_NODE_HCA)
				nh++;
		}
	}
	f->nnodes = t->nnodes;
	f->nodes = calloc(t->nnodes ? t->nnodes : 1, sizeof(*f->nodes));
	f->ports = zalloc64(np ? np : 1, sizeof(*f->ports));
	f->dirs = zalloc64(nd ? nd : 1, sizeof(*f->dirs));
	f->hports = calloc(nh ? nh : 1, sizeof(*f->hports));
	if (!f->nodes || !f->ports || !f->dirs || !f->hports)
		return -ENOMEM;
	f->nports = np;
	f->nhports = nh;
	err = ht_init(&f->by_guid, 64);
	if (!err)
		err = ht_init(&f->qps, 64);
	if (!err)
		err = ht_init(&f->mft, 64);
	if (!err)
		err = ht_init(&f->grps, 64);
	if (err)
		return err;

	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];
		struct node *n = &f->nodes[i];

		n->type = tn->type;
		n->idx = i;
		n->nports = tn->nports;
		n->port = &f->ports[gi];
		for (unsigned p = 0; p <= tn->nports; p++) {
			struct port *po = &f->ports[gi];

			po->node = n;
			po->gidx = gi++;
			po->num = (uint8_t)p;
			po->state = IMC_PORT_DOWN;
			po->mtu = (uint8_t)f->cfg.mtu;
			po->mtu_bytes = imc_mtu_bytes(f->cfg.mtu);
			po->rate = (uint8_t)f->cfg.rate;
			if (tn->type == IMC_NODE_HCA && p > 0) {
				struct hport *h = &f->hports[hi++];

				h->f = f;
				h->port = po;
				h->npkeys = 1;
				h->pkeys[0] = IMC_PKEY_DEFAULT;
				h->next_qpn = 2;
				imc_timer_init(&h->ev_timer, ev_fire);
				po->h = h;
				ht_add(&f->by_guid, &h->gl,
				       mix64(tn->port[p].guid));
			}
		}
	}

	/* Streams split in a fixed order: by node index, then port. */
	imc_rng_seed(&root, f->cfg.seed);
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];

		for (unsigned p = 1; p <= tn->nports; p++) {
			const struct imc_topo_port *tp = &tn->port[p];
			struct dir *d;

			if (tp->peer == IMC_TOPO_NONE)
				continue;
			if (tp->peer >= t->nnodes ||
			    tp->peer_port > t->node[tp->peer].nports)
				return -EINVAL;
			d = &f->dirs[di++];
			d->from = &f->nodes[i].port[p];
			d->to = &f->nodes[tp->peer].port[tp->peer_port];
			d->up = true;
			d->f = f;
			imc_timer_init(&d->t, dir_fire);
			dir_params(d, &f->cfg.link, tp->width);
			imc_rng_split(&root, &d->rng);
			d->from->out = d;
		}
	}
	return 0;
}

int imc_fabric_create(const struct imc_topo *topo, struct imc_loop *loop,
		      const struct imc_fabric_config *cfg,
		      struct imc_fabric **out)
{
	struct imc_fabric_config def;
	struct imc_fabric *f;
	int err;

	*out = NULL;
	if (!cfg) {
		imc_fabric_config_default(&def);
		cfg = &def;
	}
	if (!topo || !loop || !config_ok(cfg))
		return -EINVAL;
	if (topo->sm_node >= topo->nnodes && !cfg->external_sm)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->topo = topo;
	f->loop = loop;
	f->cfg = *cfg;
	f->sm_node = topo->sm_node;
	f->sm_port = topo->sm_port;
	imc_timer_init(&f->sweep, sweep_fire);
	err = imc_subnet_create(topo, &f->sn);
	if (!err)
		err = build(f);
	if (!err) {
		f->frame = malloc(FRAME_MAX);
		if (!f->frame)
			err = -ENOMEM;
	}
	if (!err && cfg->external_sm) {
		f->lid_port = calloc(IMC_LID_UNICAST_MAX + 1,
				     sizeof(*f->lid_port));
		if (!f->lid_port)
			err = -ENOMEM;
	}
	if (!err)
		err = fab_mad_create(f, &f->mad);
	if (err) {
		imc_fabric_destroy(f);
		return err;
	}
	/* The seed acts on the trace only through the fault streams. */
	f->hash = 0xcbf29ce484222325ull;
	*out = f;
	return 0;
}

static void qp_free(struct imc_qp *qp);

void imc_fabric_destroy(struct imc_fabric *f)
{
	if (!f)
		return;
	fab_mad_destroy(f->mad);
	f->mad = NULL;
	free(f->lid_port);
	imc_timer_cancel(f->loop, &f->sweep);
	for (uint32_t i = 0; f->ports && i < f->nports; i++)
		if (f->ports[i].out)
			imc_timer_cancel(f->loop, &f->ports[i].out->t);
	while (f->qp_head)
		qp_free(f->qp_head);
	for (uint32_t i = 0; f->hports && i < f->nhports; i++) {
		struct hport *h = &f->hports[i];

		imc_timer_cancel(f->loop, &h->ev_timer);
		free(h->evq);
		for (struct imc_port_watch *w = h->w_head, *next; w; w = next) {
			next = w->next;
			w->next = w->prev = NULL;
			w->node = IMC_TOPO_NONE;
		}
	}
	/* What is still in flight goes back to the free lists, then all
	 * of them are freed. */
	for (uint32_t i = 0; f->ports && i < f->nports; i++) {
		struct dir *d = f->ports[i].out;

		if (!d)
			continue;
		for (; d->rlen; d->rlen--, d->rhead = (d->rhead + 1) & d->rmask)
			pkt_unref(f, d->ring[d->rhead].p);
		free(d->ring);
		while (d->held) {
			struct pend *e = d->held;

			pend_unlink(&d->held, e);
			imc_timer_cancel(f->loop, &e->t);
			pkt_unref(f, e->p);
			pend_put(f, e);
		}
	}
	while (f->loops) {
		struct pend *e = f->loops;

		pend_unlink(&f->loops, e);
		imc_timer_cancel(f->loop, &e->t);
		pkt_unref(f, e->p);
		pend_put(f, e);
	}
	while (f->free_pends) {
		struct pend *e = f->free_pends;

		f->free_pends = e->next;
		free(e);
	}
	for (int c = 0; c < 2; c++) {
		while (f->free_pkts[c]) {
			struct pkt *p = f->free_pkts[c];

			f->free_pkts[c] = p->next;
			free(p);
		}
	}
	if (f->mft.b) {
		for (size_t i = 0; i <= f->mft.mask; i++) {
			for (struct hlink *l = f->mft.b[i], *next; l; l = next) {
				next = l->next;
				free(imc_container_of(l, struct mft_ent, hl));
			}
		}
	}
	for (uint32_t i = 0; f->nodes && i < f->nnodes; i++)
		free(f->nodes[i].lft);
	free(f->mft.b);
	free(f->qps.b);
	free(f->grps.b);
	free(f->by_guid.b);
	free(f->frame);
	free(f->nodes);
	free(f->ports);
	free(f->dirs);
	free(f->hports);
	imc_subnet_destroy(f->sn);
	free(f);
}

const struct imc_topo *imc_fabric_topo(const struct imc_fabric *f)
{
	return f->topo;
}

struct imc_loop *imc_fabric_loop(const struct imc_fabric *f)
{
	return f->loop;
}

/* ---- ports ---- */

static void port_gid(const struct imc_fabric *f, const struct port *p,
		     struct imc_gid *gid)
{
	imc_put64(gid->raw, f->cfg.subnet_prefix);
	imc_put64(gid->raw + 8,
		  f->topo->node[p->node->idx].port[p->h ? p->num : 0].guid);
}

int imc_fabric_port_attr(const struct imc_fabric *f, uint32_t node,
			 unsigned port, struct imc_port_attr *out)
{
	const struct port *p = port_at(f, node, port);
	const struct imc_topo_node *tn;

	if (!p || (p->node->type == IMC_NODE_HCA && port == 0))
		return -EINVAL;
	tn = &f->topo->node[node];
	memset(out, 0, sizeof(*out));
	out->state = p->state;
	out->lid = p->lid;
	out->sm_lid = p->sm_lid;
	/* A switch's ports share the GUID of its port 0. */
	out->guid = tn->port[p->h ? port : 0].guid;
	if (!out->guid)
		out->guid = tn->guid;
	imc_put64(out->gid.raw, f->cfg.subnet_prefix);
	imc_put64(out->gid.raw + 8, out->guid);
	out->mtu = p->mtu;
	out->rate = p->rate;
	if (p->h) {
		out->npkeys = p->h->npkeys;
		memcpy(out->pkeys, p->h->pkeys,
		       p->h->npkeys * sizeof(out->pkeys[0]));
	} else {
		out->npkeys = 1;
		out->pkeys[0] = IMC_PKEY_DEFAULT;
	}
	return 0;
}

int imc_fabric_port_by_gid(const struct imc_fabric *f,
			   const struct imc_gid *gid, uint32_t *node,
			   unsigned *port)
{
	uint64_t guid = imc_get64(gid->raw + 8), h = mix64(guid);

	if (imc_get64(gid->raw) != f->cfg.subnet_prefix)
		return -ENOENT;
	for (struct hlink *l = ht_head(&f->by_guid, h); l; l = l->next) {
		struct hport *hp = imc_container_of(l, struct hport, gl);
		const struct port *p = hp->port;

		if (l->hash == h &&
		    f->topo->node[p->node->idx].port[p->num].guid == guid) {
			*node = p->node->idx;
			*port = p->num;
			return 0;
		}
	}
	return -ENOENT;
}

int imc_fabric_port_by_lid(const struct imc_fabric *f, uint16_t lid,
			   uint32_t *node, unsigned *port)
{
	uint32_t n;
	unsigned p;

	if (lid == 0 || lid > IMC_LID_UNICAST_MAX)
		return -ENOENT;
	if (f->lid_port) {
		const struct port *po;

		if (!f->lid_port[lid])
			return -ENOENT;
		po = &f->ports[f->lid_port[lid] - 1];
		n = po->node->idx;
		p = po->num;
	} else if (imc_subnet_lid_owner(f->sn, lid, &n, &p)) {
		return -ENOENT;
	}
	if (f->nodes[n].type != IMC_NODE_HCA)
		return -ENOENT;
	*node = n;
	*port = p;
	return 0;
}

int imc_fabric_port_mtu_set(struct imc_fabric *f, uint32_t node,
			    unsigned port, unsigned mtu)
{
	struct port *p = port_at(f, node, port);

	if (!p || port == 0 || !imc_mtu_bytes(mtu))
		return -EINVAL;
	p->mtu = (uint8_t)mtu;
	p->mtu_bytes = imc_mtu_bytes(mtu);
	return 0;
}

int imc_fabric_port_watch(struct imc_fabric *f, uint32_t node, unsigned port,
			  struct imc_port_watch *w,
			  void (*cb)(struct imc_port_watch *w,
				     enum imc_port_event ev))
{
	struct hport *h = hca_port(f, node, port);

	if (!h || !cb)
		return -EINVAL;
	w->cb = cb;
	w->node = node;
	w->port = (uint8_t)port;
	w->seq = ++f->watch_seq;
	w->next = NULL;
	w->prev = h->w_tail;
	if (h->w_tail)
		h->w_tail->next = w;
	else
		h->w_head = w;
	h->w_tail = w;
	return 0;
}

void imc_fabric_port_unwatch(struct imc_fabric *f, struct imc_port_watch *w)
{
	struct hport *h = hca_port(f, w->node, w->port);

	if (!h || (!w->prev && h->w_head != w))
		return;
	if (h->w_iter == w)
		h->w_iter = w->next;
	if (w->prev)
		w->prev->next = w->next;
	else
		h->w_head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		h->w_tail = w->prev;
	w->next = w->prev = NULL;
	w->node = IMC_TOPO_NONE;
}

/* ---- SM-side events and faults ---- */

int imc_fabric_link_set(struct imc_fabric *f, uint32_t node, unsigned port,
			bool up)
{
	struct port *p = port_at(f, node, port);
	struct dir *d, *back;
	int err;

	if (!p || port == 0 || !p->out)
		return -EINVAL;
	d = p->out;
	back = d->to->out;
	if (d->up == up)
		return 0;
	err = imc_subnet_link_set(f->sn, node, port, up);
	if (err)
		return err;
	/* The PortStateChange a trap reports needs the new link state. */
	d->up = back->up = up;
	if (up) {
		port_state(f, d->from, IMC_PORT_INIT);
		port_state(f, d->to, IMC_PORT_INIT);
	} else {
		port_state(f, d->from, IMC_PORT_DOWN);
		port_state(f, d->to, IMC_PORT_DOWN);
		dir_flush(f, d);
		dir_flush(f, back);
	}
	/* An external SM hears of it by Trap 128 (fab_mad_port_changed). */
	if (f->cfg.external_sm)
		return 0;
	/* Changes within one sweep delay share a sweep: the SM reacts to
	 * the last trap, as a debounced heavy sweep. */
	imc_timer_arm(f->loop, &f->sweep,
		      imc_loop_now(f->loop) + f->cfg.sm_sweep_delay);
	return 0;
}

bool imc_fabric_link_up(const struct imc_fabric *f, uint32_t node,
			unsigned port)
{
	const struct port *p = port_at(f, node, port);

	return p && port && p->out && p->out->up;
}

int imc_fabric_link_params_set(struct imc_fabric *f, uint32_t node,
			       unsigned port, const struct imc_link_params *lp)
{
	struct port *p = port_at(f, node, port);
	const struct imc_topo_port *tp;

	if (!p || port == 0 || !p->out || !lp || !params_ok(lp))
		return -EINVAL;
	tp = &f->topo->node[node].port[port];
	dir_params(p->out, lp, tp->width);
	dir_params(p->out->to->out, lp, tp->width);
	return 0;
}

static void post_all_active(struct imc_fabric *f, enum imc_port_event ev)
{
	for (uint32_t i = 0; i < f->nhports; i++) {
		struct hport *h = &f->hports[i];

		if (h->port->state == IMC_PORT_ACTIVE)
			post(f, h, ev);
	}
}

static void sm_lid_changed(struct imc_fabric *f)
{
	for (uint32_t i = 0; i < f->nports; i++)
		if (f->ports[i].state == IMC_PORT_ACTIVE)
			f->ports[i].sm_lid = f->sm_lid;
	post_all_active(f, IMC_PORT_EV_SM_CHANGE);
}

int imc_fabric_sm_move(struct imc_fabric *f, uint32_t node, unsigned port)
{
	struct hport *h = hca_port(f, node, port);
	int err;

	if (f->cfg.external_sm)
		return -EOPNOTSUPP;
	if (!h || !h->port->lid)
		return -EINVAL;
	if (node == f->sm_node && port == f->sm_port)
		return 0;
	err = imc_subnet_sm_set(f->sn, node, port);
	if (err)
		return err;
	f->sm_node = node;
	f->sm_port = port;
	f->sm_lid = h->port->lid;
	sm_lid_changed(f);
	return 0;
}

int imc_fabric_sm_port(const struct imc_fabric *f, uint32_t *node,
		       unsigned *port)
{
	*node = f->sm_node;
	*port = f->sm_port;
	return 0;
}

int imc_fabric_client_reregister(struct imc_fabric *f, uint32_t node,
				 unsigned port)
{
	struct hport *h;

	if (node == IMC_TOPO_NONE) {
		post_all_active(f, IMC_PORT_EV_CLIENT_REREGISTER);
		return 0;
	}
	h = hca_port(f, node, port);
	if (!h)
		return -EINVAL;
	if (h->port->state != IMC_PORT_ACTIVE)
		return -ENETDOWN;
	post(f, h, IMC_PORT_EV_CLIENT_REREGISTER);
	return 0;
}

int imc_fabric_lid_change(struct imc_fabric *f, uint32_t node, unsigned port,
			  uint16_t lid)
{
	struct hport *h = hca_port(f, node, port);
	uint16_t old_sm = f->sm_lid;
	int err;

	if (f->cfg.external_sm)
		return -EOPNOTSUPP;
	if (!h || lid == 0 || lid > IMC_LID_UNICAST_MAX)
		return -EINVAL;
	if (h->port->lid == lid)
		return 0;
	err = imc_subnet_lid_set(f->sn, node, port, lid);
	if (err)
		return err;
	err = imc_subnet_route(f->sn);
	sync_subnet(f);
	if (h->port->state == IMC_PORT_ACTIVE)
		post(f, h, IMC_PORT_EV_LID_CHANGE);
	if (f->sm_lid != old_sm)
		sm_lid_changed(f);
	return err;
}

int imc_fabric_pkey_set(struct imc_fabric *f, uint32_t node, unsigned port,
			const uint16_t *pkeys, unsigned n)
{
	struct hport *h = hca_port(f, node, port);

	if (!h || n > IMC_PKEY_TABLE_MAX || (n && !pkeys))
		return -EINVAL;
	if (n)
		memcpy(h->pkeys, pkeys, n * sizeof(pkeys[0]));
	h->npkeys = n;
	post(f, h, IMC_PORT_EV_PKEY_CHANGE);
	return 0;
}

/* ---- MFT ---- */

static bool mask_empty(const struct imc_portmask *m)
{
	return !(m->bits[0] | m->bits[1] | m->bits[2] | m->bits[3]);
}

int imc_fabric_mft_set(struct imc_fabric *f, uint32_t switch_node,
		       uint16_t mlid, const struct imc_portmask *ports)
{
	struct mft_ent *e;

	if (switch_node >= f->nnodes ||
	    f->nodes[switch_node].type != IMC_NODE_SWITCH ||
	    !imc_lid_is_mcast(mlid) || !ports)
		return -EINVAL;
	e = mft_find(f, switch_node, mlid);
	if (mask_empty(ports)) {
		if (e) {
			ht_del(&f->mft, &e->hl);
			free(e);
		}
		return 0;
	}
	if (!e) {
		e = malloc(sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->sw = switch_node;
		e->mlid = mlid;
		ht_add(&f->mft, &e->hl, mft_hash(switch_node, mlid));
	}
	e->mask = *ports;
	return 0;
}

int imc_fabric_mft_get(const struct imc_fabric *f, uint32_t switch_node,
		       uint16_t mlid, struct imc_portmask *ports)
{
	const struct mft_ent *e;

	if (switch_node >= f->nnodes ||
	    f->nodes[switch_node].type != IMC_NODE_SWITCH ||
	    !imc_lid_is_mcast(mlid))
		return -EINVAL;
	e = mft_find(f, switch_node, mlid);
	if (e)
		*ports = e->mask;
	else
		memset(ports, 0, sizeof(*ports));
	return 0;
}

/* ---- QPs ---- */

int imc_qp_create(struct imc_fabric *f, uint32_t node, unsigned port,
		  uint32_t qpn, uint32_t qkey, uint16_t pkey,
		  imc_qp_recv_fn *recv, void *ctx, struct imc_qp **out)
{
	struct hport *h = hca_port(f, node, port);
	struct imc_qp *qp;
	unsigned i;

	*out = NULL;
	if (!h || !recv || qpn >= IMC_MCAST_QPN)
		return -EINVAL;
	for (i = 0; i < h->npkeys && h->pkeys[i] != pkey; i++)
		;
	if (i == h->npkeys)
		return -EINVAL;
	if (qpn == 0) {
		/* From 2 up; wraps below the multicast QPN. */
		for (uint32_t tries = 0;; tries++) {
			if (tries >= IMC_MCAST_QPN - 2)
				return -ENOSPC;
			qpn = h->next_qpn;
			h->next_qpn = qpn + 1 < IMC_MCAST_QPN ? qpn + 1 : 2;
			if (!qp_find(f, h->port, qpn))
				break;
		}
	} else if (qp_find(f, h->port, qpn)) {
		return -EBUSY;
	}
	qp = zalloc64(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->f = f;
	qp->rq = qp->rq_inline;
	qp->rq_cap = RQ_INLINE;
	qp->port = h->port;
	qp->qpn = qpn;
	/* IBA 13.5: the GSI's Q_Key is fixed. */
	qp->qkey = qpn == IMC_QP1 ? IMC_QP1_QKEY : qkey;
	qp->pkey = pkey;
	qp->recv = recv;
	qp->ctx = ctx;
	imc_timer_init(&qp->done, done_fire);
	ht_add(&f->qps, &qp->hl, qp_hash(h->port, qpn));
	qp->prev = f->qp_tail;
	if (f->qp_tail)
		f->qp_tail->next = qp;
	else
		f->qp_head = qp;
	f->qp_tail = qp;
	*out = qp;
	return 0;
}

static void att_del(struct imc_fabric *f, struct att *a)
{
	struct mgrp *g = a->g;

	g->port->mc_qp = NULL;

	if (a->prev)
		a->prev->next = a->next;
	else
		g->head = a->next;
	if (a->next)
		a->next->prev = a->prev;
	else
		g->tail = a->prev;
	if (!g->head) {
		ht_del(&f->grps, &g->hl);
		free(g);
	}
	free(a);
}

/* Frees qp and what it holds; received datagrams whose callback has not
 * run count as NO_QP drops, as those still in flight will. */
static void qp_free(struct imc_qp *qp)
{
	struct imc_fabric *f = qp->f;

	if (f->cur_qp == qp)
		f->cur_qp = NULL;
	imc_timer_cancel(f->loop, &qp->done);
	while (qp->rq_len)
		drop(f, rq_pop(qp), qp->port, IMC_DROP_NO_QP);
	if (qp->rq != qp->rq_inline)
		free(qp->rq);
	while (qp->atts) {
		struct att *a = qp->atts;

		qp->atts = a->qnext;
		att_del(f, a);
	}
	ht_del(&f->qps, &qp->hl);
	if (qp->prev)
		qp->prev->next = qp->next;
	else
		f->qp_head = qp->next;
	if (qp->next)
		qp->next->prev = qp->prev;
	else
		f->qp_tail = qp->prev;
	free(qp);
}

void imc_qp_destroy(struct imc_qp *qp)
{
	if (qp)
		qp_free(qp);
}

uint32_t imc_qp_num(const struct imc_qp *qp)
{
	return qp->qpn;
}

void imc_qp_set_recv_delay(struct imc_qp *qp, imc_time_t delay)
{
	qp->recv_delay = delay;
}

int imc_qp_set_qkey(struct imc_qp *qp, uint32_t qkey)
{
	if (qp->qpn == IMC_QP1)
		return -EINVAL;
	qp->qkey = qkey;
	return 0;
}

uint32_t imc_qp_qkey(const struct imc_qp *qp)
{
	return qp->qkey;
}

/* The completion timer: runs recv for every datagram queued. A callback
 * may destroy its own QP; qp_free then clears f->cur_qp and the loop
 * stops without touching qp again. */
static void recv_of(const struct pkt *p, struct imc_ud_recv *r)
{
	r->src_qp = p->sqpn;
	r->slid = p->slid;
	r->dlid = p->dlid;
	r->sl = p->sl;
	r->pkey = p->pkey;
	r->has_grh = p->has_grh;
	if (p->has_grh) {
		r->sgid = p->sgid;
		r->dgid = p->dgid;
	} else {
		memset(&r->sgid, 0, sizeof(r->sgid));
		memset(&r->dgid, 0, sizeof(r->dgid));
	}
	r->flow_label = p->has_grh ? p->flow_label : 0;
	r->tclass = p->has_grh ? p->tclass : 0;
	r->hop_limit = p->has_grh ? p->hop_limit : 0;
	r->data = p->data;
	r->len = p->len;
}

static void done_fire(struct imc_timer *t)
{
	struct imc_qp *qp = imc_container_of(t, struct imc_qp, done);
	struct imc_fabric *f = qp->f;

	while (qp->rq_len) {
		struct pkt *p = rq_pop(qp);
		struct imc_ud_recv r;
		bool gone;

		recv_of(p, &r);
		f->tot.delivered++;
		if (p->dqpn <= 1)
			f->tot.mad_delivered++;
		trace(f, imc_loop_now(f->loop), TR_DELIVER, qp->port,
		      p->serial);
		f->cur_qp = qp;
		qp->recv(qp, &r, qp->ctx);
		gone = f->cur_qp != qp;
		f->cur_qp = NULL;
		pkt_unref(f, p);
		if (gone)
			return;
	}
}

static uint32_t wire_size(bool grh, size_t len)
{
	return (uint32_t)(IMC_LRH_SIZE + (grh ? IMC_GRH_SIZE : 0) +
			  IMC_BTH_SIZE + IMC_DETH_SIZE + ((len + 3) & ~(size_t)3) +
			  IMC_ICRC_SIZE + IMC_VCRC_SIZE);
}

int imc_qp_send(struct imc_qp *qp, const struct imc_ah *ah,
		uint32_t remote_qpn, uint32_t remote_qkey, const void *data,
		size_t len)
{
	struct imc_fabric *f = qp->f;
	struct port *po = qp->port;
	bool mcast;
	struct pkt *p;
	imc_time_t now;

	if (!ah || (len && !data) || ah->dlid == 0 ||
	    ah->dlid == IMC_LID_PERMISSIVE || ah->sl > 15 ||
	    remote_qpn > IMC_QPN_MAX ||
	    (ah->has_grh && ah->flow_label > 0xfffff))
		return -EINVAL;
	mcast = imc_lid_is_mcast(ah->dlid);
	/* IBA 10.5: multicast needs a GRH and DestQP 0xFFFFFF; unicast
	 * never goes to 0xFFFFFF. */
	if (mcast ? !ah->has_grh || remote_qpn != IMC_MCAST_QPN :
		    remote_qpn == IMC_MCAST_QPN)
		return -EINVAL;
	if (po->state != IMC_PORT_ACTIVE)
		return -ENETDOWN;
	if (len > po->mtu_bytes) {
		count_drop(f, po, IMC_DROP_MTU, f->serial);
		return -EMSGSIZE;
	}
	p = pkt_new(f, len);
	if (!p)
		return -ENOMEM;
	if (len)
		memcpy(p->data, data, len);
	p->serial = ++f->serial;
	p->len = (uint32_t)len;
	p->wire = (uint16_t)wire_size(ah->has_grh, len);
	p->dqpn = remote_qpn;
	p->sqpn = qp->qpn;
	p->qkey = remote_qkey;
	p->psn = qp->psn;
	qp->psn = (qp->psn + 1) & 0xffffff;
	p->dlid = ah->dlid;
	p->slid = po->lid;
	p->pkey = qp->pkey;
	p->sl = ah->sl;
	p->has_grh = ah->has_grh;
	if (ah->has_grh) {
		p->tclass = ah->tclass;
		p->hop_limit = ah->hop_limit;
		p->flow_label = ah->flow_label;
		port_gid(f, po, &p->sgid);
		p->dgid = ah->dgid;
	} else {
		p->tclass = 0;
		p->hop_limit = 0;
		p->flow_label = 0;
		memset(&p->sgid, 0, sizeof(p->sgid));
		memset(&p->dgid, 0, sizeof(p->dgid));
	}
	now = imc_loop_now(f->loop);
	if (!mcast && ah->dlid == po->lid) {
		/* Loopback: to our own LID, no cable crossed. */
		struct pend *e = pend_get(f);

		if (!e || imc_timer_arm(f->loop, &e->t, now)) {
			if (e)
				pend_put(f, e);
			pkt_unref(f, p);
			return -ENOMEM;
		}
		e->p = p;
		e->to = po;
		e->dir = NULL;
		pend_state(e, PEND_LOOP);
		pend_link(&f->loops, e);
		f->tot.sent++;
		f->tot.mad_sent += remote_qpn <= 1;
		trace(f, now, TR_SEND, po, p->serial);
		return 0;
	}
	f->tot.sent++;
	f->tot.mad_sent += remote_qpn <= 1;
	trace(f, now, TR_SEND, po, p->serial);
	/* A multicast sender's own port gets no copy back: the fabric never
	 * sends a packet out of the port it came in on (IBA 18.2.4.4). */
	xmit(f, p, po, now);
	return 0;
}

static int attach_args(struct imc_qp *qp, const struct imc_gid *mgid,
		       uint16_t mlid)
{
	if (!qp || !mgid || !imc_lid_is_mcast(mlid) || mgid->raw[0] != 0xff)
		return -EINVAL;
	return 0;
}

int imc_qp_attach(struct imc_qp *qp, const struct imc_gid *mgid,
		  uint16_t mlid)
{
	struct imc_fabric *f;
	struct mgrp *g;
	struct att *a;
	int err = attach_args(qp, mgid, mlid);

	if (err)
		return err;
	f = qp->f;
	g = grp_find(f, qp->port, mlid, mgid);
	if (g) {
		for (a = g->head; a; a = a->next)
			if (a->qp == qp)
				return -EEXIST;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g) {
			free(a);
			return -ENOMEM;
		}
		g->port = qp->port;
		g->mlid = mlid;
		g->mgid = *mgid;
		ht_add(&f->grps, &g->hl, grp_hash(qp->port, mlid, mgid));
	}
	qp->port->mc_qp = NULL;
	a->g = g;
	a->qp = qp;
	a->prev = g->tail;
	if (g->tail)
		g->tail->next = a;
	else
		g->head = a;
	g->tail = a;
	a->qnext = qp->atts;
	qp->atts = a;
	return 0;
}

int imc_qp_detach(struct imc_qp *qp, const struct imc_gid *mgid,
		  uint16_t mlid)
{
	struct att **pp;
	int err = attach_args(qp, mgid, mlid);

	if (err)
		return err;
	for (pp = &qp->atts; *pp; pp = &(*pp)->qnext) {
		struct att *a = *pp;

		if (a->g->mlid == mlid &&
		    !memcmp(&a->g->mgid, mgid, sizeof(*mgid))) {
			*pp = a->qnext;
			att_del(qp->f, a);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- counters, capture, determinism ---- */

int imc_fabric_port_counters(const struct imc_fabric *f, uint32_t node,
			     unsigned port, struct imc_port_counters *out)
{
	const struct port *p = port_at(f, node, port);

	if (!p || (port == 0 && f->nodes[node].type == IMC_NODE_HCA))
		return -EINVAL;
	*out = p->c;
	return 0;
}

int imc_fabric_link_counters(const struct imc_fabric *f, uint32_t node,
			     unsigned port, struct imc_link_counters *out)
{
	const struct port *p = port_at(f, node, port);

	if (!p || port == 0 || !p->out)
		return -EINVAL;
	*out = p->out->c;
	return 0;
}

void imc_fabric_totals(const struct imc_fabric *f,
		       struct imc_fabric_totals *out)
{
	*out = f->tot;
}

int imc_fabric_capture(struct imc_fabric *f, struct imc_pcap *p,
		       uint32_t node, unsigned port)
{
	if (p && node != IMC_TOPO_NONE &&
	    (!port_at(f, node, port) || port == 0))
		return -EINVAL;
	if (p && f->cap)
		return -EBUSY;
	f->cap = p;
	f->cap_node = node;
	f->cap_port = port;
	return 0;
}

uint64_t imc_fabric_trace_hash(const struct imc_fabric *f)
{
	return f->hash;
}

/* ---- for the SMA and SMP transport (fabric_int.h) ---- */

int fab_port_view(const struct imc_fabric *f, uint32_t node, unsigned port,
		  struct fab_port_view *v)
{
	const struct port *p = port_at(f, node, port);
	const struct imc_topo_port *tp;

	if (!p)
		return -EINVAL;
	tp = &f->topo->node[node].port[port];
	v->type = p->node->type;
	v->nports = p->node->nports;
	v->gidx = p->gidx;
	v->state = p->state;
	v->lid = p->lid;
	v->sm_lid = p->sm_lid;
	v->mtu = p->mtu;
	v->width = tp->width ? tp->width : 4;
	v->cabled = p->out != NULL;
	v->link_up = p->out && p->out->up;
	v->peer_node = p->out ? p->out->to->node->idx : IMC_TOPO_NONE;
	v->peer_port = p->out ? p->out->to->num : 0;
	v->latency = p->out ? p->out->latency : 0;
	return 0;
}

uint32_t fab_nports_total(const struct imc_fabric *f)
{
	return f->nports;
}

struct fab_mad *fab_mad_of(const struct imc_fabric *f)
{
	return f->mad;
}

bool fab_external_sm(const struct imc_fabric *f)
{
	return f->cfg.external_sm;
}

int fab_port_state_set(struct imc_fabric *f, uint32_t node, unsigned port,
		       enum imc_port_state s)
{
	struct port *p = port_at(f, node, port);

	if (!p)
		return -EINVAL;
	if (s == IMC_PORT_DOWN) {
		/* The link goes down and trains again (IBA 14.2.5.6: a Set
		 * to Down): both ends pass through DOWN back to INIT while
		 * the cable is up. */
		struct port *peer = p->out ? p->out->to : NULL;

		port_state(f, p, IMC_PORT_DOWN);
		if (peer)
			port_state(f, peer, IMC_PORT_DOWN);
		if ((p->out && p->out->up) || port == 0)
			port_state(f, p, IMC_PORT_INIT);
		if (peer && p->out->up)
			port_state(f, peer, IMC_PORT_INIT);
		return 0;
	}
	if (p->state == s)
		return 0;
	if ((s == IMC_PORT_ARMED && p->state != IMC_PORT_INIT) ||
	    (s == IMC_PORT_ACTIVE && p->state != IMC_PORT_ARMED) ||
	    s == IMC_PORT_INIT)
		return -EINVAL;
	port_state(f, p, s);
	return 0;
}

int fab_port_lid_set(struct imc_fabric *f, uint32_t node, unsigned port,
		     uint16_t lid)
{
	struct port *p = port_at(f, node, port);
	struct node *n;
	uint16_t old;

	if (!p || lid > IMC_LID_UNICAST_MAX)
		return -EINVAL;
	n = p->node;
	if (n->type == IMC_NODE_SWITCH)
		p = &n->port[0];
	old = p->lid;
	if (old == lid)
		return 0;
	if (f->lid_port) {
		/* An SMA cannot know whether another port holds lid (an SM
		 * swapping two LIDs sets one before the other): the LID
		 * lookup names the port set last. */
		if (old && f->lid_port[old] == p->gidx + 1)
			f->lid_port[old] = 0;
		if (lid)
			f->lid_port[lid] = p->gidx + 1;
	}
	if (n->type == IMC_NODE_SWITCH) {
		n->lid = lid;
		for (unsigned i = 0; i <= n->nports; i++)
			n->port[i].lid = lid;
		/* The management port is up once the SM knows it. */
		if (lid)
			port_state(f, &n->port[0], IMC_PORT_ACTIVE);
		return 0;
	}
	p->lid = lid;
	if (p->state == IMC_PORT_ACTIVE)
		post(f, p->h, IMC_PORT_EV_LID_CHANGE);
	return 0;
}

int fab_port_sm_lid_set(struct imc_fabric *f, uint32_t node, unsigned port,
			uint16_t sm_lid)
{
	struct port *p = port_at(f, node, port);

	if (!p)
		return -EINVAL;
	if (p->sm_lid == sm_lid)
		return 0;
	p->sm_lid = sm_lid;
	if (p->h && p->state == IMC_PORT_ACTIVE)
		post(f, p->h, IMC_PORT_EV_SM_CHANGE);
	return 0;
}

void fab_port_post(struct imc_fabric *f, uint32_t node, unsigned port,
		   enum imc_port_event ev)
{
	struct hport *h = hca_port(f, node, port);

	if (h)
		post(f, h, ev);
}

int fab_port_pkeys(const struct imc_fabric *f, uint32_t node, unsigned port,
		   uint16_t *pkeys, unsigned *n)
{
	const struct hport *h = hca_port(f, node, port);

	if (!h) {
		pkeys[0] = IMC_PKEY_DEFAULT;
		*n = 1;
		return 0;
	}
	memcpy(pkeys, h->pkeys, h->npkeys * sizeof(pkeys[0]));
	*n = h->npkeys;
	return 0;
}

int fab_lft_block_get(const struct imc_fabric *f, uint32_t sw, unsigned block,
		      uint8_t out[64])
{
	const struct node *n;
	size_t base = (size_t)block * IMC_LFT_BLOCK;

	if (sw >= f->nnodes || f->nodes[sw].type != IMC_NODE_SWITCH)
		return -EINVAL;
	n = &f->nodes[sw];
	for (unsigned i = 0; i < IMC_LFT_BLOCK; i++)
		out[i] = base + i < n->lft_len ? n->lft[base + i] :
						 IMC_PORT_NONE;
	return 0;
}

int fab_lft_block_set(struct imc_fabric *f, uint32_t sw, unsigned block,
		      const uint8_t in[64])
{
	struct node *n;
	size_t base = (size_t)block * IMC_LFT_BLOCK;

	if (sw >= f->nnodes || f->nodes[sw].type != IMC_NODE_SWITCH ||
	    base + IMC_LFT_BLOCK > IMC_LID_UNICAST_MAX + 1)
		return -EINVAL;
	n = &f->nodes[sw];
	if (base + IMC_LFT_BLOCK > n->lft_len) {
		uint8_t *nl = realloc(n->lft, base + IMC_LFT_BLOCK);

		if (!nl)
			return -ENOMEM;
		memset(nl + n->lft_len, IMC_PORT_NONE,
		       base + IMC_LFT_BLOCK - n->lft_len);
		n->lft = nl;
		n->lft_len = base + IMC_LFT_BLOCK;
	}
	memcpy(n->lft + base, in, IMC_LFT_BLOCK);
	return 0;
}

void fab_trace(struct imc_fabric *f, unsigned ev, uint32_t gidx,
	       uint64_t serial)
{
	trace(f, imc_loop_now(f->loop), ev, &f->ports[gidx], serial);
}

/* A GMP from node:port: an HCA port sends it out of itself, a switch's
 * port 0 by its LFT; to its own LID it loops back. */
int fab_gmp_send(struct imc_fabric *f, uint32_t node, unsigned port,
		 const struct imc_fabric_mad_addr *to, const uint8_t *mad,
		 size_t len)
{
	struct port *po = port_at(f, node, port);
	struct port *out = po;
	imc_time_t now = imc_loop_now(f->loop);
	struct pkt *p;

	if (!po || !to || to->dlid == 0 || imc_lid_is_mcast(to->dlid) ||
	    to->dlid == IMC_LID_PERMISSIVE || to->dqp > IMC_QP1 ||
	    len > BUF_LARGE)
		return -EINVAL;
	if (po->node->type == IMC_NODE_SWITCH && to->dlid != po->lid) {
		unsigned o = to->dlid < po->node->lft_len ?
			     po->node->lft[to->dlid] : IMC_PORT_NONE;

		if (o == 0 || o > po->node->nports)
			return -ENETDOWN;
		out = &po->node->port[o];
	}
	if (out->state != IMC_PORT_ACTIVE || !po->lid)
		return -ENETDOWN;
	if (len > out->mtu_bytes)
		return -EMSGSIZE;
	p = pkt_new(f, len);
	if (!p)
		return -ENOMEM;
	memcpy(p->data, mad, len);
	p->serial = ++f->serial;
	p->len = (uint32_t)len;
	p->wire = (uint16_t)wire_size(false, len);
	p->dqpn = to->dqp;
	p->sqpn = IMC_QP1;
	p->qkey = to->qkey ? to->qkey : IMC_QP1_QKEY;
	p->psn = 0;
	p->dlid = to->dlid;
	p->slid = to->slid ? to->slid : po->lid;
	p->pkey = to->pkey ? to->pkey : IMC_PKEY_DEFAULT;
	p->sl = to->sl & 15;
	p->has_grh = false;
	p->tclass = 0;
	p->hop_limit = 0;
	p->flow_label = 0;
	memset(&p->sgid, 0, sizeof(p->sgid));
	memset(&p->dgid, 0, sizeof(p->dgid));
	f->tot.sent++;
	f->tot.mad_sent++;
	trace(f, now, TR_SEND, po, p->serial);
	if (to->dlid == po->lid) {
		struct pend *e = pend_get(f);

		if (!e || imc_timer_arm(f->loop, &e->t, now)) {
			if (e)
				pend_put(f, e);
			pkt_unref(f, p);
			return -ENOMEM;
		}
		e->p = p;
		e->to = po;
		e->dir = NULL;
		pend_state(e, PEND_LOOP);
		pend_link(&f->loops, e);
		return 0;
	}
	egress(f, p, out, now);
	return 0;
}
